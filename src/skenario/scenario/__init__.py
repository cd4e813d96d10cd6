"""Scenario files in, wired simulations out.

The package is layered by job, each importing only the ones before it:

- `io`: YAML and validation I/O (a leaf: errors, yaml and pydantic only);
- `format/`: the file format as pydantic models, with the Kubernetes manifests in `format/manifests/`;
- `bundle`: a multi-document file's manifests folded into its scenario;
- `wiring/`: specs turned into live objects (autoscalers, the scheduler profile, traffic, the
  cluster placement, the timeline's operations);
- `dryrun`, `loader`: a file read, validated and its events checked, as one `Scenario`;
- `simulation`: a `Scenario` wired into an Environment and run through KEP-140's phases.
"""
