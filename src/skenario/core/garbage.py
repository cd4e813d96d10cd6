"""The garbage collector during a run: young objects are many and short-lived, so collect them less often.

Python collects its youngest generation every 700 allocations; a run allocates movements, tuples and
arrays by the million, nearly all freed at once by reference counting, so most of those collections
find nothing: 5-8% of a scenario run, and about a fifth of a large trace replay.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

RUN_GC_THRESHOLD = 100_000


@contextmanager
def young_garbage_tolerated() -> Iterator[None]:
    """Collect the youngest generation less often while a run is under way, then restore."""
    threshold = gc.get_threshold()
    gc.set_threshold(max(threshold[0], RUN_GC_THRESHOLD), *threshold[1:])
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
