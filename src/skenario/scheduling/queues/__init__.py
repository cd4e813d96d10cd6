"""A room for queue-based batch schedulers: which job may start, before any pod is placed.

kube-scheduler decides where a pod goes, one pod at a time (`framework`, `plugins`). Batch systems
put a decision in front of that: jobs wait in queues with capacities and shares, and a queue
scheduler decides which job is admitted to run now. Here, each in its own module: YARN's Capacity
Scheduler (`capacity_config`, `user_limit`, `capacity`, `preemption`) and Fair Scheduler
(`fair_config`, `fair_shares`, `fair`), sharing YARN's resources and calculators (`resources`) and
its books of applications, containers and nodes (`applications`), with `yarn_replay` running an
SLS trace's jobs through either as SLS does; and Kueue's admission (`kueue_config`,
`kueue_admission`, `kueue`: ClusterQueues, their quotas and cohorts, LocalQueues, workload
admission and preemption) in front of kube-scheduler.

How it relates to the framework: an admitted job's pods go to the scheduling controller's queue and
through the same filter and score cycle as any pod (Kueue admits and kube-scheduler places, so the
two compose). A YARN-style scheduler that allocates containers to nodes itself takes the place of
the framework for its jobs, reading the same `ClusterSnapshot`.
"""
