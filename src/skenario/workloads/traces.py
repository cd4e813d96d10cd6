"""Trace replay: real traces turned into lazy iterators of absolute arrival times in ns.

Two kinds of trace exist, each in its own module:

* per-request traces list one timestamp per arrival (the Azure LLM trace): `timestamps`;
* per-interval traces give a count per time bucket: `counts` reads them from a CSV, `archives`
  from a compressed archive (the NASA per-second counts).

Both stream a row or an archive block at a time, so a month of trace never sits in memory, and
share the parsing and the `TraceError` of `tracefiles`. A replay checks the header and the first
row when it is created and later rows as it reads them; the `check_*` functions read, up front,
exactly the rows a replay with the same window will read, so a run can refuse a bad trace before
it starts instead of failing halfway. `time_scale` stretches time (2.0 makes the replay last
twice as long, at half the rate); `rate_scale` multiplies the request rate without moving the
trace's shape in time. This module gathers the public names in one place.
"""

from __future__ import annotations

from skenario.workloads.archives import NASA_MEMBER, check_archive_trace, nasa_arrivals
from skenario.workloads.counts import check_count_trace, count_arrivals
from skenario.workloads.timestamps import (
    AZURE_TIMESTAMP_COLUMN,
    azure_llm_arrivals,
    check_timestamp_trace,
    timestamp_arrivals,
)
from skenario.workloads.tracefiles import TraceError, TracePath, parse_datetime_ns, parse_number_ns

__all__ = [
    "AZURE_TIMESTAMP_COLUMN",
    "NASA_MEMBER",
    "TraceError",
    "TracePath",
    "azure_llm_arrivals",
    "check_archive_trace",
    "check_count_trace",
    "check_timestamp_trace",
    "count_arrivals",
    "nasa_arrivals",
    "parse_datetime_ns",
    "parse_number_ns",
    "timestamp_arrivals",
]
