"""The Horizontal Pod Autoscaler, restated from kubernetes/kubernetes `pkg/controller/podautoscaler`.

Pure calculators, each taking `now` as an argument, and one controller that drives them on the
Clock. One sync, in upstream's order, and the module that does each step:

- `types`: the plain data (listed pods, metric samples, metric specs and targets, answers);
- `config`: the controller's flags (kube-controller-manager's), with production defaults;
- `utilization`: usage ratios over pod metrics, in Go's arithmetic (`metrics/utilization.go`);
- `replicas`: the replica calculator, one metric in, a proposal out (`replica_calculator.go`);
- `metrics`: one proposal per metric, the largest wins (`computeReplicasForMetrics`);
- `behavior`: `spec.behavior`, its API defaults and per-HPA tolerances;
- `normalization`: stabilisation windows and rate limits (`normalizeDesiredReplicas*`);
- `reconcile`: the sync's decision and the history kept between syncs (`reconcileAutoscaler`);
- `controller`: `HorizontalPodAutoscaler`, the loop on the Clock around the calculators.
"""
