"""Tests of the benchmark scripts in `benchmarks/`: each model agrees with its peers, never a timing."""

from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
