"""The Horizontal Pod Autoscaler controller's settings: kube-controller-manager's HPA flags.

Restated from kubernetes/kubernetes `pkg/controller/podautoscaler/config/v1alpha1/defaults.go`
(`RecommendedDefaultHPAControllerConfiguration`); no upstream code is copied. The flags are the
same for every HPA in a cluster: the sync period, the tolerance, the downscale stabilisation
window, and the CPU initialisation period and readiness delay the replica calculator
(`hpa.replicas`) reads. What one HPA object asks for is in `hpa.types` (metric specs) and
`hpa.behavior` (`spec.behavior`). Times are integer nanoseconds.
"""

from __future__ import annotations

from dataclasses import dataclass

from skenario.core.time import MINUTE, SECOND

# kube-controller-manager flags (config/v1alpha1/defaults.go, RecommendedDefaultHPAControllerConfiguration).
DEFAULT_SYNC_PERIOD = 15 * SECOND
DEFAULT_TOLERANCE = 0.1
DEFAULT_DOWNSCALE_STABILIZATION = 5 * MINUTE
DEFAULT_CPU_INITIALIZATION_PERIOD = 5 * MINUTE
DEFAULT_INITIAL_READINESS_DELAY = 30 * SECOND


@dataclass(frozen=True, slots=True)
class HPAControllerConfig:
    """The controller's flags, production defaults; upstream test harnesses use other values."""

    sync_period: int = DEFAULT_SYNC_PERIOD
    tolerance: float = DEFAULT_TOLERANCE
    downscale_stabilization: int = DEFAULT_DOWNSCALE_STABILIZATION
    cpu_initialization_period: int = DEFAULT_CPU_INITIALIZATION_PERIOD
    initial_readiness_delay: int = DEFAULT_INITIAL_READINESS_DELAY


# The calculators' default `config`, one shared instance (it is frozen).
DEFAULT_CONTROLLER_CONFIG = HPAControllerConfig()
