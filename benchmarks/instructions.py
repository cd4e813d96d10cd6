"""Instructions per simulated request of the reference scenario, counted by valgrind's callgrind.

Wall time on a shared host swings by tens of percent within minutes, which hides a change of a
few percent. The number of instructions the interpreter executes does not vary between runs, so
it compares two versions of the code exactly: the reference scenario runs for 0.02 h and 0.06 h
under `valgrind --tool=callgrind`, and the difference of the two counts over the difference of
their requests leaves out start-up (imports, parsing) and prices one request.

    python3 benchmarks/instructions.py                  # this checkout
    PYTHONPATH=/other/src python3 benchmarks/instructions.py   # another version of the code

Needs `valgrind` on the PATH; both runs take about a minute together.
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
_COLLECTED = re.compile(r"Collected : (\d+)")


def count(hours: float) -> tuple[int, int, str]:
    """(requests, instructions, where skenario was imported from) of one reference run of `hours` under callgrind."""
    program = (
        f"import sys; sys.path.insert(0, {str(HERE)!r}); import reference; "
        f"import skenario; print(skenario.__file__, reference.run_reference({hours})['units'])"
    )
    command = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", sys.executable, "-c", program]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    found = _COLLECTED.search(done.stderr)
    if found is None:
        raise RuntimeError(f"callgrind printed no instruction count:\n{done.stderr[-2000:]}")
    where, requests = done.stdout.split()[-2:]
    return int(requests), int(found.group(1)), str(Path(where).parent)


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter).parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    with ThreadPoolExecutor(2) as pool:
        (short_n, short_ir, where), (long_n, long_ir, _) = pool.map(count, (SHORT_H, LONG_H))
    per_request = (long_ir - short_ir) / (long_n - short_n)
    between = long_n - short_n
    print(f"{per_request:,.0f} instructions per request ({between:,} requests between the runs), skenario at {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
