"""kube-scheduler's Filter and Score plugins, one module per plugin, as `pkg/scheduler/framework/plugins/`.

- `interface`: what a plugin promises the framework (`FilterPlugin`, `ScorePlugin`, `FilterResult`,
  `MAX_NODE_SCORE`), as `framework/interface.go`.
- `registry`: every in-tree plugin once, with its extension points and default weight
  (`registry.go` with `default_plugins.go`); the framework and the scenario read names and weights
  from it alone.
- `helper`: the score arithmetic plugins share (`DefaultNormalizeScore`, `BuildBrokenLinearFunction`,
  Go's integer division and rounding), as `plugins/helper/`.
- `resourceallocation`: the resources the resource scores score, and each node's columns for them
  (`noderesources/resource_allocation.go`).
- One module per plugin, its pure functions (tested against upstream's unit tests) beside its class
  (the same rules over numpy arrays): `nodeunschedulable`, `tainttoleration`, `nodeaffinity`,
  `podtopologyspread`, `balancedallocation` (NodeResourcesBalancedAllocation); `noderesources`
  (NodeResourcesFit) is a package, its three scoring strategies a module each as upstream's.
- `custom`: a user's own Filter or Score plugin, loaded from the scenario by path.

Adding an in-tree plugin: write its module here (a class with `name`, and `filter` and/or `score`
with `normalize`, whose keyword arguments are its args), then add one line to `registry.IN_TREE`.
"""
