"""Results: summaries and digests of runs (issue #5 adds the run store and analysis)."""

from skenario.results.summary import Summary, summarize

__all__ = ["Summary", "summarize"]
