"""The scenario file format: pydantic models of every section, and nothing that reads files or builds live objects.

`scenario` is the document (`kind: Scenario`); the other modules are its sections, and
`manifests/` holds the Kubernetes manifests a scenario reads. A model may turn itself into the
value objects of a lower layer (a toleration, a distribution, an HPA spec); turning a spec into a
running thing (a controller, an arrival stream, a scheduler profile) is `skenario.scenario.wiring`'s job.
"""
