"""Instructions per simulated request of the reference scenario, counted by valgrind's callgrind.

Wall time on a shared host swings by tens of percent within minutes, which hides a change of a
few percent. The number of instructions the interpreter executes does not vary between runs, so
it compares two versions of the code exactly: the reference scenario runs for 0.02 h and 0.06 h
under `valgrind --tool=callgrind`, and the difference of the two counts over the difference of
their requests leaves out start-up (imports, parsing) and prices one request. The floor (the bare
heapq M/M/8 loop of `mmc.py`) is priced the same way, over 20,000 and 60,000 customers, and the
ratio of the two is issue 32's measure (target at most 3.3x).

    python3 benchmarks/instructions.py                  # this checkout
    PYTHONPATH=/other/src python3 benchmarks/instructions.py   # another version of the code

Needs `valgrind` on the PATH; the four runs take about two minutes together.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHORT_H = 0.02
LONG_H = 0.06
FLOOR_SHORT = 20_000
FLOOR_LONG = 60_000
_COLLECTED = re.compile(r"Collected : (\d+)")


def count(hours: float) -> tuple[int, int, str]:
    """(requests, instructions, where skenario was imported from) of one reference run of `hours` under callgrind."""
    return _callgrind(
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import reference; "
        f"import skenario; print(skenario.__file__, reference.run_reference({hours})['units'])"
    )


def count_floor(customers: int) -> tuple[int, int, str]:
    """(customers, instructions, where mmc was imported from) of one floor run under callgrind."""
    return _callgrind(
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import mmc; "
        f"print(mmc.__file__, mmc.run_floor({customers}, mmc.SEED)[2])"
    )


def _callgrind(program: str) -> tuple[int, int, str]:
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", program]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no instruction count:\n{done.stderr[-2000:]}")
    where, units = done.stdout.split()[-2:]
    return int(units), int(found.group(1)), str(Path(where).parent)


def per_unit(short: tuple[int, int, str], long: tuple[int, int, str]) -> float:
    """Instructions per unit (request, customer) between a short and a long run: start-up cancels."""
    return (long[1] - short[1]) / (long[0] - short[0])


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(2) as pool:
        runs = [pool.submit(count, SHORT_H), pool.submit(count, LONG_H)]
        floors = [pool.submit(count_floor, FLOOR_SHORT), pool.submit(count_floor, FLOOR_LONG)]
        short, long = (run.result() for run in runs)
        floor_short, floor_long = (run.result() for run in floors)
    per_request = per_unit(short, long)
    floor = per_unit(floor_short, floor_long)
    print(
        f"{per_request:,.0f} instructions per request ({long[0] - short[0]:,} requests between the runs), "
        f"skenario at {short[2]}"
    )
    print(f"{floor:,.0f} instructions per customer of the floor: a request costs {per_request / floor:.2f}x the floor")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
