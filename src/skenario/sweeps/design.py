"""The points of a sweep: each a `{path: value}` the scenario is run with, once per seed.

```text
--set a=1,2 --set b=x,y                      grid: (1,x) (1,y) (2,x) (2,y), the first setting slowest
--set c=0..1 --design lhs --samples 4        4 points, one in each quarter of c's range
--set a=1,2 --set c=0..1 --design sobol --samples 4   each of a's values crossed with the same 4 points: 8
```

A grid lists every combination; a design samples ranges where a grid would be too big: a Latin
hypercube puts exactly one of its N samples in each of the N equal strata of every range, and a
scrambled Sobol sequence covers the space more evenly still (both `scipy.stats.qmc`). Both are
fixed by their seed, so a sweep run twice has the same points. The sweep's seeds (replications)
are a separate matter: every point is run with the same ones.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np
from scipy.stats import qmc  # type: ignore[import-untyped]  # scipy ships no stubs

from skenario.sweeps.space import Range, Setting, SweepError, parse_path, value_for

Design = Literal["grid", "lhs", "sobol"]
DESIGNS: tuple[str, ...] = ("grid", "lhs", "sobol")


def grid(settings: Sequence[Setting]) -> list[dict[str, Any]]:
    """Every combination of the settings' values, the first setting varying slowest (as nested loops
    read); no settings: one point, the scenario as written."""
    paths = [setting.path for setting in settings]
    return [dict(zip(paths, values, strict=True)) for values in itertools.product(*(s.values for s in settings))]


def latin_hypercube(ranges: Sequence[Range], samples: int, seed: int) -> list[dict[str, Any]]:
    """`samples` points, exactly one in each of the `samples` equal strata of every range's unit interval."""
    unit = qmc.LatinHypercube(d=len(ranges), scramble=True, seed=seed).random(samples)
    return _mapped(ranges, unit)


def sobol(ranges: Sequence[Range], samples: int, seed: int) -> list[dict[str, Any]]:
    """`samples` points of a scrambled Sobol sequence (Owen scrambling, seeded).

    Its balance holds for a power of two (`random_base2`); for another count the first `samples`
    points are taken, which cover the space less evenly. scipy warns then; this says so here instead,
    since a sweep of 10 points is still a fair thing to ask for.
    """
    engine = qmc.Sobol(d=len(ranges), scramble=True, seed=seed)
    if samples & (samples - 1) == 0:
        unit = engine.random_base2(int(math.log2(samples)))
    else:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="The balance properties of Sobol", category=UserWarning)
            unit = engine.random(samples)
    return _mapped(ranges, unit)


def points(
    settings: Sequence[Setting],
    ranges: Sequence[Range],
    design: str = "grid",
    samples: int | None = None,
    seed: int = 0,
) -> list[dict[str, Any]]:
    """A sweep's points: the grid of the settings, each crossed with the design's samples of the ranges.

    The grid's points come first-setting-slowest and the samples vary fastest, so the points of one
    setting's value stay together in the table.
    """
    if design not in DESIGNS:
        raise SweepError(f"--design {design!r}: write one of {', '.join(DESIGNS)}", value=design)
    refuse_repeats([*settings, *ranges])
    if design == "grid":
        if ranges:
            shown = ", ".join(f"{r.path}" for r in ranges)
            raise SweepError(f"a range needs --design lhs or sobol, or give values with --set ({shown})", value=shown)
        if samples is not None:
            raise SweepError(f"--samples {samples}: only --design lhs or sobol samples", value=samples)
        return grid(settings)
    if not ranges:
        raise SweepError(f"--design {design} samples ranges: give one as PATH=LO..HI", value=design)
    if samples is None or samples < 1:
        raise SweepError(f"--design {design} needs --samples N, a number of points of at least 1", value=samples)
    sampled = (latin_hypercube if design == "lhs" else sobol)(ranges, samples, seed)
    return [{**fixed, **sample} for fixed in grid(settings) for sample in sampled]


def _mapped(ranges: Sequence[Range], unit: np.ndarray) -> list[dict[str, Any]]:
    """Unit samples (one row a point, one column a range) as the ranges' values."""
    return [{space.path: value_for(space, float(u)) for space, u in zip(ranges, row, strict=True)} for row in unit]


def refuse_repeats(items: Sequence[Setting | Range]) -> None:
    """Refuse a path given twice (`workload.replicas` and `spec.workload.replicas` are one) would have two values."""
    seen: dict[tuple[str | int, ...], str] = {}
    for item in items:
        key = tuple(parse_path(item.path))
        if key in seen:
            raise SweepError(f"{item.path} is given twice (also as {seen[key]})", value=item.path)
        seen[key] = item.path
