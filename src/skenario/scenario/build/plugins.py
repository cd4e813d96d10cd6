"""Loading a user's class named in a scenario: `path/to/file.py:Class` (relative to the scenario) or `module:Class`.

This is the one place user code enters a run, and only where the scenario asks for a plugin by name.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from skenario.errors import ScenarioError


def load_class(plugin: str, base_dir: Path, field: str, options: dict[str, Any]) -> Any:
    """An instance of the named class, built with `options` as keyword arguments."""
    where, _, name = plugin.rpartition(":")
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
    try:
        return cls(**options)
    except TypeError as exc:
        raise ScenarioError(f"the plugin does not take these options: {exc}", field=field, value=options) from None
