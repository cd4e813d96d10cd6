"""What every batch trace reader gives the scheduler, and the checked CSV reading they share.

A batch trace is read in full when its reader is built, so a bad record is one `TraceError` that
names the file, the record, the field and the value before a run starts. Readers hand out pods
sorted by arrival (then name) and node specs in file order.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Protocol

from skenario.scheduling.objects import NodeSpec, PodSpec
from skenario.workloads.tracefiles import TraceError, TracePath, csv_records

MIB = 1024 * 1024


@dataclass(frozen=True, slots=True)
class TracePod:
    """One pod of a batch trace: what it asks for, when it arrives and how long it runs once bound."""

    spec: PodSpec
    created_at: int  # ns from the start of the trace
    duration: int | None  # ns it runs once bound; None: until the end of the simulation
    job: str | None = None
    queue: str | None = None


class TraceReader(Protocol):
    """A batch trace, checked in full: the nodes it describes (maybe none) and its pods."""

    @property
    def path(self) -> Path: ...

    def nodes(self) -> list[NodeSpec]:
        """The nodes, in file order (empty when the format describes none)."""
        ...

    def pods(self) -> list[TracePod]:
        """Every pod, sorted by (created_at, name); names are unique."""
        ...

    def pod_stream(self) -> PodStream:
        """The same pods as a replay takes them: a reader may make them only then."""
        ...


class PodStream(Protocol):
    """A trace's pods as a replay takes them: how many there are, the first and last arrival (ns), and the pods in
    (created_at, name) order, read afresh by each iteration."""

    @property
    def count(self) -> int: ...
    @property
    def first_created(self) -> int: ...
    @property
    def last_created(self) -> int: ...
    def __iter__(self) -> Iterator[TracePod]: ...


@dataclass(frozen=True)
class ListedPods:
    """A `PodStream` over pods already read, sorted as `sorted_pods` sorts them."""

    pods: Sequence[TracePod]

    @property
    def count(self) -> int:
        return len(self.pods)

    @property
    def first_created(self) -> int:
        return self.pods[0].created_at if self.pods else 0

    @property
    def last_created(self) -> int:
        return self.pods[-1].created_at if self.pods else 0

    def __iter__(self) -> Iterator[TracePod]:
        return iter(self.pods)


class LoadedTrace:
    """A trace whose nodes and pods were read when it was built; each call returns a new list."""

    def __init__(
        self, path: TracePath, nodes_path: TracePath | None, nodes: list[NodeSpec], pods: list[TracePod]
    ) -> None:
        self.path = Path(path)
        self.nodes_path = None if nodes_path is None else Path(nodes_path)
        self._nodes = nodes
        self._pods = pods

    def nodes(self) -> list[NodeSpec]:
        return list(self._nodes)

    def pods(self) -> list[TracePod]:
        return list(self._pods)

    def pod_stream(self) -> PodStream:
        """The pods as a replay takes them (`PodStream`)."""
        return ListedPods(self._pods)

    def __repr__(self) -> str:
        nodes = "" if self.nodes_path is None else f", nodes_path={str(self.nodes_path)!r}"
        return f"{type(self).__name__}({str(self.path)!r}{nodes}: {len(self._pods)} pods, {len(self._nodes)} nodes)"


class UniqueNames:
    """Remembers where each name was first seen, and refuses a second use of it."""

    def __init__(self, file: str, what: str) -> None:
        self.file = file
        self.what = what
        self._first: dict[str, str | int] = {}  # where each name was first seen: a record, or a CSV line

    def claim(self, name: str, record: str | None, line: int | None = None, field: str = "name") -> None:
        """Claim `name` for `record` (None: CSV line `line`, which a location already shows)."""
        first = self._first.get(name)
        if first is not None:
            where = "" if record is None else f"{record}: "
            seen = f"line {first}" if isinstance(first, int) else first
            raise TraceError(
                f"{where}{self.what} name '{name}' is already used by {seen}",
                file=self.file,
                line=line,
                field=field,
                value=name,
            )
        self._first[name] = record if record is not None else (line or 0)


def sorted_pods(pods: Iterable[TracePod]) -> list[TracePod]:
    """Pods by arrival, ties broken by name, so a replay's order never depends on the file's."""
    return sorted(pods, key=lambda pod: (pod.created_at, pod.spec.name))


@dataclass(frozen=True)
class CsvTable:
    """The data rows of a CSV file with a header, read once as they come, and where each column is."""

    file: str
    columns: dict[str, int]  # column name -> index, for every column the header has
    rows: Iterator[tuple[int, list[str]]]  # (line number, stripped cells); the end checks there was one


def read_csv(path: TracePath, required: Sequence[str], known: Sequence[str] | None = None) -> CsvTable:
    """Open a CSV file, checking the header names `required` (and, if `known` is given, nothing else).

    Refuses a missing file, an empty file, a repeated or missing column at once; a row whose field
    count differs from the header's, and a header without data rows, as `rows` is read. Blank lines
    are skipped.
    """
    file = str(path)
    records = csv_records(path)
    header = next(records, None)
    if header is None:
        raise TraceError("empty trace file: no header and no data rows", file=file, line=1)
    names = [name.strip() for name in header[1]]
    columns: dict[str, int] = {}
    for index, name in enumerate(names):
        if name in columns:
            raise TraceError(f"column '{name}' appears twice in the header", file=file, line=1, field=name)
        if known is not None and name not in known:
            raise TraceError(f"unknown column '{name}' (columns: {', '.join(known)})", file=file, line=1, field=name)
        columns[name] = index
    for column in required:
        if column not in columns:
            raise TraceError(
                f"no column '{column}' (the header has {', '.join(names)})", file=file, line=1, field=column
            )
    return CsvTable(file, columns, _data_rows(records, len(names), file))


def _data_rows(records: Iterator[tuple[int, list[str]]], width: int, file: str) -> Iterator[tuple[int, list[str]]]:
    """The data rows as they are read: a trace of 150,000 pods is never a table of strings in memory."""
    empty = True
    for line, row in records:
        if not row:
            continue
        if len(row) != width:
            raise TraceError(f"row has {len(row)} fields, the header has {width}", file=file, line=line)
        empty = False
        yield line, [cell.strip() for cell in row]
    if empty:
        raise TraceError("the trace has a header but no data rows", file=file, line=1)


def bad_cell(table: CsvTable, line: int, column: str, value: str, problem: str) -> TraceError:
    """A TraceError for one cell, the column as its field: `problem` follows the quoted value ("'-3' is negative")."""
    return TraceError(f"'{value}' {problem}", file=table.file, line=line, field=column, value=value)


def natural(table: CsvTable, line: int, column: str, text: str) -> int:
    """A whole number >= 0 written in plain ASCII digits."""
    if text.isdigit() and text.isascii():
        return int(text)
    if text.startswith("-") and text[1:].isdigit() and text[1:].isascii():
        raise bad_cell(table, line, column, text, "is negative")
    raise bad_cell(table, line, column, text, "is not a whole number")


_SIGNED = re.compile(r"[+-]?[0-9]+")
_DECIMAL = re.compile(r"[0-9]+(?:\.[0-9]*)?|\.[0-9]+")


def signed(table: CsvTable, line: int, column: str, text: str) -> int:
    """A whole number, maybe negative."""
    if _SIGNED.fullmatch(text) is None:
        raise bad_cell(table, line, column, text, "is not a whole number")
    return int(text)


# A trace's requests take few distinct values: each is parsed once and shared by every pod asking for it
# (an int past 256 costs 32 bytes per pod otherwise: 9 MiB of a 150,000-pod replay's live pods).
_QUANTITIES = 4096


@functools.lru_cache(maxsize=_QUANTITIES)
def cpu_millicores(text: str) -> int | None:
    """A Kubernetes CPU quantity (`500m`, `2`, `0.25`) as whole millicores; None if not one."""
    milli = text.endswith("m")
    number = text[:-1] if milli else text
    if number.isdigit() and number.isascii():  # whole cores or millicores: no Fraction needed
        return int(number) * (1 if milli else 1000)
    if _DECIMAL.fullmatch(number) is None:
        return None
    value = Fraction(number) * (1 if milli else 1000)
    return value.numerator if value.denominator == 1 else None


_BYTES = re.compile(r"([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)|[eE]([+-]?[0-9]+))?")
_BYTE_SUFFIX = {
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    **{suffix: 1024**power for power, suffix in enumerate(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"), start=1)},
}


@functools.lru_cache(maxsize=_QUANTITIES)
def memory_bytes(text: str) -> int | None:
    """A Kubernetes byte quantity (`512Mi`, `2Gi`, `1G`, `1e9`, `1048576`) as whole bytes; None if not one."""
    match = _BYTES.fullmatch(text)
    if match is None:
        return None
    number, suffix, exponent = match.groups()
    if number.isdigit() and not exponent:  # whole bytes or a whole number of a suffix: no Fraction needed
        return int(number) * (_BYTE_SUFFIX[suffix] if suffix else 1)
    if suffix:
        value = Fraction(number) * _BYTE_SUFFIX[suffix]
    elif exponent:
        if abs(int(exponent)) > 30:  # a typo, not a memory size; keep Fraction from building huge numbers
            return None
        value = Fraction(number) * Fraction(10) ** int(exponent)
    else:
        value = Fraction(number)
    return value.numerator if value.denominator == 1 else None
