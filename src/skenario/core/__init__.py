"""The simulation kernel: time, Environment, Movement, Stock, Entity, Clock.

It knows nothing of Kubernetes; the cluster model in `skenario.model` is built from these parts.
"""

from skenario.core.clock import Clock, MovingClock, SettlingClock, Timer
from skenario.core.entity import Entity
from skenario.core.environment import (
    Environment,
    MovementBudget,
    MovementBudgetExceeded,
    MovementLog,
    MovementObserver,
)
from skenario.core.movement import IgnoredMovement, IgnoredReason, Movement
from skenario.core.rt import RealtimeClock
from skenario.core.stocks import FifoStock, KeyedStock, Sink, SinkStock, Source, SourceStock, Stock, ThroughStock
from skenario.core.time import (
    HOUR,
    MICROSECOND,
    MILLISECOND,
    MINUTE,
    NANOSECOND,
    SECOND,
    format_clock,
    format_duration,
    format_human_duration,
    format_relative,
    parse_clock,
    parse_duration,
)

__all__ = [
    "HOUR",
    "MICROSECOND",
    "MILLISECOND",
    "MINUTE",
    "NANOSECOND",
    "SECOND",
    "Clock",
    "Entity",
    "Environment",
    "FifoStock",
    "IgnoredMovement",
    "IgnoredReason",
    "KeyedStock",
    "Movement",
    "MovementBudget",
    "MovementBudgetExceeded",
    "MovementLog",
    "MovementObserver",
    "MovingClock",
    "RealtimeClock",
    "SettlingClock",
    "Sink",
    "SinkStock",
    "Source",
    "SourceStock",
    "Stock",
    "ThroughStock",
    "Timer",
    "format_clock",
    "format_duration",
    "format_human_duration",
    "format_relative",
    "parse_clock",
    "parse_duration",
]
