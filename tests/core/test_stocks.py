"""Stocks: Source (remove only), Sink (add only), FifoStock and KeyedStock (through stocks)."""

from __future__ import annotations

import pytest

from skenario.core import Entity, FifoStock, KeyedStock, Sink, Source


class Counter:
    """A factory that makes entities 0, 1, 2, ... and remembers them."""

    def __init__(self) -> None:
        self.made: list[Entity] = []

    def __call__(self) -> Entity:
        entity = Entity(len(self.made))
        self.made.append(entity)
        return entity


class CountingEq(Entity):
    """An entity that counts how often it is compared with `==` (hash stays identity-based)."""

    __slots__ = ()
    comparisons = 0

    def __eq__(self, other: object) -> bool:
        CountingEq.comparisons += 1
        return self is other

    __hash__ = Entity.__hash__


# -- Source ----------------------------------------------------------------------------------


def test_source_makes_a_new_entity_per_remove() -> None:
    factory = Counter()
    source: Source[Entity] = Source("Arrivals", "Request", factory)
    got = [source.remove() for _ in range(3)]
    assert got == factory.made
    assert len({id(e) for e in got}) == 3
    assert source.emitted == 3
    assert source.count() == 0  # a source holds nothing; it makes entities on demand


def test_source_gives_back_a_named_entity_without_calling_the_factory() -> None:
    factory = Counter()
    source: Source[Entity] = Source("Arrivals", "Request", factory)
    outside = Entity(99)
    assert source.remove(outside) is outside
    assert factory.made == []
    assert source.emitted == 1


def test_source_without_factory_gives_nothing_unless_named() -> None:
    source: Source[Entity] = Source("Replicas", "Replica")
    assert source.remove() is None
    assert source.emitted == 0
    replica = Entity(4)
    assert source.remove(replica) is replica
    assert source.emitted == 1


def test_stock_names_and_kinds() -> None:
    stocks = [
        Source("A", "Request"),
        Sink("B", "Request"),
        FifoStock("C", "Request"),
        KeyedStock("D", "Request"),
    ]
    assert [s.name for s in stocks] == ["A", "B", "C", "D"]
    assert {s.kind_stocked for s in stocks} == {"Request"}


# -- Sink ------------------------------------------------------------------------------------


def test_sink_counts_what_arrives() -> None:
    sink: Sink[Entity] = Sink("Done", "Request")
    assert sink.count() == 0
    for i in range(5):
        sink.add(Entity(i))
    assert sink.count() == 5


def test_sink_without_keep_holds_no_entities_and_refuses_iteration() -> None:
    sink: Sink[Entity] = Sink("Done", "Request")
    sink.add(Entity(1))
    assert sink.kept is None
    with pytest.raises(TypeError, match="keep=True"):
        iter(sink)


def test_sink_with_keep_keeps_entities_in_arrival_order() -> None:
    sink: Sink[Entity] = Sink("Done", "Request", keep=True)
    entities = [Entity(i) for i in (3, 1, 2)]
    for e in entities:
        sink.add(e)
    assert list(sink) == entities
    assert sink.count() == 3


# -- FifoStock -------------------------------------------------------------------------------


def test_fifo_removes_in_arrival_order_then_none() -> None:
    stock: FifoStock[Entity] = FifoStock("Queue", "Request")
    entities = [Entity(i) for i in range(4)]
    for e in entities:
        stock.add(e)
    assert stock.count() == len(stock) == 4
    assert [stock.remove() for _ in range(4)] == entities
    assert stock.remove() is None
    assert stock.count() == 0


def test_fifo_empty_gives_none() -> None:
    stock: FifoStock[Entity] = FifoStock("Queue", "Request")
    assert stock.remove() is None
    assert stock.remove(Entity(1)) is None
    assert stock.peek() is None
    assert stock.rotate() is None


def test_fifo_remove_specific_keeps_the_order_of_the_rest() -> None:
    stock: FifoStock[Entity] = FifoStock("Queue", "Request")
    a, b, c, d, e = (Entity(i) for i in range(5))
    for x in (a, b, c, d, e):
        stock.add(x)
    assert stock.remove(b) is b
    assert list(stock) == [a, c, d, e]
    assert stock.remove(a) is a  # the head
    assert stock.remove(e) is e  # the tail
    assert list(stock) == [c, d]
    assert b not in stock
    assert c in stock


def test_fifo_remove_missing_entity_gives_none_and_changes_nothing() -> None:
    stock: FifoStock[Entity] = FifoStock("Queue", "Request")
    a, b = Entity(1), Entity(2)
    stock.add(a)
    stock.add(b)
    assert stock.remove(Entity(1)) is None  # same id, different entity
    assert list(stock) == [a, b]


def test_fifo_rotate_is_round_robin() -> None:
    stock: FifoStock[Entity] = FifoStock("Replicas", "Replica")
    replicas = [Entity(i) for i in range(3)]
    for r in replicas:
        stock.add(r)
    picks = [stock.rotate() for _ in range(7)]
    assert picks == [replicas[i % 3] for i in range(7)]
    assert stock.count() == 3
    # after 7 rotations of 3 items the head is item 7 % 3 == 1
    assert stock.peek() is replicas[1]
    assert list(stock) == [replicas[1], replicas[2], replicas[0]]


def test_fifo_head_operations_do_not_compare_entities() -> None:
    stock: FifoStock[CountingEq] = FifoStock("Queue", "Request")
    for i in range(1_000):
        stock.add(CountingEq(i))
    CountingEq.comparisons = 0
    stock.peek()
    stock.rotate()
    stock.remove()
    assert CountingEq.comparisons == 0


# -- KeyedStock ------------------------------------------------------------------------------


def test_keyed_remove_specific() -> None:
    stock: KeyedStock[Entity] = KeyedStock("Processing", "Request")
    a, b, c = Entity(1), Entity(2), Entity(3)
    for x in (a, b, c):
        stock.add(x)
    assert stock.remove(b) is b
    assert b not in stock
    assert a in stock and c in stock
    assert stock.count() == len(stock) == 2


def test_keyed_remove_none_gives_the_most_recent() -> None:
    stock: KeyedStock[Entity] = KeyedStock("Processing", "Request")
    a, b, c = Entity(1), Entity(2), Entity(3)
    for x in (a, b, c):
        stock.add(x)
    assert stock.remove() is c
    stock.add(Entity(4))
    d = stock.remove()
    assert d is not None and d.id == 4
    assert stock.remove() is b
    assert stock.remove() is a
    assert stock.remove() is None


def test_keyed_missing_entity_gives_none() -> None:
    stock: KeyedStock[Entity] = KeyedStock("Processing", "Request")
    a = Entity(1)
    stock.add(a)
    assert stock.remove(Entity(1)) is None  # equal id is not the same entity
    assert stock.remove(Entity(2)) is None
    assert list(stock) == [a]
    assert KeyedStock("Empty", "Request").remove() is None


def test_keyed_is_by_entity_identity() -> None:
    stock: KeyedStock[Entity] = KeyedStock("Processing", "Request")
    first, second = Entity(7), Entity(7)
    stock.add(first)
    stock.add(second)
    assert stock.count() == 2
    assert stock.remove(first) is first
    assert list(stock) == [second]


@pytest.mark.parametrize("size", [10, 10_000])
def test_keyed_remove_by_entity_does_not_scan(size: int) -> None:
    """O(1) removal, checked by work done rather than time: removing a named entity must not
    compare it with the other entities, however many there are. (A list scan would compare
    the target with every entity ahead of it.)"""
    stock: KeyedStock[CountingEq] = KeyedStock("Processing", "Request")
    entities = [CountingEq(i) for i in range(size)]
    for e in entities:
        stock.add(e)
    CountingEq.comparisons = 0
    for e in entities[size // 2 :: max(1, size // 10)]:
        assert stock.remove(e) is e
    assert CountingEq.comparisons <= 10  # bounded by a constant, not by size


def test_the_comparison_probe_detects_a_scan() -> None:
    """Control for the test above: a linear search for the same target in a plain list of
    the same entities does compare it with every entity ahead of it."""
    entities = [CountingEq(i) for i in range(100)]
    CountingEq.comparisons = 0
    entities.index(entities[50])
    assert CountingEq.comparisons >= 50
