"""Scheduling pods onto nodes the way kube-scheduler does (issue #7; in progress).

So far: the score calculators of the resource plugins and score normalisation, pure functions
that mirror `pkg/scheduler/framework/plugins/noderesources` and `.../helper`.
"""
