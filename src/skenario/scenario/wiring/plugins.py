"""Loading a user's class named in a scenario: `path/to/file.py:Class` (relative to the scenario) or `module:Class`.

This is the one place user code enters a run, and only where the scenario asks for a plugin by
name and the user pointed at it: a file path written in the scenario, or a module the user allowed
by name (`allowing`, the CLI's `--allow-plugin-module` and `SKENARIO_PLUGIN_MODULES`), so that a
scenario cannot reach into whatever happens to be importable (`logging:FileHandler` opens files).
A module not allowed is refused before it is looked for, let alone imported. A scenario with
plugins runs their code: a plugin file is executed when it is loaded. The named attribute must be
a class defined in that file or module (not one imported into it) with the methods its kind needs,
checked before anything is created or called, so a name such as `os:system` is refused rather
than called. `refused()` (the CLI's `--no-plugins`) turns every plugin down before any of its code
is read. Whatever a plugin raises while it is made, `SystemExit` too, is a `PluginError` naming it
as the user wrote it (`plugin_name`), the method and when (`plugin_failure`).

`unloaded()` (`skenario check`, `run --dry-run`) checks a plugin as far as can be done without
running its code, and puts a stand-in where the instance would go. The checks are those a run
makes first, in the same words, so that check and run agree wherever the code need not run:
the name's form; the module found (without importing it or its packages: the finders are asked,
as `import` asks them) or the file there and readable; its source valid Python; and, read from
its syntax tree, the name bound at its top level, to a class, with the methods its kind needs
when the class has no base to inherit them from. What only the code can say (a name bound by a
star import or made at run time, a base class's methods, whether the options suit the class) is
left to the run. A module already imported (`os`, `collections`) is looked at as it is.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import sys
from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass
from importlib.machinery import ModuleSpec
from pathlib import Path
from typing import Any

from skenario.errors import ScenarioError, ctrl_c_noted, plugin_failure

MODULES_VARIABLE = "SKENARIO_PLUGIN_MODULES"
"""The environment variable the command line reads the allowed plugin modules from (comma-separated)."""


@dataclass(frozen=True)
class PluginPolicy:
    """What the user allowed plugins to be: none at all (`refuse`, `--no-plugins`), or the files the scenario
    names and the `modules` named here (each exactly: allowing a package does not allow its modules). A
    sweep's jobs carry it to their workers."""

    refuse: bool = False
    modules: frozenset[str] = frozenset()


_policy = PluginPolicy()
_unloaded = False
_written: dict[str, str] = {}  # the module made from a plugin file, by its name: the file as the scenario wrote it


def current_policy() -> PluginPolicy:
    return _policy


@contextmanager
def applied(policy: PluginPolicy) -> Iterator[None]:
    """While in it, plugins are loaded under `policy`."""
    global _policy
    before, _policy = _policy, policy
    try:
        yield
    finally:
        _policy = before


def refused() -> AbstractContextManager[None]:
    """While in it, any plugin a scenario names is an error instead of code that runs."""
    return applied(PluginPolicy(True, _policy.modules))


def allowing(modules: Iterable[str]) -> AbstractContextManager[None]:
    """While in it, a `module:Class` plugin may also name these modules (each exactly as written)."""
    return applied(PluginPolicy(_policy.refuse, _policy.modules | {m.strip() for m in modules if m.strip()}))


def modules_of(text: str | None) -> list[str]:
    """The modules a comma-separated list names (SKENARIO_PLUGIN_MODULES's value)."""
    return [name.strip() for name in (text or "").split(",") if name.strip()]


def plugin_name(cls: type) -> str:
    """A plugin class as the user wrote it: `file.py:Class` for a class of a plugin file (not the name of the
    module skenario made of it), `module:Class` otherwise."""
    module = getattr(cls, "__module__", "?")
    return f"{_written.get(module, module)}:{cls.__qualname__}"


@contextmanager
def unloaded() -> Iterator[None]:
    """While in it, a plugin is checked without running its code (see the module's docstring) and
    `load_class` returns a `StandIn`."""
    global _unloaded
    before, _unloaded = _unloaded, True
    try:
        yield
    finally:
        _unloaded = before


class StandIn:
    """Where a plugin's instance goes when it was checked but not loaded: it has the methods asked for,
    and none of them is ever called (nothing runs where it stands)."""

    def __init__(self, plugin: str, methods: tuple[str, ...]) -> None:
        self.plugin = plugin
        for method in methods:
            setattr(self, method, self._never)

    def _never(self, *args: object, **kwargs: object) -> Any:
        raise RuntimeError(f"the plugin {self.plugin} was checked, not loaded: nothing of it runs")


def load_class(
    plugin: str, base_dir: Path, field: str, options: dict[str, Any], methods: tuple[str, ...], any_of: bool = False
) -> Any:
    """An instance of the named class, built with `options` as keyword arguments.

    The class must have all of `methods` (or at least one, with `any_of`); nothing is created
    or called before that is checked. Under `unloaded()`, a `StandIn` once what can be checked
    without the plugin's code is.
    """
    if _policy.refuse:
        raise ScenarioError(
            "plugins are refused (--no-plugins): this scenario would run its code", field=field, value=plugin
        )
    where, colon, name = plugin.rpartition(":")
    dotted = where.endswith(".py") or all(part.isidentifier() for part in where.split("."))
    if not colon or not where or not name.isidentifier() or not dotted:
        raise ScenarioError("name a plugin as 'module:Class' or 'file.py:Class'", field=field, value=plugin)
    if where.endswith(".py"):
        path = base_dir / where
        if not path.is_file():
            raise ScenarioError("no such plugin file", field=field, value=str(path))
        source: Path | None = path
        loaded = None
    else:
        if where not in _policy.modules:
            raise ScenarioError(
                f"the plugin module {where!r} is not allowed (its code would run with your rights): allow it "
                f"with --allow-plugin-module {where} or in ${MODULES_VARIABLE}, or name a file (plugins/mine.py:Class)",
                field=field,
                value=plugin,
            )
        spec = _module_spec(where)
        if spec is None:
            raise ScenarioError(
                f"cannot import the plugin's module: no module named {where!r}", field=field, value=where
            )
        loaded = sys.modules.get(where)
        source = Path(spec.origin) if spec.origin is not None and spec.origin.endswith(".py") else None
    if loaded is None and source is not None:
        _check_source(source, name, methods, any_of, plugin, field)
    if _unloaded and loaded is None:
        return StandIn(plugin, methods)
    module = loaded if loaded is not None else _load(where, base_dir, field)
    cls = getattr(module, name, None)
    if cls is None:
        raise ScenarioError(f"the plugin module has no '{name}'", field=field, value=plugin)
    if not inspect.isclass(cls):
        raise ScenarioError(f"'{name}' is not a class; a plugin is a class", field=field, value=plugin)
    if cls.__module__ != module.__name__:
        raise _not_defined(plugin, field)
    present = [method for method in methods if callable(getattr(cls, method, None))]
    if not (present if any_of else len(present) == len(methods)):
        raise ScenarioError(f"the plugin class needs a method {_needed(methods, any_of)}", field=field, value=plugin)
    if _unloaded:
        return StandIn(plugin, methods)
    try:
        signature: inspect.Signature | None = inspect.signature(cls)
    except (TypeError, ValueError):
        signature = None  # none to read: the call says
    try:
        if signature is not None:
            signature.bind(**options)  # options it does not take are the scenario's mistake, not the plugin's
    except TypeError as exc:
        raise ScenarioError(f"the plugin does not take these options: {exc}", field=field, value=options) from None
    with _while_built(plugin, "__init__", field):
        return cls(**options)


@contextmanager
def _while_built(plugin: str, method: str, field: str) -> Iterator[None]:
    """What the plugin's code raises in the block (`SystemExit` too) is its failure, while the run was built."""
    with ctrl_c_noted():
        try:
            yield
        except BaseException as exc:
            failure = plugin_failure(exc, plugin, method, "while the run was built")
            if failure is None:
                raise
            failure.field = field
            raise failure from exc


def _not_defined(plugin: str, field: str) -> ScenarioError:
    where, _, name = plugin.rpartition(":")
    return ScenarioError(
        f"'{name}' is not defined in {where}: a plugin is a class its file or module defines, not one it imports",
        field=field,
        value=plugin,
    )


def _needed(methods: tuple[str, ...], any_of: bool) -> str:
    return " or ".join(methods) if any_of else ", ".join(methods)


def _load(where: str, base_dir: Path, field: str) -> Any:
    """The plugin's module, its code run: a file executed, or a module imported; what that code raises
    (`SystemExit` too) is the plugin's failure, while the run was built."""
    with _while_built(where, "its import", field):
        if where.endswith(".py"):
            path = base_dir / where
            module_name = f"skenario_plugin_{abs(hash(str(path.resolve())))}"
            spec = importlib.util.spec_from_file_location(module_name, path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            _written[module_name] = where
            sys.modules[module_name] = module
            spec.loader.exec_module(module)
            return module
        try:
            return importlib.import_module(where)
        except ImportError as exc:
            raise ScenarioError(f"cannot import the plugin's module: {exc}", field=field, value=where) from None


def _module_spec(name: str) -> ModuleSpec | None:
    """Where `import name` would find the module, found without importing it or its packages: each
    finder on `sys.meta_path` asked with the parent package's search path, as the import system asks."""
    parts = name.split(".")
    spec: ModuleSpec | None = None
    for depth in range(1, len(parts) + 1):
        full = ".".join(parts[:depth])
        module = sys.modules.get(full)
        if module is not None:
            spec = getattr(module, "__spec__", None)
            if spec is None and depth < len(parts):
                return None
            continue
        search = None
        if depth > 1:
            if spec is None or spec.submodule_search_locations is None:
                return None
            search = list(spec.submodule_search_locations)
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            found = find(full, search) if find is not None else None
            if found is not None:
                spec = found
                break
        if spec is None:
            return None
    return spec


def _check_source(path: Path, name: str, methods: tuple[str, ...], any_of: bool, plugin: str, field: str) -> None:
    """The plugin's source read and parsed (never run), and what its syntax tree says of the class."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ScenarioError(f"cannot read the plugin file: {exc}", field=field, value=str(path)) from None
    try:
        tree = ast.parse(text, filename=str(path))
    except (SyntaxError, ValueError, RecursionError) as exc:
        line = f" (line {exc.lineno})" if isinstance(exc, SyntaxError) and exc.lineno else ""
        problem = exc.msg if isinstance(exc, SyntaxError) else str(exc)
        raise ScenarioError(
            f"the plugin file is not valid Python: {problem}{line}", field=field, value=str(path)
        ) from None
    bindings = _top_level_bindings(tree, name)
    if bindings is None:
        return  # a star import, a module __getattr__ or a write to globals(): only the code knows
    if not bindings:
        raise ScenarioError(f"the plugin module has no '{name}'", field=field, value=plugin)
    last = bindings[-1]
    if isinstance(last, ast.FunctionDef | ast.AsyncFunctionDef) and not last.decorator_list:
        raise ScenarioError(f"'{name}' is not a class; a plugin is a class", field=field, value=plugin)
    if isinstance(last, ast.Import | ast.ImportFrom) and len(bindings) == 1:
        raise _not_defined(plugin, field)  # bound only by an import: a class from elsewhere, if a class
    if not isinstance(last, ast.ClassDef) or len(bindings) > 1:
        return  # bound by an assignment or an import, or more than once: only the code knows
    if last.bases or last.keywords or last.decorator_list:
        return  # methods may come from a base, a metaclass or a decorator
    defined = {
        target.id for statement in last.body for target in _bound_names(statement) if isinstance(target, ast.Name)
    }
    present = [method for method in methods if method in defined]
    if not (present if any_of else len(present) == len(methods)):
        raise ScenarioError(f"the plugin class needs a method {_needed(methods, any_of)}", field=field, value=plugin)


def _bound_names(statement: ast.stmt) -> list[ast.expr]:
    """The names a statement of a class or module body binds, as Name nodes."""
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [ast.Name(statement.name)]
    if isinstance(statement, ast.Assign):
        return [node for target in statement.targets for node in ast.walk(target) if isinstance(node, ast.Name)]
    if isinstance(statement, ast.AnnAssign | ast.AugAssign) and isinstance(statement.target, ast.Name):
        return [statement.target]
    if isinstance(statement, ast.Import | ast.ImportFrom):
        return [ast.Name((alias.asname or alias.name).split(".")[0]) for alias in statement.names]
    return []


def _top_level_bindings(tree: ast.Module, name: str) -> list[ast.stmt] | None:
    """The statements at the module's top level (in `if`, `try`, `with` and loops too, not in functions or
    classes) that bind `name`; None when the name may be bound where the tree does not show it."""
    found: list[ast.stmt] = []
    stack: list[ast.stmt] = list(reversed(tree.body))
    while stack:
        statement = stack.pop()
        if isinstance(statement, ast.ImportFrom) and any(alias.name == "*" for alias in statement.names):
            return None
        if isinstance(statement, ast.FunctionDef) and statement.name == "__getattr__":
            return None
        if any(isinstance(target, ast.Name) and target.id == name for target in _bound_names(statement)):
            found.append(statement)
        if isinstance(statement, ast.For | ast.AsyncFor | ast.While | ast.If | ast.With | ast.AsyncWith):
            if isinstance(statement, ast.For | ast.AsyncFor) and any(
                isinstance(node, ast.Name) and node.id == name for node in ast.walk(statement.target)
            ):
                found.append(statement)
            stack.extend(reversed([*statement.body, *getattr(statement, "orelse", [])]))
        elif isinstance(statement, ast.Try | ast.TryStar):
            for handler in statement.handlers:
                if handler.name == name:
                    found.append(statement)
                stack.extend(reversed(handler.body))
            stack.extend(reversed([*statement.body, *statement.orelse, *statement.finalbody]))
        elif isinstance(statement, ast.Match):
            return None  # a capture pattern may bind it
    if any(_dynamic(node, name) for node in ast.walk(tree)):
        return None
    return found


def _dynamic(node: ast.AST, name: str) -> bool:
    """Whether the node may bind names, or give `name` attributes, where a reading of the tree does not see."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in ("globals", "exec", "setattr", "vars")
    if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
        return isinstance(node.value, ast.Name) and node.value.id == name  # `Class.start = ...`
    return isinstance(node, ast.NamedExpr | ast.Global)
