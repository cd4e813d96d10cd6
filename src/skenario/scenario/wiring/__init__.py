"""Specs turned into live objects, once per run and before it starts: every mistake found here is a ScenarioError.

`autoscalers` (manifests read, controllers made, plugins loaded), `scheduler` (the kube-scheduler
profile), `traffic` (arrival streams, trace files checked), `workload` (a Deployment read in),
`placement` (the scheduler and the cluster autoscaler wired to the model), `operations` (the
timeline's events, each planned and checked), `plugins` (a user's class, loaded by path), `apiserver`
(a KEP-140 run's objects read and admitted, over the controllers of `model/apiserver.py`).
"""
