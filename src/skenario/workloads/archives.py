"""Archived per-interval counts: the NASA-HTTP 1995 per-second trace, a bzip2 tar of one text file.

The member holds whitespace-separated non-negative integers, one count per interval from time 0.
It is decompressed and parsed a block at a time and spread like any other counts (`counts`).
"""

from __future__ import annotations

import re
import tarfile
from collections.abc import Iterator
from itertools import chain
from pathlib import Path

import numpy as np

from skenario.core.time import SECOND
from skenario.workloads.counts import Chunk, read_counts, spread_counts
from skenario.workloads.rates import PiecewiseRate, spans_rate
from skenario.workloads.tracefiles import Int64s, TraceError, TracePath, check_scales

NASA_MEMBER = "workload.txt"
_TOKEN = re.compile(rb"\S+")


def nasa_arrivals(
    path: TracePath,
    *,
    rng: np.random.Generator,
    interval: int = SECOND,
    member: str = NASA_MEMBER,
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
    since: int = 0,
) -> Iterator[int]:
    """The NASA-HTTP 1995 per-second counts, read lazily from the bzip2 tar (`workload.tbz2`).

    The member holds whitespace-separated non-negative integers, one per `interval`, from 0 on.
    The archive is opened and its first block checked now; the rest streams as it is consumed.
    """
    check_scales(time_scale, rate_scale)
    chunks = _archive_chunks(Path(path), member, interval)
    return spread_counts(chunks, start, stop, time_scale, rate_scale, rng, since)


def nasa_rate(
    path: TracePath,
    *,
    stop: int,
    interval: int = SECOND,
    member: str = NASA_MEMBER,
    start: int = 0,
    time_scale: float = 1.0,
    rate_scale: float = 1.0,
) -> PiecewiseRate:
    """The rate `nasa_arrivals` with the same arguments draws from: each second's count."""
    check_scales(time_scale, rate_scale)
    return spans_rate(_archive_chunks(Path(path), member, interval), start, stop, time_scale, rate_scale)


def check_archive_trace(
    path: TracePath,
    *,
    interval: int = SECOND,
    member: str = NASA_MEMBER,
    start: int = 0,
    stop: int | None = None,
    time_scale: float = 1.0,
) -> None:
    """Read every block that `nasa_arrivals` with the same arguments would read; raise TraceError on a bad one."""
    check_scales(time_scale, 1.0)
    read_counts(_archive_chunks(Path(path), member, interval), start, stop, time_scale)


def _archive_chunks(path: Path, member: str, interval: int) -> Iterator[Chunk]:
    """Chunks of an archived count file; the archive is opened and its first block checked now."""
    blocks = _archive_counts(path, member)
    first = next(blocks, None)
    if first is None:
        raise TraceError(f"'{member}' holds no counts", file=str(path), line=1, value=member)
    return _count_spans(chain([first], blocks), interval)


def _count_spans(blocks: Iterator[Int64s], interval: int) -> Iterator[Chunk]:
    index = 0
    for counts in blocks:
        begins = (index + np.arange(counts.size, dtype=np.int64)) * interval
        yield begins, begins + interval, counts.astype(np.float64)
        index += counts.size


LONGEST_COUNT = 64
"""The most characters one count may take (an int64 has at most 20): past it, a member is no count file."""


def _archive_counts(path: Path, member: str, block_size: int = 1 << 20) -> Iterator[Int64s]:
    """Blocks of counts streamed out of a tar member, each block cut at whitespace."""
    file = str(path)
    try:
        archive = tarfile.open(path, "r:*")  # noqa: SIM115 (closed by `with` below)
    except OSError as exc:
        raise TraceError(f"cannot open trace file: {exc.strerror or exc}", file=file) from None
    except tarfile.TarError as exc:
        raise TraceError(f"not a tar archive: {exc}", file=file) from None
    with archive:
        try:
            found = next((item for item in archive if item.name.rsplit("/", 1)[-1] == member), None)
            stream = archive.extractfile(found) if found is not None else None
            if stream is None:
                raise TraceError(f"the archive has no file '{member}'", file=file, value=member)
            line, carry = 1, b""
            while True:
                block = stream.read(block_size)
                data = carry + block
                cut = len(data) if not block else max(data.rfind(byte) for byte in (b" ", b"\n", b"\t", b"\r"))
                data, carry = data[: cut + 1], data[cut + 1 :]
                if len(carry) > LONGEST_COUNT:  # no count is this long: the member is not a count file
                    where = line + data.count(b"\n")
                    shown = carry[:20].decode(errors="replace")
                    raise TraceError(
                        f"a token of more than {LONGEST_COUNT} characters ({shown!r}…): not a file of counts",
                        file=file,
                        line=where,
                    )
                tokens = data.split()
                if tokens:
                    try:
                        counts = np.fromiter(map(int, tokens), dtype=np.int64, count=len(tokens))
                    except ValueError:
                        counts = np.full(1, -1, dtype=np.int64)
                    if counts.min() < 0:
                        _bad_token(data, line, file)
                    yield counts
                line += data.count(b"\n")
                if not block:
                    return
        except (OSError, EOFError, tarfile.TarError) as exc:
            raise TraceError(f"corrupt archive: {exc}", file=file) from None


def _bad_token(data: bytes, line: int, file: str) -> None:
    """Find the first token that is not a count, and report it with its line."""
    for match in _TOKEN.finditer(data):
        value = match.group().decode(errors="replace")
        try:
            problem = "negative count" if int(match.group()) < 0 else ""
        except ValueError:
            problem = "cannot parse count"
        if problem:
            where = line + data.count(b"\n", 0, match.start())
            raise TraceError(f"{problem} '{value}'", file=file, line=where, value=value)
