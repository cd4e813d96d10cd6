"""Makes the benchmark scripts importable (`import mmc`, `import reference`) for the tests beside this file."""

import sys

from tests.benchmarks import BENCHMARKS

if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))
