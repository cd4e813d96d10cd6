"""Taints and tolerations checked against the rules of the Kubernetes API, worked by hand.

Each case states the rule it checks (`v1.Toleration.ToleratesTaint`).
"""

from __future__ import annotations

import pytest

from skenario.scheduling.taints import Taint, TaintEffect, Toleration

NO_SCHEDULE = TaintEffect.NO_SCHEDULE
PREFER = TaintEffect.PREFER_NO_SCHEDULE
NO_EXECUTE = TaintEffect.NO_EXECUTE


@pytest.mark.parametrize(
    ("toleration", "taint", "tolerated"),
    [
        (Toleration("gpu", "Equal", "true", "NoSchedule"), Taint("gpu", NO_SCHEDULE, "true"), True),
        (Toleration("gpu", "Equal", "false", "NoSchedule"), Taint("gpu", NO_SCHEDULE, "true"), False),  # value
        (Toleration("gpu", "Exists", "", "NoSchedule"), Taint("gpu", NO_SCHEDULE, "anything"), True),
        (Toleration("gpu", "Exists", "", "NoExecute"), Taint("gpu", NO_SCHEDULE), False),  # effect differs
        (Toleration("gpu", "Exists"), Taint("gpu", NO_EXECUTE), True),  # empty effect: every effect
        (Toleration("", "Exists"), Taint("whatever", PREFER, "x"), True),  # empty key + Exists: all taints
        (Toleration("other", "Exists"), Taint("gpu", NO_SCHEDULE), False),  # key differs
        (Toleration("gpu", "", "v"), Taint("gpu", NO_SCHEDULE, "v"), True),  # empty operator means Equal
        (Toleration("gpu", "Bogus", "v"), Taint("gpu", NO_SCHEDULE, "v"), False),  # unknown operator
    ],
)
def test_a_toleration_tolerates_a_taint_as_the_api_says(toleration: Toleration, taint: Taint, tolerated: bool) -> None:
    assert toleration.tolerates(taint) is tolerated
