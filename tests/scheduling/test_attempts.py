"""Which pods' attempts keep their plugin results: names and shell patterns."""

from __future__ import annotations

from skenario.scheduling.attempts import name_matcher


def test_names_and_shell_patterns_select_pods() -> None:
    assert name_matcher([]) is None
    match = name_matcher(["web-1", "job-7-*", "batch-?"])
    assert match is not None
    assert [match(n) for n in ("web-1", "web-10", "job-7-0", "job-70", "batch-a", "batch-ab")] == [
        True, False, True, False, True, False,
    ]  # fmt: skip
    exact = name_matcher(["a[1]"])  # brackets are a pattern: a1, not the literal name
    assert exact is not None and exact("a1") and not exact("a[1]")
