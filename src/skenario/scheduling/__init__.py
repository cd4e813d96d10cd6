"""Scheduling pods onto nodes the way kube-scheduler does, and the cluster autoscaler (issue #7).

Pure calculators that mirror upstream plugins and functions (`scoring`, `taints`, `affinity`,
`topology`, `preemption`, `clusterautoscaler`), the framework that runs them over a numpy
snapshot of the nodes (`snapshot`, `plugins`, `spread`, `userplugins`, `framework`, `attempts`),
the controllers that drive them on the clock (`controller`, `cacontroller`), batch trace readers
(`traces`), trace replay (`replay`) and the analysis of what happened (`analysis`).
"""
