"""Scheduling pods onto nodes the way kube-scheduler does, and the cluster autoscaler (issue #7).

The pod and node specs (`objects`, with `taints` and `affinity` as the API defines them) and the
numpy snapshot of the nodes (`snapshot`); kube-scheduler's plugins, one module each, and the
registry that names them (`plugins`); the framework that runs them for one pod (`framework`,
recording `attempts`) and `preemption`; the controller that drives them on the clock
(`controller`); the cluster autoscaler, calculators and controller (`clusterautoscaler`); batch
trace readers (`traces`), trace replay (`replay`) and the analysis of what happened (`analysis`).
Queue-based batch schedulers (YARN's, Kueue's admission) get their room in `queues`.
"""
