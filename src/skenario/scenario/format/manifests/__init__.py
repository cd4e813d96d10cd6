"""The Kubernetes manifests a scenario reads, validated as the API server does: Deployment, HPA, VPA, Knative."""
