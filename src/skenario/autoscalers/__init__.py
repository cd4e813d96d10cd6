"""Autoscalers: pure calculators mirroring upstream algorithms, and the controllers that drive them.

`base.py` is the protocol every autoscaler implements (`start(context)`) and the context it
reads, a user's plugin included, as small protocols (a pod lister, metrics, a scaler, a resizer,
the serving mode); `cluster.py` is that context over the simulated cluster (`ClusterContext`).

Each built-in autoscaler is a package with the same rooms:
`config.py` (its settings, with upstream's defaults), its calculators (pure functions and
classes, time passed in, each naming the upstream function it mirrors) and one `controller.py`
(the loop on the clock that reads the cluster, calls the calculators and scales). `hpa/`, `kpa/`
and `vpa/` are built that way; a new one (KEDA's ScaledObject) gets the same shape beside them,
and its scenario entry a model in `scenario/format/autoscalers.py` and a builder in
`scenario/wiring/autoscalers.py`.
"""
