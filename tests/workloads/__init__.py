"""Tests of the traffic: arrival patterns and the trace readers (src/skenario/workloads), one module per
source module, and the helpers the trace tests share.

A replay's up-front check (`check_*_trace`) exists so a run can refuse a bad trace before it
starts. That is only sound if a check raises exactly when the replay with the same window would,
so each reader's tests put bad rows around the window's end and compare the two with `raises` and
`exhaust`.
"""

from __future__ import annotations

import bz2
import io
import tarfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from skenario.errors import SkenarioError
from skenario.workloads.tracefiles import TraceError

TRACES = Path(__file__).parents[2] / "examples" / "traces"  # bundled copies of ../shared/traces


def write(tmp_path: Path, text: str, name: str = "trace.csv") -> Path:
    """A text file `name` in the test's temporary folder."""
    path = tmp_path / name
    path.write_text(text)
    return path


def error_of(excinfo: pytest.ExceptionInfo[TraceError]) -> str:
    """The message of a TraceError, checked to be a SkenarioError like every error skenario reports."""
    assert isinstance(excinfo.value, SkenarioError)
    return str(excinfo.value)


def write_archive(path: Path, content: bytes, member: str = "workload.txt") -> Path:
    """A bzip2 tar at `path` holding one file, `member`, with `content`."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        info = tarfile.TarInfo(member)
        info.size = len(content)
        archive.addfile(info, io.BytesIO(content))
    path.write_bytes(bz2.compress(buffer.getvalue()))
    return path


def raises(action: Callable[..., object], *args: Any, **kwargs: Any) -> bool:
    """Whether `action(*args, **kwargs)` raises a TraceError."""
    try:
        action(*args, **kwargs)
    except TraceError:
        return True
    return False


def exhaust(arrivals: Callable[..., Iterator[int]], *args: Any, **kwargs: Any) -> None:
    """Replay to the end, which reads everything the replay reads."""
    for _ in arrivals(*args, **kwargs):
        pass
