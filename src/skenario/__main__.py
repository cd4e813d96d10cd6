"""The process's entry, for `skenario` and `python -m skenario`.

Ctrl-C before the command line has loaded ends the process quietly (status 130, as a shell reports
SIGINT) instead of printing a traceback of the import it cut short; a run stopped by a signal or
its memory budget (`Halt`) ends the process at once, its output flushed, without the interpreter's
shutdown freeing the heap object by object.
"""

import os
import signal
import sys
from types import FrameType


def _interrupted(signum: int, frame: FrameType | None) -> None:
    os._exit(128 + signum)


signal.signal(signal.SIGINT, _interrupted)  # set before the imports below, which it covers

from skenario.cli import cli  # noqa: E402
from skenario.errors import Halt  # noqa: E402

signal.signal(signal.SIGINT, signal.default_int_handler)


def main() -> None:
    try:
        cli()
    except Halt as halt:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        os._exit(halt.code if isinstance(halt.code, int) else 1)


if __name__ == "__main__":
    main()
