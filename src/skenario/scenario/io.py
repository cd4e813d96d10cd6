"""YAML in, a validated pydantic model out, or one clear error: the I/O every file format of skenario shares.

A leaf: it imports only `skenario.errors`, yaml and pydantic, so the scenario format, the loader,
the queueing model files and the run store's readers all use it from the top of their modules.
Every error names the file, the line, the field path as the user wrote it (`spec.traffic.rate`)
and the offending value; pydantic's union tags are taken out of the path.

Reading is bounded, so a hostile file is one line, not minutes and gigabytes: only regular files
(no devices, FIFOs or folders) of at most `MAX_FILE_BYTES`, YAML of at most `MAX_YAML_BYTES`, and
a document's aliases may not expand it past `MAX_ALIAS_NODES` nodes beyond those written (the
"billion laughs"; Kubernetes' YAML decoder refuses excessive aliasing the same way).
"""

from __future__ import annotations

import os
import reprlib
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from skenario.errors import ScenarioError, SkenarioError

M = TypeVar("M", bound=BaseModel)
E = TypeVar("E", bound=SkenarioError)

Rename = Callable[[list[int | str]], list[int | str]]
"""A field path of the document validated as the path the user wrote (a manifest converted from another version)."""


MAX_FILE_BYTES = 256 * 2**20
"""The largest file skenario reads whole (a scenario, a manifest, an export, a recording): 256 MiB."""
MAX_YAML_BYTES = 32 * 2**20
"""The largest YAML text it parses: PyYAML reads about 1 MB/s, so 32 MiB is half a minute already."""
MAX_ALIAS_NODES = 100_000
"""How many nodes a document's aliases may add to those written (or ten times those, if more)."""


def read_text(path: str | Path) -> str:
    """The file's text (UTF-8); a missing, unreadable, special or too large file is a ScenarioError naming it."""
    path = Path(path)
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # before opening: opening a pipe waits for its writer
            raise ScenarioError("not a regular file (a device, a pipe or a folder)", file=str(path))
        with path.open("rb") as file:
            data = file.read(MAX_FILE_BYTES + 1)  # a file growing as it is read stops here too
    except FileNotFoundError:
        raise ScenarioError("no such file", file=str(path)) from None
    except OSError as exc:
        raise ScenarioError(f"cannot read the file: {exc}", file=str(path)) from None
    if len(data) > MAX_FILE_BYTES:
        raise ScenarioError(f"larger than {MAX_FILE_BYTES // 2**20} MiB, the most skenario reads", file=str(path))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"cannot read the file: {exc}", file=str(path)) from None


def file_problem(path: Path, what: str) -> str | None:
    """What keeps `path` from being read as `what` (a manifest file...), said the user's way; None if nothing."""
    try:
        if path.is_file():
            return None
        if path.is_dir():
            return f"is a folder, not a {what}"
        if path.exists():
            return f"is not a regular file (a device or a pipe), not a {what}"
    except OSError as exc:  # a name too long, a folder it may not look in: what `is_file` does not take as no
        return f"cannot be read as a {what}: {exc.strerror or exc}"
    return f"no such {what}"


def load_document(path: str | Path, model: type[M], shape: str) -> M:
    """Read and validate one YAML document (a manifest a scenario points at)."""
    return parse_document(read_text(path), model, str(path), shape)


def read_document(path: str | Path, shape: str) -> tuple[Any, yaml.Node | None]:
    """The one YAML document of a file, with its node tree, for a reader of its own to validate."""
    return one_document(read_text(path), str(path), shape)


def one_document(text: str, source: str, shape: str) -> tuple[Any, yaml.Node | None]:
    """The one YAML document of the text, with its node tree; more or fewer is an error naming `source`."""
    documents = yaml_documents(text, source)
    if len(documents) != 1:
        raise ScenarioError(f"expected one YAML document, found {len(documents)}; {shape}", file=source)
    return documents[0]


def parse_document(text: str, model: type[M], source: str, shape: str) -> M:
    """Validate YAML text as `model`; errors name `source`, the line, the field and the value."""
    data, root = one_document(text, source, shape)
    return _validate(data, root, model, source, shape)


def validate_document(data: Any, model: type[M], source: str, shape: str) -> M:
    """Validate data already read (an inline manifest); errors name `source`, the field and the value."""
    return _validate(data, None, model, source, shape)


def validate_node(
    data: Any, root: yaml.Node | None, model: type[M], source: str, shape: str, rename: Rename | None = None
) -> M:
    """Validate one document of a file already read, with its node tree for line numbers.

    `data` may be made from the document `root` holds (a manifest converted from an older version):
    `rename` then maps its field paths to those the user wrote, for the error and its line.
    """
    return _validate(data, root, model, source, shape, rename)


Documents = list[tuple[Any, "yaml.Node | None"]]
"""A file's YAML documents, each with its node tree (for line numbers): what `yaml_documents` reads."""


def yaml_documents(text: str, source: str) -> Documents:
    """Each non-empty document of the text with its node tree (for line numbers)."""
    if len(text) > MAX_YAML_BYTES:
        raise ScenarioError(f"larger than {MAX_YAML_BYTES // 2**20} MiB, the most skenario reads as YAML", file=source)
    datas: list[Any] = []
    roots: list[yaml.Node | None] = []
    loader = None
    try:
        loader = _Loader(text)  # reads the text at once: a control character is a ReaderError here
        while loader.check_node():
            roots.append(loader.get_node())
            _refuse_alias_bombs(roots[-1], source)
            datas.append(loader.construct_document(roots[-1]))
    except yaml.reader.ReaderError as exc:
        problem = f"{exc.reason} (character {exc.character!r} at position {exc.position})"
        raise ScenarioError(f"not valid YAML: {problem}", file=source) from None
    except _Unreadable as exc:
        path = _path_to(roots[-1], exc.node)
        raise ScenarioError(
            f"not valid YAML: {exc.problem}",
            file=source,
            line=exc.node.start_mark.line + 1,
            field=".".join(path) if path else None,
        ) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise ScenarioError(f"not valid YAML: {problem}", file=source, line=mark.line + 1 if mark else None) from None
    except RecursionError:
        raise ScenarioError("not valid YAML for a scenario: it nests too deeply", file=source) from None
    finally:
        if loader is not None:
            loader.dispose()
    for root in roots:
        _refuse_duplicate_keys(root, [], source)
    documents: list[tuple[Any, yaml.Node | None]] = [
        (data, root) for data, root in zip(datas, roots, strict=True) if data is not None
    ]
    if not documents:
        raise ScenarioError("the file is empty", file=source)
    return documents


def _refuse_alias_bombs(root: yaml.Node | None, source: str) -> None:
    """Refuse a document whose aliases expand it past `MAX_ALIAS_NODES` more nodes than were written.

    Aliases share their anchor's node, so the composed document stays small; it is every reader
    after it (validation, a message quoting the value) that would walk it expanded. Each node's
    expanded size is counted once, bottom up, so the count costs what the written nodes do."""
    if root is None:
        return
    size: dict[int, int] = {}
    written: set[int] = set()  # entered: a node entered and not yet sized is on the path being walked
    stack: list[tuple[yaml.Node, bool, tuple[str, ...]]] = [(root, False, ())]
    while stack:
        node, children_done, path = stack.pop()
        if id(node) in size:
            continue
        children = _children(node)
        if not children_done:
            if id(node) in written:  # an alias of a node that holds it: `&a [*a]`
                raise ScenarioError(
                    "an alias refers to a node that holds it, so the document never ends",
                    file=source,
                    line=node.start_mark.line + 1,
                    field=".".join(path) or None,
                )
            written.add(id(node))
            stack.append((node, True, path))
            stack.extend((child, False, (*path, step)) for step, child in children if id(child) not in size)
            continue
        size[id(node)] = 1 + sum(size[id(child)] for _, child in children)
    extra = size[id(root)] - len(written)
    if extra > max(MAX_ALIAS_NODES, 10 * len(written)):
        raise ScenarioError(
            f"its aliases would expand it by {extra:,} nodes to {len(written):,} written; skenario takes at most "
            f"{max(MAX_ALIAS_NODES, 10 * len(written)):,} (a YAML alias bomb?)",
            file=source,
            line=root.start_mark.line + 1,
        )


def _children(node: yaml.Node) -> list[tuple[str, yaml.Node]]:
    """A node's children, each with the step of a field path that reaches it (a key names its value too)."""
    if isinstance(node, yaml.SequenceNode):
        return [(str(i), child) for i, child in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        steps = [str(key.value) if isinstance(key, yaml.ScalarNode) else "?" for key, _ in node.value]
        return [(step, part) for step, pair in zip(steps, node.value, strict=True) for part in pair]
    return []


class _Unreadable(yaml.YAMLError):
    """A scalar YAML could scan but not build (`2001-13-45`, `!!int x`, an integer of 5,000 digits)."""

    def __init__(self, node: yaml.Node, problem: str) -> None:
        super().__init__(problem)
        self.node, self.problem = node, problem


class _Loader(yaml.SafeLoader):
    """PyYAML's safe loader, whose constructors' own exceptions become one `_Unreadable` naming the node.

    PyYAML lets a constructor's ValueError, KeyError or AttributeError through as they are: a bad
    date (`month must be in 1..12`), `!!bool x` (`KeyError: 'x'`), `!!timestamp x`, or Python's
    limit of 4,300 digits for an integer (whose message suggests `sys.set_int_max_str_digits()`).
    """

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (yaml.YAMLError, RecursionError):
            raise
        except Exception as exc:  # a constructor fails only on what the user wrote
            raise _Unreadable(node, _unreadable(node, exc)) from None


_WANTS = {"int": "an integer", "float": "a number", "bool": "true or false", "timestamp": "a date such as 2001-12-14"}


def _unreadable(node: yaml.Node, exc: Exception) -> str:
    """What is wrong with the scalar, in words (not the constructor's `'NoneType' object has no attribute`)."""
    kind = node.tag.rpartition(":")[2]
    if not isinstance(node.value, str):
        return f"this {kind} cannot be read: {exc}"
    written = node.value
    shown = repr(written) if len(written) <= 40 else f"{written[:20]!r}… ({len(written):,} characters)"
    if "digits" in str(exc):  # Python's int() stops at 4,300 digits
        return f"{shown} has more digits than a number read from YAML may"
    detail = f" ({exc})" if kind == "timestamp" and isinstance(exc, ValueError) and str(exc) else ""
    return f"{shown} is not {_WANTS.get(kind, f'a YAML {kind}')}{detail}"


def _path_to(root: yaml.Node | None, target: yaml.Node) -> list[str] | None:
    """The keys and indexes leading from `root` to `target` (a key node counts as its mapping's place)."""
    stack: list[tuple[yaml.Node | None, list[str]]] = [(root, [])]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if node is target:
            return path
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                name = str(key.value) if isinstance(key, yaml.ScalarNode) else "?"
                if key is target:
                    return path
                stack.append((value, [*path, name]))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, [*path, str(i)]) for i, item in enumerate(node.value))
    return None


def _validate(
    data: Any, root: yaml.Node | None, model: type[M], source: str, shape: str, rename: Rename | None = None
) -> M:
    if not isinstance(data, dict):
        raise ScenarioError(f"{shape}, not a {type(data).__name__}", file=source)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _first_problem(exc, data, root, source, rename) from None
    except RecursionError:
        raise ScenarioError(f"{shape}; this one nests too deeply", file=source) from None


def describe_problem(exc: ValidationError, data: Any, rename: Rename | None = None) -> tuple[list[int | str], str, Any]:
    """The first problem of a validation error: the field path as the user wrote it, a message, the value.

    `rename` maps the paths of `data` to those of the document the user wrote, when `data` was made from it.
    """
    errors = exc.errors(include_url=False)
    messages = [_describe(error, data, rename) for error in errors]
    first = errors[0]
    path = _user_path(first["loc"], data)
    if rename is not None:
        path = rename(path)
    message = messages[0][1]
    if len(messages) > 1:
        others = "; ".join(f"{field}: {text}" for field, text in messages[1:4])
        more = f" (and {len(messages) - 4} more)" if len(messages) > 4 else ""
        message += f" — also {others}{more}"
    value = first.get("input") if first["type"] not in ("missing", "extra_forbidden") else None
    return path, message, value if not isinstance(value, dict | list) else None


def _first_problem(
    exc: ValidationError, data: Any, root: yaml.Node | None, source: str, rename: Rename | None = None
) -> ScenarioError:
    path, message, value = describe_problem(exc, data, rename)
    return ScenarioError(
        message,
        file=source,
        field=".".join(str(p) for p in path) or "(top level)",
        value=value,
        line=line_of(root, path),
    )


def _describe(error: Any, data: Any, rename: Rename | None = None) -> tuple[str, str]:
    where = _user_path(error["loc"], data)
    path = ".".join(str(p) for p in (rename(where) if rename is not None else where)) or "(top level)"
    kind = error["type"]
    if kind == "missing":
        text = "is required but missing"
    elif kind == "extra_forbidden":
        text = "is not a known field"
    elif kind == "literal_error":  # the values the model takes, as pydantic lists them ("'a' or 'b'")
        text = f"must be {error['ctx']['expected']}, got {_brief(error['input'])}"
    else:
        text = _PLAIN.get(kind) or str(error["msg"])
        if kind == "union_tag_not_found":  # pydantic: "Unable to extract tag using discriminator 'type'"
            text = f"needs {error['ctx']['discriminator']} to say which kind it is"
        if text.startswith("Value error, "):
            text = text[len("Value error, ") :]
        text = text[:1].lower() + text[1:]
        if "value" not in text:
            text += f" (value: {_brief(error['input'])})"
    return path, text


# pydantic's words for a mapping that is something else, which name its classes ("instance of Workload").
_PLAIN = {
    "model_type": "should be a mapping of fields",
    "model_attributes_type": "should be a mapping of fields",
    "dict_type": "should be a mapping",
}


_SHORT = reprlib.Repr()
_SHORT.maxlevel, _SHORT.maxlist, _SHORT.maxdict, _SHORT.maxstring, _SHORT.maxother = 3, 6, 6, 60, 60


def _brief(value: Any) -> str:
    """The value's repr, cut short if long (a list of lists, a 4,000-digit number): the error stays readable.
    A container's repr is built cut short (`reprlib`), so a huge one costs no more than a small one."""
    if isinstance(value, list | tuple | dict | set):
        shown = _SHORT.repr(value)
        return shown if len(shown) <= 60 else f"{shown[:40]}…"
    shown = repr(value)
    return shown if len(shown) <= 60 else f"{shown[:40]}… ({len(shown):,} characters)"


def _user_path(loc: tuple[int | str, ...], data: Any) -> list[int | str]:
    """The part of a pydantic location that exists in the user's document (drops union tags)."""
    path: list[int | str] = []
    node = data
    for part in loc:
        if _has(node, part):
            node = node[part]
            path.append(part)
        elif isinstance(node, dict) and part in (node.get("type"), node.get("distribution")):
            continue  # the tag of a discriminated union, named by the user's own value
        elif isinstance(node, dict) and isinstance(part, str) and not _is_tag(part):
            # A missing or unknown key: name it, there is nothing deeper.
            path.append(part)
            node = None
    return path


def _has(node: Any, part: int | str) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node)


def _is_tag(part: str) -> bool:
    return part.startswith(("function-", "tagged-union[", "json-or-python["))


def _refuse_duplicate_keys(node: yaml.Node | None, path: list[str], source: str) -> None:
    """A key written twice in one mapping is an error: YAML loaders silently keep the last."""
    stack = [(node, path)]
    visited: set[int] = set()  # an alias repeats a node (or, recursive, contains it)
    while stack:
        node, path = stack.pop()
        if id(node) in visited:
            continue
        visited.add(id(node))
        if isinstance(node, yaml.MappingNode):
            seen: set[Any] = set()
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                if name is not None and name in seen:
                    where = ".".join([*path, str(name)])
                    raise ScenarioError(
                        f"'{name}' is written twice in the same mapping (YAML would silently keep the last)",
                        file=source,
                        line=key.start_mark.line + 1,
                        field=where,
                    )
                seen.add(name)
                stack.append((value, [*path, str(name)]))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend((item, [*path, str(i)]) for i, item in enumerate(node.value))


def located(exc: E, file: str, text: str) -> E:
    """`exc` with the scenario file and the line of its field, when it names neither file nor line (a trace
    file's TraceError too: it names the field that names the file)."""
    if exc.file is not None or exc.field is None:
        return exc
    parts: list[int | str] = [int(p) if p.isdigit() else p for p in exc.field.split(" ")[0].split(".")]
    try:
        root = yaml.compose(text)
    except yaml.YAMLError:
        root = None
    exc.file, exc.line = file, line_of(root, parts)
    return exc


def line_of(root: yaml.Node | None, path: list[int | str]) -> int | None:
    """The 1-based line where `path` is written, or its nearest written parent."""
    node = root
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            for key, value in node.value:
                if key.value == part:
                    node = value
                    line = key.start_mark.line + 1
                    break
            else:
                return line
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            return line
    return line
