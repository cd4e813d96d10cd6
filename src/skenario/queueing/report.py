"""A solution as text (PDQ's `Report()`, in short) and as plain data for JSON."""

from __future__ import annotations

from typing import Any

from skenario.queueing.solution import Solution


def solution_dict(solution: Solution) -> dict[str, Any]:
    """Every figure of a solution by name, ready for `json.dumps`."""
    network = solution.network
    return {
        "model": network.name,
        "method": solution.method.value,
        "iterations": solution.iterations,
        "exact": solution.exact,
        "approximations": list(solution.approximations),
        "classes": {
            c.name: {
                "type": "open" if c.is_open else "closed",
                "arrivalRate": c.arrival_rate,
                "population": c.population,
                "thinkTime": c.think_time if not c.is_open else None,
                "priority": c.priority,
                "throughput": solution.classes[c.name].throughput,
                "response": solution.classes[c.name].response,
                "number": solution.classes[c.name].number,
            }
            for c in network.classes
        },
        "centres": {
            k.name: {
                "kind": k.kind.value,
                "scheduling": k.scheduling.value,
                "servers": k.servers,
                "rates": list(k.rates) or None,
                "capacity": k.capacity,
                "blocking": max((m.blocking for m in solution.centres[k.name].values()), default=0.0),
                "utilization": solution.utilization(k.name),
                "queueLength": solution.queue_length(k.name),
                "classes": {
                    name: {"residence": m.residence, "utilization": m.utilization, "queueLength": m.queue_length}
                    for name, m in solution.centres[k.name].items()
                },
            }
            for k in network.centres
        },
    }


def report(solution: Solution) -> str:
    """A fixed-width report: the method and its caveats, then per class and per centre figures."""
    network = solution.network
    lines = [f"Model: {network.name}", f"Method: {solution.method.value}"]
    if solution.iterations is not None:
        lines.append(f"Iterations: {solution.iterations}")
    if solution.approximations:
        lines.append("Approximate:")
        lines.extend(f"  - {note}" for note in solution.approximations)
    else:
        lines.append("Exact for this model.")
    lines += ["", f"{'Class':<16} {'Type':<7} {'N or rate':>10} {'Think':>8} {'Throughput':>11} {'Response':>10}"]
    for c in network.classes:
        metrics = solution.classes[c.name]
        size = c.arrival_rate if c.is_open else c.population
        think = "" if c.is_open else f"{c.think_time:8.4g}"
        kind = "open" if c.is_open else "closed"
        lines.append(
            f"{c.name:<16} {kind:<7} {size:>10.4g} {think:>8} {metrics.throughput:>11.4f} {metrics.response:>10.4f}"
        )
    lines += ["", f"{'Centre':<12} {'Class':<16} {'Residence':>10} {'Utilisation':>12} {'Queue':>9}"]
    for k in network.centres:
        label = k.name if k.servers == 1 or k.is_delay else f"{k.name} (x{k.servers})"
        for name, m in solution.centres[k.name].items():
            if m.residence == 0 and m.utilization == 0:
                continue
            lines.append(f"{label:<12} {name:<16} {m.residence:>10.4f} {m.utilization:>12.4f} {m.queue_length:>9.4f}")
            label = ""
    lost = [(k.name, solution.centres[k.name]) for k in network.centres if k.capacity is not None]
    if lost:
        lines += ["", f"{'Centre':<12} {'Capacity':>8} {'Blocking':>10}"]
        for (name, per_class), k in zip(lost, [k for k in network.centres if k.capacity is not None], strict=True):
            blocking = max((m.blocking for m in per_class.values()), default=0.0)
            lines.append(f"{name:<12} {k.capacity:>8} {blocking:>10.4f}")
    return "\n".join(lines)
