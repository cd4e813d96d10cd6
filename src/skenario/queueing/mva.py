"""Mean value analysis of closed classes: exact (Reiser-Lavenberg) and Bard-Schweitzer.

Both take plain arrays: D[k, c] demands, `delay[k]` for delay centres, N[c] populations and
Z[c] think times, and return X[c] and R[k, c]. Delay centres are handled in both (PDQ's
`exact()` treats every node as a queue; that is a PDQ quirk not kept here).
"""

from __future__ import annotations

import math

import numpy as np

# Exact MVA visits every population vector; past this many it would take minutes and gigabytes.
MAX_EXACT_STATES = 20_000_000


def exact_mva(
    demands: np.ndarray, delay: np.ndarray, populations: np.ndarray, think: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Exact multi-class MVA over all population vectors (Reiser & Lavenberg, JACM 1980).

    R_kc(n) = D_kc (1 + Q_k(n - e_c)) at a queue, D_kc at a delay centre; X_c(n) = n_c / (Z_c +
    sum_k R_kc(n)); Q_k(n) = sum_c X_c R_kc. The recursion only adds and multiplies positive
    numbers, so it is stable in float64 at any population. The vectors of one total population
    are computed together with numpy, level by level.
    """
    populations = np.asarray(populations, dtype=np.int64)
    classes = len(populations)
    centres = demands.shape[0]
    dims = populations + 1
    states = math.prod(int(d) for d in dims)
    if states > MAX_EXACT_STATES:
        raise ValueError(
            f"exact MVA would visit {states:,} population vectors (the product of population + 1 over classes); "
            f"use method approx"
        )
    strides = np.ones(classes, dtype=np.int64)
    for c in range(classes - 2, -1, -1):
        strides[c] = strides[c + 1] * dims[c + 1]
    vectors = np.indices(tuple(int(d) for d in dims)).reshape(classes, -1).T
    levels = vectors.sum(axis=1)
    order = np.argsort(levels, kind="stable")
    bounds = np.searchsorted(levels[order], np.arange(int(populations.sum()) + 2))
    queue_length = np.zeros((states, centres))
    is_queue = ~np.asarray(delay, dtype=bool)
    residence = np.zeros((centres, classes))
    throughput = np.zeros(classes)
    for total in range(1, int(populations.sum()) + 1):
        idx = order[bounds[total] : bounds[total + 1]]
        n = vectors[idx]
        r = np.empty((len(idx), centres, classes))
        for c in range(classes):
            before = np.where(n[:, c] > 0, idx - strides[c], 0)
            r[:, :, c] = demands[:, c] * np.where(is_queue, 1.0 + queue_length[before], 1.0)
        cycle = think + r.sum(axis=1)
        x = np.divide(n, cycle, out=np.zeros_like(cycle), where=n > 0)
        queue_length[idx] = np.einsum("skc,sc->sk", r, x)
        residence, throughput = r[-1], x[-1]  # the last level holds one vector: the full population
    residence = np.where(populations > 0, residence, 0.0)
    return throughput, residence


def schweitzer_mva(
    demands: np.ndarray,
    delay: np.ndarray,
    populations: np.ndarray,
    think: np.ndarray,
    *,
    tolerance: float = 0.001,
    max_iterations: int = 100_000,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Bard-Schweitzer approximate MVA exactly as PDQ's `approx()` (`MVA_Approx.c`) runs it.

    Start with Q_kc = N_c / K at every centre; then, Jacobi style, estimate the queue an arrival
    of class c sees as sum_{j != c} Q_kj + Q_kc (N_c - 1) / N_c, apply MVA's equations, and stop
    when no Q_kc moved by more than `tolerance` (PDQ: 0.001, absolute). Reproducing PDQ's
    published figures and iteration counts needs exactly this rule. Returns X, R, iterations.
    """
    populations = np.asarray(populations, dtype=float)
    centres, classes = demands.shape
    active = populations > 0
    own = np.divide(populations - 1, populations, out=np.zeros(classes), where=active)
    is_queue = ~np.asarray(delay, dtype=bool)
    queue = np.tile(populations / centres, (centres, 1))
    for iteration in range(1, max_iterations + 1):
        seen = queue.sum(axis=1, keepdims=True) - queue * (1.0 - own)
        residence = demands * np.where(is_queue[:, None], 1.0 + seen, 1.0)
        cycle = think + residence.sum(axis=0)
        throughput = np.divide(populations, cycle, out=np.zeros(classes), where=active)
        new = residence * throughput
        moved = float(np.abs(new - queue).max())
        queue = new
        if moved <= tolerance:
            return throughput, np.where(active, residence, 0.0), iteration
    raise ValueError(f"Bard-Schweitzer did not converge to {tolerance} in {max_iterations} iterations")
