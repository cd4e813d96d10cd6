"""The installed skenario's version, for the run store and `--version`: the lowest layer reads it."""

from importlib.machinery import EXTENSION_SUFFIXES
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

try:
    __version__ = version("skenario")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"


def compiled() -> bool:
    """Whether the kernel was compiled (`SKENARIO_COMPILE=1 pip install .`): looked up, not imported."""
    kernel = Path(__file__).resolve().parent / "core"
    return any((kernel / f"environment{suffix}").exists() for suffix in EXTENSION_SUFFIXES)
