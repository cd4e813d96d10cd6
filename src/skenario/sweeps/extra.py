"""Whether the sweep extra is installed: `sweep` and `tune` say which extra to install, in one line.

It only looks for the modules (`importlib.util.find_spec`), importing none, so the check costs
nothing and works where importing them would fail half-way.
"""

from __future__ import annotations

from importlib.util import find_spec

from skenario.errors import SkenarioError

MODULES = {"scipy": "SciPy", "optuna": "Optuna", "distributed": "Dask distributed"}
"""What `skenario[sweep]` adds (module: its name), as pyproject.toml lists it."""


class MissingExtra(SkenarioError):
    """A command needs an optional extra that is not installed."""


def require_sweep_extra(command: str) -> None:
    """Raise MissingExtra naming the extra to install unless every module of it is importable."""
    missing = [name for module, name in MODULES.items() if _absent(module)]
    if missing:
        raise MissingExtra(
            f"skenario {command} needs the sweep extra ({', '.join(missing)} not installed): "
            "pip install 'skenario[sweep]'"
        )


def _absent(module: str) -> bool:
    try:
        return find_spec(module) is None
    except (ImportError, ValueError):  # a parent package missing, or a module set to None in sys.modules
        return True
