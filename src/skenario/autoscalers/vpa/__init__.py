"""The Vertical Pod Autoscaler, restated from kubernetes/autoscaler `vertical-pod-autoscaler`.

The recommender turns CPU samples into a capped recommendation; the updater decides which pods to
evict to apply it; the admission controller sets new pods' requests. Each module names the
upstream files it restates (no upstream code is copied).

- `config`: the recommender's and the updater's flags, with production defaults;
- `histogram`: bucket schemes, a plain histogram and the decaying one the recommender keeps;
- `recommender`: CPU samples in, a capped CPU recommendation out;
- `updater`: which pods to evict for new requests, and in what order;
- `controller`: `VerticalPodAutoscaler`, the recommender, admission and updater on the Clock.
"""
