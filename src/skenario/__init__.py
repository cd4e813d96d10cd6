"""skenario: a discrete-event simulator for cluster autoscaling and scheduling.

The package's own names are its Python API for many runs: `skenario.sweep(...)` runs a scenario over
settings and seeds and returns a DataFrame, `skenario.tune(...)` searches for the best setting with
Optuna. Both load lazily (`skenario.sweeps.api`), so `import skenario` needs none of the sweep
extra's libraries; everything else lives in the subpackages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from skenario.version import __version__

if TYPE_CHECKING:
    from skenario.sweeps.api import sweep, tune

__all__ = ["__version__", "sweep", "tune"]

_LAZY = ("sweep", "tune")


def __getattr__(name: str) -> Any:
    """`sweep` and `tune`, loaded on first use (PEP 562)."""
    if name in _LAZY:
        from skenario.sweeps import api

        return getattr(api, name)
    raise AttributeError(f"module 'skenario' has no attribute {name!r}")
