"""Queues' step series as a replay records them: every change kept, on disk, and folded as it comes.

A month of SLS trace changes its queues' figures millions of times. A replay keeps every change (the
`--queues` table lists them all, and the run's series samples them), but not in memory: each queue's
rows gather in a small buffer that goes to an anonymous temporary file when full (`SpilledSeries`),
and are read back a block at a time. What the summary needs of them (time-weighted means and peaks) is
folded as they come (`StepIntegral`), exactly, in whole numbers.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from array import array
from collections.abc import Iterator, Sequence
from typing import IO

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]

BLOCK_ROWS = 8192
"""Rows a series holds in memory before they go to disk (each `width` int64)."""


class SpilledSeries:
    """Rows of `width` int64 per series (a queue), appended in time order; full blocks spilled to disk."""

    def __init__(self, series: int, width: int, block_rows: int | None = None) -> None:
        block_rows = BLOCK_ROWS if block_rows is None else block_rows
        if block_rows < 1:
            raise ValueError(f"a block holds at least one row, got {block_rows}")
        self.width = width
        self._block = block_rows * width  # int64s a buffer holds before it is spilled
        self._buffers = [array("q") for _ in range(series)]
        self._blocks: list[list[tuple[int, int]]] = [[] for _ in range(series)]  # per series: (offset, int64s)
        self._end = 0
        self._spill: IO[bytes] | None = None  # opened at the first spill: a short replay writes nothing

    def append(self, series: int, row: Sequence[int]) -> None:
        buffer = self._buffers[series]
        buffer.extend(row)
        if len(buffer) >= self._block:
            self._write(series)

    def _write(self, series: int) -> None:
        buffer = self._buffers[series]
        if self._spill is None:
            self._spill = tempfile.TemporaryFile(prefix="skenario-queues-")  # noqa: SIM115 - closed with the series
            weakref.finalize(self, self._spill.close)
        data = buffer.tobytes()
        self._spill.seek(self._end)
        self._spill.write(data)
        self._blocks[series].append((self._end, len(buffer)))
        self._end += len(data)
        self._buffers[series] = array("q")

    def rows(self, series: int) -> int:
        """How many rows the series holds."""
        return (sum(n for _, n in self._blocks[series]) + len(self._buffers[series])) // self.width

    def chunks(self, series: int) -> Iterator[Ints]:
        """The series' rows, a block at a time (each an array of `width` columns, a copy), in the order appended."""
        spill = self._spill
        if spill is not None:
            spill.flush()
            for offset, count in self._blocks[series]:
                data = os.pread(spill.fileno(), count * 8, offset)
                yield np.frombuffer(data, dtype=np.int64).reshape(-1, self.width)
        buffer = self._buffers[series]
        if buffer:
            yield np.array(buffer, dtype=np.int64).reshape(-1, self.width)

    def read(self, series: int) -> Ints:
        """Every row of the series at once."""
        chunks = list(self.chunks(series))
        return np.concatenate(chunks) if chunks else np.zeros((0, self.width), dtype=np.int64)


class StepIntegral:
    """A step series' time-weighted integral and peak (0 before its first change), folded as it changes, exactly.

    A series may change several times at one instant: the integral counts the value it is left with (the
    others last no time). Its peak is the largest value it took (`every_value`), or the largest it was left with
    at an instant (a reading of the series at each instant, as a sum over queues read then gives it)."""

    def __init__(self, every_value: bool = True) -> None:
        self.every_value = every_value
        self._value = 0
        self._since = 0
        self._area = 0  # value x ns up to `_since`
        self._peak = 0

    def change(self, at: int, value: int) -> None:
        """The series is `value` from `at` on (never before an earlier change)."""
        if at < self._since:
            raise ValueError(f"a change at {at} ns comes after one at {self._since} ns")
        if not self.every_value and at > self._since:
            self._peak = max(self._peak, self._value)  # what the last instant left
        self._area += self._value * (at - self._since)
        self._since, self._value = at, value
        if self.every_value:
            self._peak = max(self._peak, value)

    def mean(self, end: int) -> float:
        """The time-weighted mean over [0, end) (`end` past the last change)."""
        return (self._area + self._value * (end - self._since)) / end

    @property
    def peak(self) -> int:
        return max(self._peak, self._value)


def sample(
    chunks: Iterator[Ints], time_column: int, columns: Sequence[int], grid: Ints
) -> list[npt.NDArray[np.float64]]:
    """Each of `columns` of a step series read at every instant of `grid`: its last row at or before it (0 before
    the first), the chunks taken in time order, each read once."""
    out = [np.zeros(len(grid), dtype=np.float64) for _ in columns]
    for rows in chunks:
        at = np.searchsorted(rows[:, time_column], grid, side="right") - 1
        have = at >= 0
        for values, column in zip(out, columns, strict=True):
            values[have] = rows[at[have], column]
    return out
