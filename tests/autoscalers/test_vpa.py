"""The VPA recommender and updater against upstream kubernetes/autoscaler, case by case.

Each `test_upstream_*` restates one upstream unit test (named in its docstring) with its data; CPU
amounts are millicores, so upstream's "3.14 cores" is 3140 here. Other expected values are worked
out by hand from the formulas in `../shared/reference/autoscaler-algorithms.md` section 2, and the
hypothesis properties check what must hold for any input.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.autoscalers.vpa import (
    MAX_RESOURCE_AMOUNT,
    AggregateContainerState,
    ContainerResourcePolicy,
    EvictionRestriction,
    PodPriority,
    PodState,
    Recommendation,
    RecommendedResources,
    UpdateMode,
    UpdaterConfig,
    cap_to_policy,
    confidence_multiplier_estimate,
    get_confidence,
    get_update_priority,
    is_update_admitted,
    margin_estimate,
    min_resource_estimate,
    percentile_estimate,
    pod_min_cpu,
    pods_to_evict,
    recommend,
    request_at_creation,
    sort_by_update_priority,
)
from skenario.autoscalers.vpa_histogram import (
    DecayingHistogram,
    ExponentialHistogramOptions,
    Histogram,
    LinearHistogramOptions,
    cpu_histogram_options,
)
from skenario.core.time import DAY, HOUR, MINUTE, SECOND

# histogram_test.go: linear buckets of 1.0 up to 10.0, epsilon 1e-15.
WEIGHT_EPSILON = 1e-15
VALUE_EPSILON = 1e-15
# decaying_histogram_test.go startTime = time.Unix(1234567890, 0).
START = 1234567890 * SECOND
M = 1_000_000  # memory "M" (10^6 bytes) in the updater's milli-units is 10^9


def linear_options() -> LinearHistogramOptions:
    return LinearHistogramOptions(10.0, 1.0, WEIGHT_EPSILON)


def cpu_bucket_start(n: int) -> float:
    """Bucket n's start by the reference's formula: first * (ratio^n - 1) / (ratio - 1), in millicores."""
    return 0.0 if n == 0 else 10.0 * (1.05**n - 1) / 0.05


def cpu_bucket_of(v: float) -> int:
    """The bucket a value falls in, by the reference's formula floor(log_ratio(v (ratio-1) / first + 1))."""
    return 0 if v < 10.0 else math.floor(math.log(v * 0.05 / 10.0 + 1) / math.log(1.05))


# --- bucket schemes (histogram_options_test.go) ----------------------------------------------------


def test_upstream_linear_histogram_options() -> None:
    """TestLinearHistogramOptions: max 5.0, bucket 0.3, epsilon 0.001."""
    o = LinearHistogramOptions(5.0, 0.3, 0.001)
    assert o.epsilon == 0.001
    assert o.num_buckets == 18
    assert o.bucket_start(0) == 0.0
    assert o.bucket_start(17) == pytest.approx(5.1, rel=1e-15)
    assert o.find_bucket(-1.0) == 0
    assert o.find_bucket(0.0) == 0
    assert o.find_bucket(1.3) == 4
    assert o.find_bucket(100.0) == 17


def test_upstream_exponential_histogram_options() -> None:
    """TestExponentialHistogramOptions: max 500, first bucket 40, ratio 1.5, epsilon 0.001."""
    o = ExponentialHistogramOptions(500.0, 40.0, 1.5, 0.001)
    assert o.epsilon == 0.001
    assert o.num_buckets == 6
    assert [o.bucket_start(b) for b in range(6)] == [0.0, 40.0, 100.0, 190.0, 325.0, 527.5]
    assert o.find_bucket(-1.0) == 0
    assert o.find_bucket(39.99) == 0
    assert o.find_bucket(40.0) == 1
    assert o.find_bucket(100.0) == 2
    assert o.find_bucket(900.0) == 5


def test_bad_options_are_rejected() -> None:
    """NewLinear/NewExponentialHistogramOptions return an error for these."""
    with pytest.raises(ValueError):
        LinearHistogramOptions(0.0, 1.0, 0.1)
    with pytest.raises(ValueError):
        ExponentialHistogramOptions(10.0, 1.0, 1.0, 0.1)
    with pytest.raises(IndexError):
        linear_options().bucket_start(11)


def test_cpu_bucket_scheme() -> None:
    """The reference: first bucket 0.01 core (10m), ratio 1.05, max 1000 cores, 176 buckets, epsilon 1e-4."""
    o = cpu_histogram_options()
    assert o.num_buckets == 176
    assert o.epsilon == 1e-4
    assert o.bucket_start(1) == pytest.approx(10.0)
    assert o.bucket_start(2) == pytest.approx(20.5)  # 10 + 10 * 1.05
    assert o.bucket_start(3) == pytest.approx(31.525)  # 20.5 + 10 * 1.05^2
    assert o.find_bucket(9.99) == 0
    assert o.find_bucket(10.0) == 1
    assert o.find_bucket(20.4) == 1
    assert o.find_bucket(20.6) == 2
    assert o.bucket_start(174) < 1_000_000.0 <= o.bucket_start(175)
    assert o.find_bucket(5e9) == 175  # clamped to the last bucket


# --- histogram (histogram_test.go) -----------------------------------------------------------------


def test_upstream_percentiles_empty_histogram() -> None:
    """TestPercentilesEmptyHistogram: 0.0 for any percentile."""
    h = Histogram(linear_options())
    assert h.is_empty
    for p in (-0.5, 0.0, 0.5, 1.0, 1.5):
        assert h.percentile(p) == 0.0


def test_upstream_percentiles() -> None:
    """TestPercentiles: samples {1: 1, 2: 2, 3: 3, 4: 4}; a percentile is the end of its bucket."""
    h = Histogram(linear_options())
    for i in range(1, 5):
        h.add_sample(float(i), float(i), 0)
    expected = {0.0: 2, 0.1: 2, 0.2: 3, 0.3: 3, 0.4: 4, 0.5: 4, 0.6: 4, 0.7: 5, 0.8: 5, 0.9: 5, 1.0: 5}
    for p, value in expected.items():
        assert h.percentile(p) == pytest.approx(value, rel=VALUE_EPSILON), p


def test_upstream_percentile_out_of_bounds() -> None:
    """TestPercentileOutOfBounds: below 0 gives the minimum, above 1 the maximum; the last bucket
    answers with its start."""
    h = Histogram(LinearHistogramOptions(1.0, 0.1, WEIGHT_EPSILON))
    h.add_sample(0.1, 0.1, 0)
    h.add_sample(0.2, 0.2, 0)
    assert h.percentile(-0.1) == pytest.approx(0.2, rel=VALUE_EPSILON)
    assert h.percentile(1.1) == pytest.approx(0.3, rel=VALUE_EPSILON)
    h.add_sample(0.0, 0.1, 0)
    h.add_sample(1.0, 0.2, 0)
    assert h.percentile(-0.1) == pytest.approx(0.1, rel=VALUE_EPSILON)
    assert h.percentile(1.1) == pytest.approx(1.0, rel=VALUE_EPSILON)


def test_upstream_empty_histogram() -> None:
    """TestEmptyHistogram: a bucket under epsilon counts as empty; subtraction floors at zero."""
    h = Histogram(LinearHistogramOptions(1.0, 0.1, WEIGHT_EPSILON))
    assert h.is_empty
    h.add_sample(0.1, WEIGHT_EPSILON * 2.5, 0)
    assert not h.is_empty
    h.subtract_sample(0.1, WEIGHT_EPSILON, 0)
    assert not h.is_empty
    h.subtract_sample(0.1, WEIGHT_EPSILON, 0)
    assert h.is_empty
    # safeSubtract: what falls below epsilon is zeroed, in the bucket and in the total.
    assert h.bucket_weight(1) == 0.0 and h.total_weight == 0.0


def test_subtracting_the_top_sample_lowers_the_maximum() -> None:
    """updateMinAndMaxBucket after SubtractSample: above 1 a percentile is the remaining maximum's end."""
    h = Histogram(linear_options())
    h.add_sample(1.0, 1.0, 0)
    h.add_sample(5.0, 1.0, 0)
    assert h.percentile(1.1) == 6.0
    h.subtract_sample(5.0, 1.0, 0)
    assert h.percentile(1.1) == 2.0
    h.subtract_sample(1.0, 1.0, 0)
    assert h.is_empty and h.percentile(1.1) == 0.0


def test_upstream_non_empty_on_epsilon_addition() -> None:
    """TestNonEmptyOnEpsilonAddition: tiny samples elsewhere do not make a non-empty histogram empty."""
    h = Histogram(LinearHistogramOptions(1.0, 0.1, WEIGHT_EPSILON))
    h.add_sample(9.9, WEIGHT_EPSILON * 3, 0)
    assert not h.is_empty
    h.add_sample(0.1, WEIGHT_EPSILON * 0.3, 0)
    assert not h.is_empty
    h.add_sample(999.9, WEIGHT_EPSILON * 0.3, 0)
    assert not h.is_empty


def test_negative_weight_is_rejected() -> None:
    """AddSample panics on a negative weight."""
    with pytest.raises(ValueError):
        Histogram(linear_options()).add_sample(1.0, -1.0, 0)
    with pytest.raises(ValueError):
        DecayingHistogram(linear_options(), HOUR).add_sample(1.0, -1.0, 0)


# --- decaying histogram (decaying_histogram_test.go) -----------------------------------------------


def test_upstream_percentiles_empty_decaying_histogram() -> None:
    """TestPercentilesEmptyDecayingHistogram."""
    h = DecayingHistogram(linear_options(), HOUR)
    for p in (-0.5, 0.0, 0.5, 1.0, 1.5):
        assert h.percentile(p) == 0.0


def test_upstream_simple_decay() -> None:
    """TestSimpleDecay: weight 1000 decays below a weight-1 sample 20 half-lives later (2^20 x 0.001 > 1)."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(2, 1000, START)
    h.add_sample(1, 1, START + 20 * HOUR)
    assert h.percentile(0.999) == pytest.approx(2, rel=VALUE_EPSILON)
    assert h.percentile(1.0) == pytest.approx(3, rel=VALUE_EPSILON)


def test_upstream_longterm_decay() -> None:
    """TestLongtermDecay: after more than 2^100 of relative decay the old sample is gone."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(2, 1, START)
    h.add_sample(1, 1, START + 101 * HOUR)
    assert h.percentile(1.0) == pytest.approx(2, rel=VALUE_EPSILON)


def test_upstream_decaying_histogram_percentiles() -> None:
    """TestDecayingHistogramPercentiles: samples 1..4 with weights 1..4, one half-life apart, weigh
    1/8, 2/4, 3/2, 4/1: percentiles 0-2% in [1, 2), 3-10% in [2, 3), 11-34% in [3, 4), 35-100% in [4, 5)."""
    h = DecayingHistogram(linear_options(), HOUR)
    for i in range(1, 5):
        h.add_sample(float(i), float(i), START + (i - 1) * HOUR)
    expected = {0.00: 2, 0.02: 2, 0.03: 3, 0.10: 3, 0.11: 4, 0.34: 4, 0.35: 5, 1.00: 5}
    for p, value in expected.items():
        assert h.percentile(p) == pytest.approx(value, rel=VALUE_EPSILON), p


def test_upstream_no_decay() -> None:
    """TestNoDecay: at one timestamp a decaying histogram answers as a plain one."""
    h = DecayingHistogram(linear_options(), HOUR)
    for i in range(1, 5):
        h.add_sample(float(i), float(i), START)
    expected = {0.0: 2, 0.1: 2, 0.2: 3, 0.3: 3, 0.4: 4, 0.5: 4, 0.6: 4, 0.7: 5, 0.8: 5, 0.9: 5, 1.0: 5}
    for p, value in expected.items():
        assert h.percentile(p) == pytest.approx(value, rel=VALUE_EPSILON), p


def test_decay_halves_weight_per_half_life() -> None:
    """The reference: weight x 2^((t - ref) / halfLife); one half-life older counts half, two a quarter."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(1.5, 1.0, 3 * HOUR)
    h.add_sample(2.5, 1.0, 2 * HOUR)
    h.add_sample(3.5, 1.0, 1 * HOUR)
    assert h.bucket_weight(2) == h.bucket_weight(1) / 2
    assert h.bucket_weight(3) == h.bucket_weight(1) / 4


def test_reference_timestamp_shifts_to_a_rounded_half_life() -> None:
    """decayFactor: a sample more than 100 half-lives past the reference moves the reference to the
    sample time rounded to a whole half-life (Go Time.Round: halves up). 1234567890 s is
    342935 h + 1890 s, so it rounds up to 342936 h; 1200 s later still rounds to 342936 h."""
    h = DecayingHistogram(linear_options(), HOUR)
    assert h.reference_timestamp == 0
    h.add_sample(1.0, 1.0, 50 * HOUR)
    assert h.reference_timestamp == 0  # within 100 half-lives: no shift
    h.add_sample(1.0, 1.0, START)
    assert h.reference_timestamp == 342936 * HOUR
    h.add_sample(1.0, 1.0, START + 1200 * SECOND)
    assert h.reference_timestamp == 342936 * HOUR
    h.add_sample(2.0, 1.0, 342936 * HOUR + 100 * HOUR + 1)  # 1 ns past the limit, rounds down
    assert h.reference_timestamp == (342936 + 100) * HOUR
    # Weights are relative: the three samples at ~START now weigh ~2^-100 each, far below epsilon.
    assert h.percentile(0.0) == pytest.approx(3.0)


def test_reference_timestamp_rounds_halves_up() -> None:
    """Go's Time.Round rounds a halfway value up: 200 h 30 min becomes 201 h, 200 h 29 min 59 s 200 h."""
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(1.0, 1.0, 200 * HOUR + 30 * MINUTE)
    assert h.reference_timestamp == 201 * HOUR
    h = DecayingHistogram(linear_options(), HOUR)
    h.add_sample(1.0, 1.0, 200 * HOUR + 30 * MINUTE - SECOND)
    assert h.reference_timestamp == 200 * HOUR


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


# --- updater priority (priority_processor_test.go) ---------------------------------------------------


def one(
    target: int, lower: int | None = None, upper: int | None = None, mem: tuple[int, ...] = ()
) -> RecommendedResources:
    """A recommendation for CPU (milli) and optionally memory (target, lower, upper in milli-bytes)."""
    t: dict[str, int] = {"cpu": target}
    lo: dict[str, int] = {} if lower is None else {"cpu": lower}
    up: dict[str, int] = {} if upper is None else {"cpu": upper}
    if mem:
        t["memory"] = mem[0]
        if len(mem) == 3:
            lo["memory"], up["memory"] = mem[1], mem[2]
    return RecommendedResources(t, lo, up)


C1, C2 = "test-container", "test-container-2"
PRIORITY_CASES = [
    ("simple scale up", {C1: {"cpu": 2000}}, {C1: one(10000)}, PodPriority(False, True, 4.0)),
    ("simple scale down", {C1: {"cpu": 4000}}, {C1: one(2000)}, PodPriority(False, False, 0.5)),
    ("no resource diff", {C1: {"cpu": 2000}}, {C1: one(2000)}, PodPriority(False, False, 0.0)),
    ("scale up on milliquantities", {C1: {"cpu": 10}}, {C1: one(900)}, PodPriority(False, True, 89.0)),
    (
        "scale up outside recommended range",
        {C1: {"cpu": 4000}},
        {C1: one(10000, 6000, 14000)},
        PodPriority(True, True, 1.5),
    ),
    (
        "scale down outside recommended range",
        {C1: {"cpu": 8000}},
        {C1: one(2000, 1000, 3000)},
        PodPriority(True, False, 0.75),
    ),
    (
        "multiple resources, both scale up",
        {C1: {"cpu": 3000, "memory": 10 * M * 1000}},
        {C1: one(6000, mem=(20 * M * 1000,))},
        PodPriority(False, True, 2.0),
    ),
    (
        "multiple resources, only one scale up",
        {C1: {"cpu": 4000, "memory": 10 * M * 1000}},
        {C1: one(2000, mem=(20 * M * 1000,))},
        PodPriority(False, True, 1.5),
    ),
    (
        "multiple resources, both scale down",
        {C1: {"cpu": 4000, "memory": 20 * M * 1000}},
        {C1: one(2000, mem=(10 * M * 1000,))},
        PodPriority(False, False, 1.0),
    ),
    (
        "multiple resources, one outside recommended range",
        {C1: {"cpu": 4000, "memory": 20 * M * 1000}},
        {C1: one(2000, 1000, 3000, mem=(10 * M * 1000, 5 * M * 1000, 30 * M * 1000))},
        PodPriority(True, False, 1.0),
    ),
    (
        "multiple containers, both scale up",
        {C1: {"cpu": 1000}, C2: {"cpu": 2000}},
        {C1: one(4000), C2: one(8000)},
        PodPriority(False, True, 3.0),
    ),
    (
        "multiple containers, both scale down",
        {C1: {"cpu": 3000}, C2: {"cpu": 7000}},
        {C1: one(1000), C2: one(2000)},
        PodPriority(False, False, 0.7),
    ),
    (
        "multiple containers, both scale up, one outside range",
        {C1: {"cpu": 1000}, C2: {"cpu": 2000}},
        {C1: one(4000, 1000), C2: one(8000, 3000, 10000)},
        PodPriority(True, True, 3.0),
    ),
    (
        "multiple containers, multiple resources",
        {C1: {"cpu": 6000, "memory": 10 * M * 1000}, C2: {"cpu": 4000, "memory": 30 * M * 1000}},
        {C1: one(8000, mem=(20 * M * 1000,)), C2: one(7000, mem=(30 * M * 1000,))},
        PodPriority(False, True, 0.5 + 0.25),
    ),
]


@pytest.mark.parametrize(
    ("requests", "recommendation", "expected"), [c[1:] for c in PRIORITY_CASES], ids=[c[0] for c in PRIORITY_CASES]
)
def test_upstream_get_update_priority(
    requests: dict[str, dict[str, int]], recommendation: dict[str, RecommendedResources], expected: PodPriority
) -> None:
    """TestGetUpdatePriority, case by case (requests and targets in milli-units)."""
    assert get_update_priority(requests, recommendation) == expected


def test_upstream_get_update_priority_no_recommendation_for_container() -> None:
    """TestGetUpdatePriority_NoRecommendationForContainer: nothing to compare, a zero priority."""
    assert get_update_priority({C1: {"cpu": 5000, "memory": 10_000}}, {}) == PodPriority()


def test_request_on_a_bound_is_inside() -> None:
    """The reference: outside means request < lowerBound or > upperBound; the bounds themselves are inside."""
    rec = {C1: one(500, 400, 600)}
    assert not get_update_priority({C1: {"cpu": 400}}, rec).outside_recommended_range
    assert not get_update_priority({C1: {"cpu": 600}}, rec).outside_recommended_range
    assert get_update_priority({C1: {"cpu": 399}}, rec).outside_recommended_range
    assert get_update_priority({C1: {"cpu": 601}}, rec).outside_recommended_range


def test_missing_request_is_outside_and_scale_up() -> None:
    """GetUpdatePriority: a container without a request counts as 0, outside the range and growing."""
    assert get_update_priority({C1: {}}, {C1: one(500, 400, 600)}) == PodPriority(True, True, 499.0)


@pytest.mark.parametrize(
    ("prio", "other", "is_less"),
    [
        (PodPriority(scale_up=False, resource_diff=0.1), PodPriority(), False),
        (PodPriority(scale_up=True, resource_diff=0.1), PodPriority(), False),
        (PodPriority(scale_up=True, resource_diff=0.1), PodPriority(scale_up=True, resource_diff=1.0), True),
        (PodPriority(scale_up=False, resource_diff=0.9), PodPriority(scale_up=False, resource_diff=0.1), False),
    ],
    ids=["scale down more than empty", "scale up more than empty", "two scale ups", "two scale downs"],
)
def test_upstream_less_pod_priority(prio: PodPriority, other: PodPriority, is_less: bool) -> None:
    """TestLessPodPriority."""
    assert prio.less(other) is is_less
    assert other.less(prio) is (not is_less)


# --- update admission and order (update_priority_calculator_test.go) --------------------------------

UPDATE_CONFIG = UpdaterConfig(min_change_priority=0.1)
STRICT = UpdaterConfig(min_change_priority=0.5)
STARTED = 1_000 * HOUR  # every test pod's start time


def pod(
    name: str, cpu: int = 1000, *, pending: bool = False, oom_terminations: dict[str, tuple[int, int]] | None = None
) -> PodState:
    return PodState(name, {"container1": {"cpu": cpu}}, STARTED, pending, oom_terminations or {})


def admitted_in_order(
    prios: dict[str, PodPriority], now: int, config: UpdaterConfig, pods: list[PodState] | None = None
) -> list[str]:
    """AddPod with a fake priority processor, then GetSortedPods with the default admission."""
    pods = pods if pods is not None else [pod(name) for name in prios]
    queued = [(p.name, prios[p.name]) for p in pods if is_update_admitted(p, prios[p.name], now, config)]
    return sort_by_update_priority(queued)


def test_upstream_sort_priority() -> None:
    """TestSortPriority: the larger resource diff goes first."""
    prios = {
        "POD1": PodPriority(resource_diff=4.0),
        "POD2": PodPriority(resource_diff=1.5),
        "POD3": PodPriority(resource_diff=9.0),
        "POD4": PodPriority(resource_diff=2.33),
    }
    assert admitted_in_order(prios, STARTED + 24 * HOUR, UPDATE_CONFIG) == ["POD3", "POD1", "POD4", "POD2"]


def test_upstream_sort_priority_resources_decrease() -> None:
    """TestSortPriorityResourcesDecrease: a pod that wants to grow first, then the larger reclaim."""
    prios = {
        "POD1": PodPriority(scale_up=True, resource_diff=0.25),
        "POD2": PodPriority(scale_up=False, resource_diff=0.25),
        "POD3": PodPriority(scale_up=False, resource_diff=0.5),
    }
    assert admitted_in_order(prios, STARTED + 24 * HOUR, UPDATE_CONFIG) == ["POD1", "POD3", "POD2"]


def test_upstream_update_not_required() -> None:
    """TestUpdateNotRequired: no resource diff, no update."""
    assert admitted_in_order({"POD1": PodPriority()}, STARTED + 24 * HOUR, UPDATE_CONFIG) == []


def test_upstream_no_pods() -> None:
    """TestNoPods."""
    assert sort_by_update_priority([]) == []


def test_upstream_update_longlived_pods() -> None:
    """TestUpdateLonglivedPods: after 13 h, a pod inside the range needs diff >= 0.5; outside always goes."""
    prios = {
        "POD1": PodPriority(False, True, 0.25),
        "POD2": PodPriority(False, True, 4.0),
        "POD3": PodPriority(True, False, 0.25),
    }
    assert admitted_in_order(prios, STARTED + 13 * HOUR, STRICT) == ["POD2", "POD3"]


def test_upstream_update_shortlived_pods() -> None:
    """TestUpdateShortlivedPods: before 12 h only a pod outside the range is updated."""
    prios = {
        "POD1": PodPriority(False, True, 0.25),
        "POD2": PodPriority(False, True, 0.0),
        "POD3": PodPriority(True, False, 0.9),
    }
    assert admitted_in_order(prios, STARTED + 11 * HOUR, STRICT) == ["POD3"]


def oomed(now: int, ran_for: int) -> PodState:
    """A pod whose container was last OOMKilled 3 minutes ago after running `ran_for`."""
    return pod("POD1", cpu=4000, oom_terminations={"container1": (now - 3 * MINUTE - ran_for, now - 3 * MINUTE)})


def test_upstream_update_pod_with_quick_oom() -> None:
    """TestUpdatePodWithQuickOOM: an OOM after 2 minutes admits a young pod inside the range."""
    now = STARTED + 11 * HOUR
    prios = {"POD1": PodPriority(scale_up=True, resource_diff=0.25)}
    assert admitted_in_order(prios, now, STRICT, [oomed(now, 2 * MINUTE)]) == ["POD1"]


def test_upstream_dont_update_pod_with_quick_oom_no_resource_change() -> None:
    """TestDontUpdatePodWithQuickOOMNoResourceChange: a quick OOM with nothing to change is skipped."""
    now = STARTED + 11 * HOUR
    prios = {"POD1": PodPriority(scale_up=True, resource_diff=0.0)}
    assert admitted_in_order(prios, now, UPDATE_CONFIG, [oomed(now, 2 * MINUTE)]) == []


def test_upstream_dont_update_pod_with_oom_after_long_run() -> None:
    """TestDontUpdatePodWithOOMAfterLongRun: an OOM after 57 minutes is not quick."""
    now = STARTED + 11 * HOUR
    prios = {"POD1": PodPriority(scale_up=True, resource_diff=0.0)}
    assert admitted_in_order(prios, now, STRICT, [oomed(now, 57 * MINUTE)]) == []


def test_pod_without_start_time_needs_to_be_outside() -> None:
    """AddPod: no start time and inside the range: not updated; outside the range: updated."""
    nostart = PodState("p", {"c": {"cpu": 100}})
    assert not is_update_admitted(nostart, PodPriority(False, True, 5.0), 100 * HOUR)
    assert is_update_admitted(nostart, PodPriority(True, True, 5.0), 100 * HOUR)


# --- eviction restriction (pods_eviction_restriction_test.go) --------------------------------------


def test_upstream_evict_too_few_replicas() -> None:
    """TestEvictTooFewReplicas: 5 live pods under minReplicas 10: none may go."""
    pods = [pod(f"p{i}") for i in range(5)]
    restriction = EvictionRestriction(pods, 5, min_replicas=10, eviction_tolerance=0.5)
    assert not any(restriction.can_evict(p) for p in pods)
    assert not any(restriction.evict(p) for p in pods)


def test_upstream_eviction_tolerance() -> None:
    """TestEvictionTolerance: 5 replicas, tolerance 0.8 -> int(4.0) = 4 may go, the fifth may not."""
    pods = [pod(f"p{i}") for i in range(5)]
    restriction = EvictionRestriction(pods, 5, min_replicas=2, eviction_tolerance=0.8)
    assert all(restriction.can_evict(p) for p in pods)
    assert [restriction.evict(p) for p in pods] == [True, True, True, True, False]


def test_upstream_evict_at_least_one() -> None:
    """TestEvictAtLeastOne: tolerance 0.1 of 5 truncates to 0, yet one pod may go when all run."""
    pods = [pod(f"p{i}") for i in range(5)]
    restriction = EvictionRestriction(pods, 5, min_replicas=2, eviction_tolerance=0.1)
    assert all(restriction.can_evict(p) for p in pods)
    assert [restriction.evict(p) for p in pods] == [True, False, False, False, False]


def test_upstream_evict_emit_event() -> None:
    """TestEvictEmitEvent: pending pods may always go; one running pod under minReplicas 2 may not."""
    pending = [pod("test-1", pending=True), pod("test-2", pending=True)]
    restriction = EvictionRestriction(pending, 4, min_replicas=2, eviction_tolerance=0.5)
    assert [restriction.evict(p) for p in pending] == [True, True]
    lonely = [pod("test-3")]
    assert not EvictionRestriction(lonely, 4, min_replicas=2, eviction_tolerance=0.5).evict(lonely[0])


def test_foreign_pod_cannot_be_evicted() -> None:
    """CanEvict: a pod outside the replica group is not ours to evict."""
    restriction = EvictionRestriction([pod("a"), pod("b")], 2)
    assert not restriction.can_evict(pod("z"))


# --- update modes (updater_test.go TestRunOnce_Mode) ------------------------------------------------

RUN_ONCE_PODS = [
    PodState(f"test_{i}", {"container1": {"cpu": 1000, "memory": 100 * M * 1000}}, start_time=0) for i in range(5)
]
RUN_ONCE_RECOMMENDATION = {"container1": RecommendedResources({"cpu": 2000, "memory": 200 * M * 1000})}


@pytest.mark.parametrize(
    ("mode", "evictions"),
    [(UpdateMode.AUTO, 5), (UpdateMode.RECREATE, 5), (None, 5), (UpdateMode.INITIAL, 0), (UpdateMode.OFF, 0)],
)
def test_upstream_run_once_mode(mode: UpdateMode | None, evictions: int) -> None:
    """TestRunOnce_Mode: 5 long-lived pods at 1 CPU / 100M against a 2 CPU / 200M target. Auto and
    Recreate (also the default mode) evict all 5; Initial and Off evict none. Upstream mocks CanEvict
    to always allow; an eviction tolerance of 1.0 stands in for that here."""
    config = UpdaterConfig(eviction_tolerance=1.0)
    evicted = pods_to_evict(RUN_ONCE_PODS, RUN_ONCE_RECOMMENDATION, mode, 24 * HOUR, config=config)
    assert len(evicted) == evictions


def test_recreate_evicts_replicas_outside_bounds_within_tolerance() -> None:
    """4 replicas requesting 100m against 587m (585m..1174m): all below the lower bound, but the default
    tolerance int(4 x 0.5) = 2 lets two go this pass; a replica already at 587m stays."""
    rec = {"c": Recommendation(587, 585, 1174, 587).as_resources()}
    pods = [PodState(f"r{i}", {"c": {"cpu": 100}}, start_time=0) for i in range(4)]
    assert pods_to_evict(pods, rec, UpdateMode.RECREATE, MINUTE) == ["r0", "r1"]
    resized = [PodState("r0", {"c": {"cpu": 587}}, start_time=0), *pods[1:]]
    assert pods_to_evict(resized, rec, UpdateMode.RECREATE, MINUTE) == ["r1", "r2"]


def test_young_replica_inside_bounds_waits_for_lifetime_threshold() -> None:
    """Inside [lower, upper] but 40% off target: not before 12 h of life, then yes (diff 0.4 >= 0.1)."""
    rec = {"c": RecommendedResources({"cpu": 700}, {"cpu": 400}, {"cpu": 2000})}
    pods = [PodState(f"r{i}", {"c": {"cpu": 500}}, start_time=0) for i in range(2)]
    assert pods_to_evict(pods, rec, UpdateMode.RECREATE, 12 * HOUR - 1) == []
    assert pods_to_evict(pods, rec, UpdateMode.RECREATE, 12 * HOUR) == ["r0"]


def test_request_at_creation() -> None:
    """The admission controller sets the (capped) target at creation unless the mode is Off."""
    rec = Recommendation(300, 200, 400, 587)
    assert request_at_creation(UpdateMode.OFF, rec) is None
    assert request_at_creation(UpdateMode.INITIAL, rec) == 300
    assert request_at_creation(UpdateMode.RECREATE, rec) == 300
    assert request_at_creation(None, rec) == 300
    assert request_at_creation(UpdateMode.AUTO, None) is None


# --- properties -------------------------------------------------------------------------------------

usage = st.floats(min_value=0.0, max_value=200_000.0, allow_nan=False)
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


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.tuples(usage, st.floats(min_value=0.01, max_value=10.0), st.integers(min_value=0, max_value=400 * HOUR)),
        min_size=1,
        max_size=40,
    ),
    st.floats(min_value=-0.2, max_value=1.2),
    st.floats(min_value=-0.2, max_value=1.2),
)
def test_percentile_is_monotone(data: list[tuple[float, float, int]], p: float, q: float) -> None:
    """percentile(p) <= percentile(q) whenever p <= q, whatever the weights and ages."""
    h = DecayingHistogram(cpu_histogram_options(), DAY)
    for value, weight, t in data:
        h.add_sample(value, weight, t)
    lo, hi = min(p, q), max(p, q)
    assert h.percentile(lo) <= h.percentile(hi)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(usage, min_size=1, max_size=30),
    st.integers(min_value=0, max_value=200),
    st.integers(min_value=1, max_value=10),
    st.integers(min_value=0, max_value=64),
)
def test_more_recent_copies_leave_percentiles_unchanged(values: list[float], start: int, later: int, k: int) -> None:
    """Samples taken at one time, then the same values again some half-lives later: every bucket's
    weight is multiplied by the same factor, so percentiles do not move. Times are whole half-lives
    and percentiles k/64 so that the comparison involves no rounding."""
    h = DecayingHistogram(cpu_histogram_options(), DAY)
    for v in values:
        h.add_sample(v, 1.0, start * DAY)
    before = h.percentile(k / 64)
    for v in values:
        h.add_sample(v, 1.0, (start + later) * DAY)
    assert h.percentile(k / 64) == before


@settings(max_examples=150, deadline=None)
@given(
    st.integers(min_value=0, max_value=10_000 * HOUR),
    st.integers(min_value=1, max_value=8),
    st.floats(min_value=0.01, max_value=100.0),
)
def test_older_sample_counts_half_per_half_life(t: int, k: int, weight: float) -> None:
    """A sample k half-lives older than another of the same weight counts 2^-k as much."""
    h = DecayingHistogram(cpu_histogram_options(), DAY)
    h.add_sample(1000.0, weight, t + k * DAY)  # bucket of 1000m
    h.add_sample(20.0, weight, t)  # bucket 1
    newer = h.bucket_weight(cpu_bucket_of(1000.0))
    assert h.bucket_weight(1) == pytest.approx(newer * 2.0**-k, rel=1e-12)
