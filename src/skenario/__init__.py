"""skenario: a discrete-event simulator for cluster autoscaling and scheduling."""

from skenario.version import __version__

__all__ = ["__version__"]
