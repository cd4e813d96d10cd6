"""NodeAffinity: the plugin's filter, score and normalisation checked node by node against the API's matching.

The matching itself (`skenario.scheduling.affinity`) is worked by hand in `tests/scheduling/test_affinity.py`;
here the plugin is compared with it on the random clusters of `clusters`.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from skenario.scheduling.affinity import NodeAffinity, Term
from skenario.scheduling.objects import PodSpec
from skenario.scheduling.plugins.nodeaffinity import NodeAffinityPlugin, affinity_normalize
from tests.scheduling.plugins.clusters import LABELS, Cluster, clusters, every_node, requirements


@settings(max_examples=300)
@given(clusters())
def test_node_affinity_score_and_normalize_match_the_pure_functions(cluster: Cluster) -> None:
    plugin = NodeAffinityPlugin()
    raw = plugin.score(cluster.pod, cluster.snapshot(), every_node(cluster))
    want_raw = [cluster.pod.affinity.score(n.labels, n.name) for n in cluster.nodes]
    assert raw.tolist() == want_raw
    normalized = plugin.normalize(raw)
    assert normalized is not None
    assert normalized.tolist() == affinity_normalize(want_raw)


@settings(max_examples=100)
@given(clusters(), st.data())
def test_node_affinity_filter_matches_allows(cluster: Cluster, data: st.DataObject) -> None:
    required = data.draw(
        st.one_of(
            st.none(), st.lists(st.builds(Term, st.lists(requirements(), max_size=2).map(tuple)), max_size=2).map(tuple)
        )
    )
    selector = data.draw(st.fixed_dictionaries({}, optional={"zone": st.sampled_from(LABELS["zone"])}))
    affinity = NodeAffinity(node_selector=selector, required=required)
    pod = PodSpec("incoming", affinity=affinity)
    codes = NodeAffinityPlugin().filter(pod, cluster.snapshot(), every_node(cluster)).codes
    assert (codes == 0).tolist() == [affinity.allows(n.labels, n.name) for n in cluster.nodes]
