"""Supervision of a run, or of many: signals, the memory budget and the watchdog, in one place.

Every front end that runs something (`skenario run`, `sweep`, `tune`, the sweep workers, the
Python API) goes through here, so a stop means the same everywhere:

- reading the input (`loading`): a signal or the memory budget stops it where it is, from the first
  byte read (nothing is written before the input was read whole);
- one run (`supervise`): SIGTERM or Ctrl-C (`StopRequests`) and the process passing its memory
  budget (`MemoryGuard`) stop it between two movements, within about a second of wall time, kept
  in the store as Failed with what it recorded; should one movement take longer, a watchdog
  interrupts the main thread where it is;
- many runs (`interruption`): SIGTERM acts as Ctrl-C does, so the runs that finished are kept;
- a sweep's worker (`worker_signals`): leaves Ctrl-C to its parent, dies quietly when terminated.
"""

from __future__ import annotations

import _thread
import ctypes
import gc
import math
import os
import re
import resource
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from fractions import Fraction
from types import FrameType
from typing import Any

from skenario.core.time import SECOND, format_duration
from skenario.errors import RunStop, SkenarioError


class Stopped(RunStop):
    """The run was stopped before its end (a signal, the memory budget); it is kept, marked Failed."""

    def __init__(self, reason: str, exit_code: int) -> None:
        super().__init__(reason)
        self.exit_code = exit_code
        self.run_id: int | None = None  # the run kept in the store as Failed, if it was kept

    @classmethod
    def by_signal(cls, signum: int) -> Stopped:
        """Stopped by SIGTERM or SIGINT: exit status 128 + its number, as a shell reports a process it killed."""
        return cls(f"stopped by signal {signal.Signals(signum).name}", 128 + signum)


class StopRequests:
    """Stops the run within a second of SIGTERM or SIGINT, whatever its simulated length.

    The signal asks the kernel to pause after the movement it is in (`on_stop`), so the run stops
    between movements with the model and the last batch written whole. Should one movement (or
    the setup) take longer than `GRACE`, the main thread is interrupted where it is; a second
    signal does that at once. Another thread stops the run the same way with `ask`. With no
    `on_stop` (nothing to pause: the input being read), the first signal stops where it is.
    """

    SIGNALS = (signal.SIGTERM, signal.SIGINT)
    GRACE = 0.8  # seconds of wall time between the signal and the interruption

    def __init__(self, on_stop: Callable[[], object] | None = None) -> None:
        self.stop: Stopped | None = None
        self.on_stop = on_stop
        self._asked: Stopped | None = None  # a stop another thread asked for, on its way in as a signal
        self._previous: dict[int, Any] = {}
        self._watchdog: threading.Timer | None = None

    def __enter__(self) -> StopRequests:
        for signum in self.SIGNALS:
            self._previous[signum] = signal.signal(signum, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)

    def ask(self, stop: Stopped) -> None:
        """Stop the run for this reason, from any thread: it reaches the main thread as a SIGTERM
        would (Python runs signal handlers there, between two bytecodes, where pausing is safe)."""
        self._asked = stop
        _thread.interrupt_main(signal.SIGTERM)  # nothing once `ignore` has set the signal aside

    def _note(self, signum: int, frame: FrameType | None) -> None:
        asked, self._asked = self._asked, None
        if self.stop is not None:
            if asked is not None:  # asked after a signal: that stop goes on
                return
            raise self.stop  # a signal twice: stop where it is
        self.stop = asked or Stopped.by_signal(signum)
        if self.on_stop is None:
            raise self.stop
        self.on_stop()
        self._watchdog = threading.Timer(self.GRACE, _thread.interrupt_main)
        self._watchdog.daemon = True
        self._watchdog.start()

    def check(self) -> None:
        if self.stop is not None:
            raise self.stop

    def ignore(self) -> None:
        """From now on (writing the end of the run) a further signal is not let in halfway."""
        if self._watchdog is not None:
            self._watchdog.cancel()
        for signum in self.SIGNALS:
            signal.signal(signum, signal.SIG_IGN)


_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)\s*(%|b|[kmgtp]i?b?)?\s*", re.IGNORECASE)
_UNIT_POWERS = {"": 0, "k": 1, "m": 2, "g": 3, "t": 4, "p": 5}
DEFAULT_MEMORY_SHARE = 0.5  # of physical memory, when --max-memory is not given


def memory_budget(text: str | None) -> int | None:
    """`--max-memory` in bytes: `2GiB`, `500MiB` or `2Gi` (powers of 1024), `2GB` or `2G` (of 1000),
    plain bytes, or a share of physical memory (`50%`, the default); None for no limit (`0`, `none`)."""
    physical = physical_memory()
    if text is None:
        return None if physical is None else int(physical * DEFAULT_MEMORY_SHARE)
    if text.strip().lower() == "none":
        return None
    match = _SIZE.fullmatch(text)
    if match is None:
        raise SkenarioError(
            "not a size; write a number and a unit such as 2GiB, 500MiB or 50% (of physical memory), "
            "or 0 or none for no limit",
            field="--max-memory",
            value=text,
        )
    number, unit = Fraction(match.group(1)), (match.group(2) or "").lower()  # exact, however many digits
    if unit == "%":
        if physical is None:
            raise SkenarioError("this machine does not say how much memory it has", field="--max-memory", value=text)
        size = number / 100 * physical
    else:
        size = number * (1024 if "i" in unit else 1000) ** _UNIT_POWERS[unit.rstrip("ib")]
    return math.ceil(size) or None


def physical_memory() -> int | None:
    """The machine's memory in bytes, or None where the system does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def resident_memory() -> int:
    """This process's resident memory in bytes: now (Linux's /proc), else its peak so far."""
    try:
        with open("/proc/self/statm", "rb") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024  # macOS counts bytes, Linux KiB


def format_size(size: float) -> str:
    """Bytes as people write them: `2 GiB`, `2.1 GiB`, `118.4 MiB`."""
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(size) < 1024 or unit == "TiB":
            break
        size /= 1024
    return f"{f'{size:.1f}'.removesuffix('.0')} {unit}"


class MemoryGuard:
    """Stops the run (`StopRequests.ask`) once the process's resident memory passes `budget` bytes.

    A thread reads the resident size every `PERIOD` seconds of wall time: a read of /proc costs
    microseconds, so the run does not notice it. The stop is a Failed run with exit status 1.
    """

    PERIOD = 0.5
    EXIT_CODE = 1

    def __init__(self, budget: int | None, stops: StopRequests, now: Callable[[], int] | None) -> None:
        self.budget = budget
        self._stops = stops
        self._now = now
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._watch, name="memory-guard", daemon=True)

    def __enter__(self) -> MemoryGuard:
        if self.budget is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._done.set()
        if self._thread.is_alive():
            self._thread.join()

    def _watch(self) -> None:
        assert self.budget is not None
        while not self._done.wait(self.PERIOD):
            resident = resident_memory()
            if resident > self.budget:
                when = (
                    "while reading the input"
                    if self._now is None
                    else f"at simulated {format_duration(self._now() // SECOND * SECOND)}"
                )
                reason = f"memory budget {format_size(self.budget)} exceeded: {format_size(resident)} resident {when}"
                self._stops.ask(Stopped(reason, self.EXIT_CODE))
                return


@contextmanager
def supervise(
    on_stop: Callable[[], object] | None = None, *, budget: int | None = None, now: Callable[[], int] = lambda: 0
) -> Iterator[StopRequests]:
    """One run under watch: its stop requests (signals), and the memory guard past `budget` bytes.

    `on_stop` hears the first request (a run's `env.pause_soon`, to stop between movements); `now`
    says the simulated time for the memory guard's message. The run polls `StopRequests.check`.
    """
    with StopRequests(on_stop=on_stop) as stops, MemoryGuard(budget, stops, now):
        yield stops


@contextmanager
def loading(budget: int | None = None) -> Iterator[None]:
    """Reading and checking the input under watch: SIGTERM, Ctrl-C or passing `budget` bytes raises
    `Stopped` where it is, so a huge or endless input is stopped as a run would be."""
    with StopRequests() as stops, MemoryGuard(budget, stops, None):
        try:
            yield
        except KeyboardInterrupt:  # a signal that arrived while a handler could not run
            raise stops.stop or Stopped.by_signal(signal.SIGINT) from None


class Interruption:
    """Ctrl-C, or SIGTERM made to act as Ctrl-C does (the runs that finished are kept), while in the block;
    `exit_code` is how a shell reports the signal that stopped it (130 for SIGINT, 143 for SIGTERM)."""

    def __init__(self) -> None:
        self.signal = signal.SIGINT
        self._previous: Any = None

    def __enter__(self) -> Interruption:
        self._previous = signal.signal(signal.SIGTERM, self._terminate)
        return self

    def __exit__(self, *exc: object) -> None:
        signal.signal(signal.SIGTERM, self._previous)

    def _terminate(self, signum: int, frame: FrameType | None) -> None:
        self.signal = signal.SIGTERM
        raise KeyboardInterrupt

    @property
    def exit_code(self) -> int:
        return 128 + int(self.signal)


def worker_signals(parent: int | None = None) -> None:
    """A sweep's worker process leaves Ctrl-C to the parent, dies quietly when the parent terminates it,
    and dies with `parent` (its pid) however that ends, even by SIGKILL (`die_with`). What it inherited
    from the parent (every module loaded) is set aside from the garbage collector (`gc.freeze`, as
    Python's documentation advises for a fork without exec): the runs' collections then scan only the
    runs' own objects, and leave the shared pages unwritten."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if parent is not None:
        die_with(parent)
    gc.freeze()


PR_SET_PDEATHSIG = 1
"""Linux's prctl option: the signal the kernel sends this process when the thread that made it ends."""
PARENT_WATCH = 1.0
"""Seconds between two looks at the parent's pid, where the kernel has no parent-death signal."""


def die_with(parent: int) -> None:
    """End this process when `parent` ends, even by SIGKILL, so no worker outlives its sweep: Linux's
    parent-death signal (`prctl(PR_SET_PDEATHSIG, SIGKILL)`), else a thread that exits the process
    once it has been handed to another parent."""
    asked = False
    if sys.platform.startswith("linux"):
        try:
            asked = ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) == 0
        except (OSError, AttributeError):
            asked = False
    if not asked:
        threading.Thread(target=_watch_parent, args=(parent,), name="parent-watch", daemon=True).start()
    if os.getppid() != parent:  # it ended before the signal was asked for
        os._exit(1)


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_WATCH)
    os._exit(1)
