"""A replica's CPU: how the requests in their CPU phase share its cores, one discipline per file.

- `base.py`: `CPUDiscipline`, the protocol every discipline implements and the only view of a CPU its users
  have (RequestsProcessing, the cluster's CPU accounts, validation/network.py), and `OwnWakeups`,
  the stock a CPU's wake-up movements go through.
- `sharing.py`: `ProcessorSharingCPU`, egalitarian processor sharing (the default).
- `priority.py`: `PriorityCPU`, priority scheduling on ceil(cores) servers, non-preemptive or
  preemptive-resume.

How a node's cores are shared among the pods placed on it (CFS weights from their CPU requests,
limits as caps, work-conserving) is the next room: it lands in `node.py` here with the next issue.
"""
