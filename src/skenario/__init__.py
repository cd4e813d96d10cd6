"""skenario: a discrete-event simulator for cluster autoscaling and scheduling."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("skenario")
except PackageNotFoundError:  # running from a source tree without installing
    __version__ = "0.0.0+unknown"
