"""A replica's CPU: how the requests in their CPU phase share its cores, one discipline per file.

- `base.py`: `CPUDiscipline`, the protocol every discipline implements and the only view of a CPU its users
  have (RequestsProcessing, the cluster's CPU accounts, validation/network.py); `CapacityOwner`,
  whatever sets a CPU's capacity as it goes; and `OwnWakeups`, the stock a CPU's wake-up movements
  go through.
- `sharing.py`: `ProcessorSharingCPU`, egalitarian processor sharing (the default).
- `priority.py`: `PriorityCPU`, priority scheduling on ceil(cores) servers, non-preemptive or
  preemptive-resume.

- `node.py`: `NodeCPU`, a node's cores shared among the pods on it as CFS shares them (weights
  from CPU requests, limits as caps, work-conserving), and the pure `fair_shares` behind it.
- `quota.py`: `CfsQuota`, a limit enforced as a quota of CPU time per CFS period instead of a cap.
"""
