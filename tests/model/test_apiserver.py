"""The controllers behind the API server (`model/apiserver.py`): the disruption controller's arithmetic.

Drains, owners and the volume catalog run through a FakeTime scenario in tests/scenario/test_faketime.py.
"""

from __future__ import annotations

import pytest

from skenario.model.apiserver import DisruptionSpec, Owner, disruptions_allowed
from skenario.scheduling.objects import LabelSelector


def _pdb(min_available: int | str | None = None, max_unavailable: int | str | None = None) -> DisruptionSpec:
    return DisruptionSpec("default", LabelSelector(), min_available, max_unavailable)


@pytest.mark.parametrize(
    ("pdb", "healthy", "expected", "allowed"),
    [
        (_pdb(min_available=3), 5, 5, 2),  # 5 healthy, 3 must stay: 2 may go
        (_pdb(min_available=3), 3, 5, 0),  # at the bound: the eviction API answers 429
        (_pdb(max_unavailable="20%"), 10, 10, 2),  # 20% of 10 rounded up: 2 unavailable, 8 desired
        (_pdb(max_unavailable="30%"), 10, 10, 3),
        (_pdb(max_unavailable="25%"), 3, 3, 1),  # 0.75 rounded up: 1 unavailable, 2 desired
        (_pdb(min_available="50%"), 3, 3, 1),  # 1.5 rounded up: 2 desired
        (_pdb(min_available="50%"), 1, 3, 0),  # fewer healthy than desired: none, not negative
        (_pdb(max_unavailable=5), 2, 2, 2),  # desired floors at 0
        (_pdb(), 4, 4, 0),  # no bound: nothing may be disrupted
    ],
)
def test_disruptions_allowed_is_healthy_less_desired(
    pdb: DisruptionSpec, healthy: int, expected: int, allowed: int
) -> None:
    assert disruptions_allowed(pdb, healthy, expected) == allowed


def test_a_jobs_owner_wants_its_parallelism_until_its_completions_are_near() -> None:
    job = Owner("Job", "default", "batch", None, {}, {}, replicas=3, completions=5)
    assert job.wanted() == 3
    job.succeeded = 3
    assert job.wanted() == 2  # two completions left: two pods, not three
    job.succeeded = 5
    assert job.wanted() == 0
    replica_set = Owner("ReplicaSet", "default", "web", None, {}, {}, replicas=4)
    assert replica_set.wanted() == 4
    replica_set.deleted = True
    assert replica_set.wanted() == 0
