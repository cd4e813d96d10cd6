"""A room for queue-based batch schedulers: which job may start, before any pod is placed.

kube-scheduler decides where a pod goes, one pod at a time (`framework`, `plugins`). Batch systems
put a decision in front of that: jobs wait in queues with capacities and shares, and a queue
scheduler decides which job is admitted to run now. What lands here, each in its own module (an
issue is to come): YARN's Capacity Scheduler and Fair Scheduler (queue capacities, user limits,
fair shares, container allocation as YARN's ResourceManager does it, to compare with YARN SLS),
and Kueue's queue admission (ClusterQueues, their quotas and cohorts, LocalQueues, workload
admission and preemption).

How it relates to the framework: an admitted job's pods go to the scheduling controller's queue and
through the same filter and score cycle as any pod (Kueue admits and kube-scheduler places, so the
two compose). A YARN-style scheduler that allocates containers to nodes itself takes the place of
the framework for its jobs, reading the same `ClusterSnapshot`.
"""
