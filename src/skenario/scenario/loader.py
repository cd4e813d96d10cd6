"""Reading a scenario file: its YAML documents folded into one Scenario, validated, and its events dry-run.

This is the entry point a user's file goes through (`skenario run`, `Simulation.from_file`), so it
sits above the format, the manifests' folding and the builders: every mistake it finds is one
`ScenarioError` naming the file, the line, the field and the value, before anything runs.
"""

from __future__ import annotations

from pathlib import Path

from skenario.scenario.bundle import fold_manifests
from skenario.scenario.dryrun import check_events, check_pods_fit
from skenario.scenario.format.scenario import Scenario
from skenario.scenario.io import Documents, read_text, validate_node, yaml_documents

SCENARIO_SHAPE = "a scenario is a mapping with apiVersion, kind, metadata and spec"


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file (with any Kubernetes manifests it carries as further documents)."""
    return parse_scenario(read_text(path), str(path))


def parse_scenario(text: str, source: str = "<scenario>", *, documents: Documents | None = None) -> Scenario:
    """Validate a scenario given as YAML text; `source` names it in errors, `documents` are the text
    already read (`yaml_documents`), so a file sniffed for its kind is not read twice.

    A multi-document file holds one `kind: Scenario` document and Kubernetes manifests, which
    `skenario.scenario.bundle` folds into it.
    """
    documents = yaml_documents(text, source) if documents is None else documents
    data, root = documents[0] if len(documents) == 1 else fold_manifests(documents, source)
    scenario = validate_node(data, root, Scenario, source, SCENARIO_SHAPE)
    check_pods_fit(scenario, root, source)
    check_events(scenario, root, source)
    return scenario
