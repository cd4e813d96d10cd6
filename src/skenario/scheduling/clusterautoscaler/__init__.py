"""The cluster autoscaler: which node group to grow and by how much, which nodes are unneeded, and
which of those may go now.

Restated from kubernetes/autoscaler `cluster-autoscaler` (no upstream code is copied), split as
upstream splits it; each module's docstring names the upstream files it mirrors and each
function's the upstream function. As with the HPA (a calculator beside its controller), every
module but `controller` only calculates: the controller, ticking every `CaSettings.scan_interval`,
turns the cluster into their inputs, keeps the state between ticks (the unneeded-since times, the
last scale-up and scale-down) and acts on the answers.

One tick, as `StaticAutoscaler.RunOnce` orders it:

1. `scaleup.plan_scale_up` for the pods that fit on no existing or upcoming node
   (`simulator.place_pods` onto the upcoming nodes' templates does the filtering that upstream's
   FilterOutSchedulable does). After a successful scale-up upstream does no scale-down in the same
   loop.
2. `scaledown.unneeded_nodes`, then `scaledown.update_unneeded_since` to carry the times over; this
   runs even while scale-down is in cooldown.
3. `scaledown.ready_to_remove`: the unneeded nodes that may be deleted now.

Fitting comes in two strengths. The controller runs the scheduler's own filter plugins on a fork
of its snapshot (`simulator.SnapshotSimulation`, upstream's predicate checker on a forked cluster
snapshot): the template check, the estimate and the pods left for upcoming nodes see every filter
the scheduler has, topology spread included, with the pods placed so far. The calculators also
take a lighter `simulator.ResourceSimulation`: resources counted as NodeResourcesFit counts them,
everything else a `StaticFits(pod, node)` predicate that must not depend on what is already on the
node (`simulator.node_filters`: NodeUnschedulable, TaintToleration, NodeAffinity). Scale-down
moves pods with the lighter one.

The modules:

- `config`: the node groups and the autoscaler's flags (`cloudprovider.NodeGroup`, `config/`).
- `simulator`: what fits where, in a simulated cluster (`simulator/`: the cluster snapshot, the
  predicate checker, the hinting simulator).
- `estimator`: how many new nodes of a template some pods need (`estimator/`: the binpacking
  estimator and its limiter).
- `expander`: which of the scale-up options to take (`expander/`).
- `scaleup`: the scale-up's options and plan (`core/scaleup/orchestrator`).
- `scaledown`: utilisation, unneeded nodes, cooldown and what may go now (`core/scaledown/`,
  `simulator/cluster.go`, `simulator/utilization`).
- `controller`: `ClusterAutoscaler`, the loop on the clock (`core/static_autoscaler.go`).

Times are integer nanoseconds (`skenario.core.time`).
"""
