"""The installed skenario's version, for the run store and `--version`: the lowest layer reads it."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skenario")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"
