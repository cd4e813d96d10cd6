"""The VPA recommender against upstream kubernetes/autoscaler, case by case.

Each `test_upstream_*` restates one upstream unit test (named in its docstring) with its data; CPU
amounts are millicores, so upstream's "3.14 cores" is 3140 here. Other expected values are worked
out by hand from the formulas in `../shared/reference/autoscaler-algorithms.md` section 2, and the
hypothesis properties check what must hold for any input.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.autoscalers.vpa.recommender import (
    MAX_RESOURCE_AMOUNT,
    AggregateContainerState,
    ContainerResourcePolicy,
    Recommendation,
    cap_to_policy,
    confidence_multiplier_estimate,
    get_confidence,
    margin_estimate,
    min_resource_estimate,
    percentile_estimate,
    pod_min_cpu,
    recommend,
)
from skenario.core.time import DAY, MINUTE
from tests.autoscalers.vpa.harness import cpu_bucket_of, cpu_bucket_start, usage

# --- aggregate state and estimators (estimator_test.go, recommender_test.go) ------------------------


def confident_state(usage: float, every: int, count: int, start: int = 0) -> AggregateContainerState:
    state = AggregateContainerState()
    for i in range(count):
        state.add_cpu_sample(usage, start + i * every)
    return state


def test_cpu_samples_update_history_bounds() -> None:
    """addCPUSample: first/last sample start and the count, whatever order samples come in."""
    assert AggregateContainerState().first_sample_start is None
    state = AggregateContainerState()
    state.add_cpu_sample(100.0, 5 * MINUTE)
    state.add_cpu_sample(100.0, 2 * MINUTE)
    state.add_cpu_sample(100.0, 9 * MINUTE)
    assert (state.first_sample_start, state.last_sample_start, state.total_samples_count) == (2 * MINUTE, 9 * MINUTE, 3)


def test_upstream_percentile_estimator() -> None:
    """TestPercentileEstimator: CPU samples 1, 2, 3 cores; the 20th percentile is 1 core within 5%."""
    state = AggregateContainerState()
    for cores in (1.0, 2.0, 3.0):
        state.add_cpu_sample(cores * 1000, 0)
    assert percentile_estimate(state, 0.2) == pytest.approx(1000, rel=0.05)


def test_upstream_confidence_multiplier() -> None:
    """TestConfidenceMultiplier: no history gives MaxResourceAmount (exponent +1) or 0 (exponent -1);
    9 samples 2 min apart give confidence 9 / (60 x 24) = 0.00625 and 3.14 x (1 + 0.1/0.00625)^2 = 907.46."""
    empty = AggregateContainerState()
    assert get_confidence(empty) == 0.0
    assert confidence_multiplier_estimate(3140, 1.0, 1.0, get_confidence(empty)) == MAX_RESOURCE_AMOUNT
    assert confidence_multiplier_estimate(3140, 1.0, -1.0, get_confidence(empty)) == 0
    state = confident_state(1000.0, 2 * MINUTE, 9)
    assert get_confidence(state, DAY) == 0.00625
    assert confidence_multiplier_estimate(3140, 0.1, 2.0, get_confidence(state, DAY)) == 907_460


def test_upstream_confidence_multiplier_with_custom_interval() -> None:
    """TestConfidenceMultiplierWithCustomInterval: an 18 min interval gives confidence 9/18 = 0.5 and
    3.14 x 1.2^2 = 4.5216 cores, truncated to 4521m."""
    state = confident_state(1000.0, 2 * MINUTE, 9)
    assert get_confidence(state, 18 * MINUTE) == 0.5
    assert confidence_multiplier_estimate(3140, 0.1, 2.0, get_confidence(state, 18 * MINUTE)) == 4521


def test_upstream_confidence_multiplier_no_history() -> None:
    """TestConfidenceMultiplierNoHistory: multiplier 0.1, exponent 2 with no history is the maximum."""
    assert confidence_multiplier_estimate(3140, 0.1, 2.0, get_confidence(AggregateContainerState())) == 10**14


def test_confidence_is_the_lesser_of_span_and_count() -> None:
    """getConfidence: one sample a minute for a day is 1; two samples a day apart are limited by count."""
    assert get_confidence(confident_state(1.0, MINUTE, 1441)) == 1.0
    sparse = confident_state(1.0, DAY, 2)
    assert get_confidence(sparse) == 2 / 1440


def test_upstream_margin_estimator() -> None:
    """TestMarginEstimator: a 10% margin on 3.14 cores is 3.454 cores."""
    assert margin_estimate(3140, 0.1) == 3454


def test_margin_truncates() -> None:
    """The reference: base + int(base x 0.15); 587 = 511 + int(76.65)."""
    assert margin_estimate(511, 0.15) == 587


def test_upstream_min_resources_estimator() -> None:
    """TestMinResourcesEstimator: 3.14 cores with a 0.2-core minimum stays 3.14 cores."""
    assert min_resource_estimate(3140, 200) == 3140
    assert min_resource_estimate(1, 200) == 200


def test_upstream_min_resources_applied_and_split() -> None:
    """TestMinResourcesApplied / TestMinResourcesSplitAcrossContainers: 25 millicores for the pod,
    12 (int 12.5) each for two containers."""
    assert pod_min_cpu(25.0, 1) == 25
    assert pod_min_cpu(25.0, 2) == 12
    assert min_resource_estimate(1, pod_min_cpu(25.0, 1)) == 25
    assert min_resource_estimate(1, pod_min_cpu(25.0, 2)) == 12
    with pytest.raises(ValueError):
        pod_min_cpu(25.0, 0)


def test_recommend_with_no_history_is_the_minimum() -> None:
    """No samples: every percentile is 0, so target and both bounds are the 25m minimum."""
    assert recommend(AggregateContainerState()) == Recommendation(25, 25, 25, 25)


def test_recommend_idle_container_gets_the_minimum() -> None:
    """Usage of 1m sits in bucket 0, whose end is 10m; 10 + int(1.5) = 11 < 25, so the target is 25."""
    rec = recommend(confident_state(1.0, MINUTE, 1440))
    assert rec.target == 25 and rec.lower_bound == 25


def test_recommend_steady_usage_by_hand() -> None:
    """A day of 500m once a minute (1440 samples, span 1439 min). Every percentile is the end of the
    bucket holding 500m; plus 15% (truncated) that is the target; the upper bound multiplies by
    1 + 1/c and the lower by (1 + 0.001/c)^-2, with c = min(1439/1440, 1440/1440)."""
    state = confident_state(500.0, MINUTE, 1440)
    bucket_end = cpu_bucket_start(cpu_bucket_of(500.0) + 1)  # bucket 25 ends at ~511.1m
    base = int(bucket_end)
    target = base + int(base * 0.15)
    c = 1439 / 1440
    rec = recommend(state)
    assert (base, target) == (511, 587)
    assert rec.target == target
    assert rec.uncapped_target == target
    assert rec.upper_bound == int(target * (1 + 1 / c)) == 1174
    assert rec.lower_bound == int(target * (1 + 0.001 / c) ** -2) == 585


def test_recommend_splits_minimum_across_containers() -> None:
    """Five containers share the 25m pod minimum, 5m each, below the idle container's own 11m (10 + 15%)."""
    rec = recommend(confident_state(1.0, MINUTE, 1440), containers=5)
    assert rec.target == 11


def test_request_weighted_samples_match_older_releases() -> None:
    """Before Feb 2025 a CPU sample weighed max(request in cores, 0.1). 100m used under a 2-core request
    weighs 2.0 against 0.1 for 5000m with no request, so the 90th percentile is 100m's bucket end;
    with today's constant weight 0.1 both count alike and it is 5000m's bucket end."""
    legacy = AggregateContainerState(request_weighted=True)
    current = AggregateContainerState()
    for state in (legacy, current):
        state.add_cpu_sample(100.0, 0, request_millicores=2000.0)
        state.add_cpu_sample(5000.0, 0, request_millicores=0.0)
    assert legacy.cpu_usage.percentile(0.9) == pytest.approx(cpu_bucket_start(cpu_bucket_of(100.0) + 1))
    assert current.cpu_usage.percentile(0.9) == pytest.approx(cpu_bucket_start(cpu_bucket_of(5000.0) + 1))


# --- capping to the policy (capping_test.go) --------------------------------------------------------


def test_upstream_recommendation_capped_to_min_max_policy() -> None:
    """TestRecommendationCappedToMinMaxPolicy (CPU): target 300 / lower 200 / upper 500 with
    minAllowed 400 and maxAllowed 450 become 400 / 400 / 450."""
    rec = Recommendation(300, 200, 500, 300)
    capped = cap_to_policy(rec, ContainerResourcePolicy(min_allowed=400, max_allowed=450))
    assert capped == Recommendation(400, 400, 450, 300)


@pytest.mark.parametrize(
    ("policy", "global_max", "expected"),
    [
        (None, None, Recommendation(42, 31, 53, 42)),
        (ContainerResourcePolicy(min_allowed=50), None, Recommendation(50, 50, 53, 42)),
        (ContainerResourcePolicy(max_allowed=40), None, Recommendation(40, 31, 40, 42)),
        (None, 40, Recommendation(40, 31, 40, 42)),
        (ContainerResourcePolicy(min_allowed=35), 50, Recommendation(42, 35, 50, 42)),
        (ContainerResourcePolicy(max_allowed=40), 30, Recommendation(40, 31, 40, 42)),
    ],
)
def test_upstream_apply_vpa_policy(
    policy: ContainerResourcePolicy | None, global_max: int | None, expected: Recommendation
) -> None:
    """TestApplyVPAPolicy (CPU parts): recommendation 42m / 31m / 53m; the uncapped target stays 42m;
    a policy maximum wins over the global one."""
    assert cap_to_policy(Recommendation(42, 31, 53, 42), policy, global_max) == expected


def test_zero_policy_bounds_are_unset() -> None:
    """maybeCapToMin/Max ignore a zero quantity."""
    rec = Recommendation(42, 31, 53, 42)
    assert cap_to_policy(rec, ContainerResourcePolicy(min_allowed=0, max_allowed=0), 10) == rec


def test_recommend_applies_policy_and_keeps_uncapped_target() -> None:
    """The capping post-processor runs after estimation: 587m capped at 300m, uncapped target 587m."""
    rec = recommend(confident_state(500.0, MINUTE, 1440), policy=ContainerResourcePolicy(max_allowed=300))
    assert (rec.target, rec.lower_bound, rec.upper_bound, rec.uncapped_target) == (300, 300, 300, 587)


# --- properties -------------------------------------------------------------------------------------


samples = st.lists(st.tuples(usage, st.integers(min_value=0, max_value=30 * DAY)), min_size=1, max_size=60)


@settings(max_examples=150, deadline=None)
@given(
    samples,
    st.integers(min_value=1, max_value=4),
    st.one_of(st.none(), st.integers(min_value=0, max_value=5000)),
    st.one_of(st.none(), st.integers(min_value=0, max_value=5000)),
)
def test_bounds_bracket_target(
    data: list[tuple[float, int]], containers: int, min_allowed: int | None, max_allowed: int | None
) -> None:
    """lower <= target <= upper for any history, split and policy (capping is monotone)."""
    state = AggregateContainerState()
    for value, t in data:
        state.add_cpu_sample(value, t)
    policy = ContainerResourcePolicy(min_allowed, max_allowed)
    rec = recommend(state, containers=containers, policy=policy)
    assert rec.lower_bound <= rec.target <= rec.upper_bound
    assert rec.lower_bound >= 0 and rec.upper_bound <= MAX_RESOURCE_AMOUNT
