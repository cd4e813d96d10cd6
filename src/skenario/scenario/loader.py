"""Reading scenario files (and the manifests they point at): YAML in, a validated model out, or one clear error.

Every error names the file, the line, the field path as the user wrote it (`spec.traffic.rate`)
and the offending value; pydantic's union tags are taken out of the path.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from skenario.errors import ScenarioError
from skenario.scenario.schema import Scenario

M = TypeVar("M", bound=BaseModel)


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file."""
    return load_document(path, Scenario, "a scenario is a mapping with apiVersion, kind, metadata and spec")


def parse_scenario(text: str, source: str = "<scenario>") -> Scenario:
    """Validate a scenario given as YAML text; `source` names it in errors."""
    return parse_document(text, Scenario, source, "a scenario is a mapping with apiVersion, kind, metadata and spec")


def load_document(path: str | Path, model: type[M], shape: str) -> M:
    """Read and validate one YAML document (a scenario, or a manifest it points at)."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ScenarioError("no such file", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"cannot read the file: {exc}", file=str(path)) from None
    return parse_document(text, model, str(path), shape)


def parse_document(text: str, model: type[M], source: str, shape: str) -> M:
    """Validate YAML text as `model`; errors name `source`, the line, the field and the value."""
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(f"not valid YAML: {problem}", file=source, line=mark.line + 1 if mark else None) from None
    if data is None:
        raise ScenarioError(f"the file is empty; {shape}", file=source)
    if not isinstance(data, dict):
        raise ScenarioError(f"{shape}, not a {type(data).__name__}", file=source)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise _first_problem(exc, data, root, source) from None


def _first_problem(exc: ValidationError, data: Any, root: yaml.Node | None, source: str) -> ScenarioError:
    errors = exc.errors(include_url=False)
    messages = [_describe(error, data) for error in errors]
    first = errors[0]
    path = _user_path(first["loc"], data)
    message = messages[0][1]
    if len(messages) > 1:
        others = "; ".join(f"{field}: {text}" for field, text in messages[1:4])
        more = f" (and {len(messages) - 4} more)" if len(messages) > 4 else ""
        message += f" — also {others}{more}"
    value = first.get("input") if first["type"] not in ("missing", "extra_forbidden") else None
    if first["type"] == "extra_forbidden":
        value = None
    return ScenarioError(
        message,
        file=source,
        field=".".join(str(p) for p in path) or "(top level)",
        value=value if not isinstance(value, dict | list) else None,
        line=_line_of(root, path),
    )


def _describe(error: Any, data: Any) -> tuple[str, str]:
    path = ".".join(str(p) for p in _user_path(error["loc"], data)) or "(top level)"
    kind = error["type"]
    if kind == "missing":
        text = "is required but missing"
    elif kind == "extra_forbidden":
        text = "is not a known field"
    elif kind == "literal_error" and path == "apiVersion":
        text = f"must be 'skenario.dev/v1alpha1', got {error['input']!r}"
    else:
        text = str(error["msg"])
        if text.startswith("Value error, "):
            text = text[len("Value error, ") :]
        text = text[:1].lower() + text[1:]
        if "value" not in text and not isinstance(error.get("input"), dict | list):
            text += f" (value: {error['input']!r})"
    return path, text


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


def _line_of(root: yaml.Node | None, path: list[int | str]) -> int | None:
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
