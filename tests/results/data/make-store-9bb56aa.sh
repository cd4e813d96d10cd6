#!/bin/sh
# How tests/results/data/store-9bb56aa.sqlite was made: the run store of skenario as of commit 9bb56aa
# (before the store's migrations were numbered), with four runs of `skenario run` (a HPA run with a name,
# two tags and an event, a cluster run with scheduling documents, a plain run, a KEP-140 Scenario) and a
# sweep of 2 points x 2 seeds. Run from the repository root with its virtualenv active; writes in /tmp.
set -eu
repo=$(pwd)
old=$(mktemp -d) work=$(mktemp -d)
git archive 9bb56aa | tar -x -C "$old"
cd "$work"
cp -r "$repo/examples/manifests" .
sed -e 's/duration: 40m/duration: 3m/' -e 's/start: 5m, stop: 20m/start: 1m, stop: 2m/' \
    "$repo/examples/hpa-step.yaml" > hpa-short.yaml
printf '  events:\n    - {id: crash, at: 90s, delete: {target: replica}}\n' >> hpa-short.yaml
sed -e 's/duration: 20m/duration: 2m/' -e 's/at: 5m,/at: 30s,/' -e 's/at: 10m,/at: 60s,/' -e 's/at: 12m/at: 90s/' \
    "$repo/examples/node-drain.yaml" > drain-short.yaml
cat > tiny.yaml <<'YAML'
apiVersion: skenario.dev/v1alpha1
kind: Scenario
metadata: {name: tiny}
spec:
  duration: 1m
  seed: 3
  workload:
    replicas: 2
    resources: {requests: {cpu: 500m}}
    request: {cpuTime: {distribution: exponential, mean: 50ms}, timeout: 1s}
  traffic: {type: poisson, rate: 30/s}
  recording: {interval: 15s}
YAML
cp "$repo/examples/kep140/taint-and-delete.yaml" kep.yaml
export PYTHONPATH="$old/src"
skenario run hpa-short.yaml --store .skenario --name hpa --tag step --tag crash --no-progress
skenario run drain-short.yaml --store .skenario --tag drain --no-progress
skenario run tiny.yaml --store .skenario --no-progress
skenario run kep.yaml --store .skenario --name kep
skenario sweep tiny.yaml --store .skenario --name tiny-sweep --seeds 2 --set 'workload.replicas=1,3' --workers 1 \
    --no-progress
python -c "import sqlite3; sqlite3.connect('.skenario/runs.sqlite').execute('VACUUM')"
cp .skenario/runs.sqlite "$repo/tests/results/data/store-9bb56aa.sqlite"
