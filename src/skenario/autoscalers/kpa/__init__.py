"""The Knative Pod Autoscaler (KPA), restated from knative/serving (no code copied).

Upstream splits the KPA in two, and so does this package: the **decider** (`decider`, mirroring
`pkg/autoscaler/scaling/autoscaler.go`) turns the stable and panic window averages into a desired
pod count, and knows nothing of min/max/initial scale or grace periods; the **reconciler's scaler**
(`scaler`, mirroring `pkg/reconciler/autoscaling/kpa/scaler.go`) turns that number into the
replicas to set, honouring min/max/initial scale and the scale-to-zero grace period.

- `config`: `KPAConfig`, the `config-autoscaler` settings and the revision's annotations;
- `windows`: the bucketed stable and panic windows, the scale-down-delay maximum, the collection;
- `decider`: `KPADecider` and the spec it is made from (`MakeDecider`);
- `scaler`: bounds, scale to zero and the PodAutoscaler's Active condition;
- `controller`: `KnativePodAutoscaler`, scrapes, decider ticks and the reconciler on the Clock.
"""
