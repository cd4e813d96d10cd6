"""Loading a user's class named in a scenario: `path/to/file.py:Class` (relative to the scenario) or `module:Class`.

This is the one place user code enters a run, and only where the scenario asks for a plugin by
name. A scenario with plugins runs their code: a plugin file is executed when it is loaded. The
named attribute must be a class with the methods its kind needs, checked before anything is
created or called, so a name such as `os:system` is refused rather than called. `refused()`
(the CLI's `--no-plugins`) turns every plugin down before any of its code is read.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from skenario.errors import ScenarioError

_refused = False


@contextmanager
def refused() -> Iterator[None]:
    """While in it, any plugin a scenario names is an error instead of code that runs."""
    global _refused
    before, _refused = _refused, True
    try:
        yield
    finally:
        _refused = before


def load_class(
    plugin: str, base_dir: Path, field: str, options: dict[str, Any], methods: tuple[str, ...], any_of: bool = False
) -> Any:
    """An instance of the named class, built with `options` as keyword arguments.

    The class must have all of `methods` (or at least one, with `any_of`); nothing is created
    or called before that is checked.
    """
    if _refused:
        raise ScenarioError(
            "plugins are refused (--no-plugins): this scenario would run its code", field=field, value=plugin
        )
    where, colon, name = plugin.rpartition(":")
    if not colon or not where or not name.isidentifier():
        raise ScenarioError("name a plugin as 'module:Class' or 'file.py:Class'", field=field, value=plugin)
    if where.endswith(".py"):
        path = base_dir / where
        if not path.is_file():
            raise ScenarioError("no such plugin file", field=field, value=str(path))
        module_name = f"skenario_plugin_{abs(hash(str(path.resolve())))}"
        spec = importlib.util.spec_from_file_location(module_name, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise ScenarioError(f"cannot import the plugin's module: {exc}", field=field, value=where) from None
    cls = getattr(module, name, None)
    if cls is None:
        raise ScenarioError(f"the plugin module has no '{name}'", field=field, value=plugin)
    if not inspect.isclass(cls):
        raise ScenarioError(f"'{name}' is not a class; a plugin is a class", field=field, value=plugin)
    present = [method for method in methods if callable(getattr(cls, method, None))]
    if not (present if any_of else len(present) == len(methods)):
        needed = " or ".join(methods) if any_of else ", ".join(methods)
        raise ScenarioError(f"the plugin class needs a method {needed}", field=field, value=plugin)
    try:
        return cls(**options)
    except TypeError as exc:
        raise ScenarioError(f"the plugin does not take these options: {exc}", field=field, value=options) from None
