"""Stocks: where entities are between movements.

A source stock only gives entities (`remove`), a sink only takes them (`add`), a through stock
does both. Model logic goes into specialised stocks' `add` / `remove`, as the seeds prescribe;
the plain stocks here are the containers those specialisations build on.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import Generic, Protocol, TypeVar

from mypy_extensions import mypyc_attr

from skenario.core.entity import Entity

E = TypeVar("E", bound=Entity)
E_contra = TypeVar("E_contra", bound=Entity, contravariant=True)


class Stock(Protocol):
    """What every stock shows: a name, the kind of entity it holds and how many it holds now."""

    @property
    def name(self) -> str: ...

    @property
    def kind_stocked(self) -> str: ...

    def count(self) -> int: ...


class SourceStock(Stock, Protocol[E]):
    """Gives entities: `remove(None)` is the stock's choice, `remove(e)` asks for `e`.

    Returning None means there was nothing (or not that entity) to give; the Environment then
    records the movement as ignored with reason `from_stock_empty`.
    """

    def remove(self, entity: E | None = None) -> E | None: ...


class SinkStock(Stock, Protocol[E_contra]):
    """Takes entities."""

    def add(self, entity: E_contra) -> None: ...


class ThroughStock(SourceStock[E], SinkStock[E], Protocol[E]):
    """Takes and gives entities."""


@mypyc_attr(allow_interpreted_subclasses=True)
class Source(Generic[E]):
    """A source that makes a new entity each time it is asked for one.

    Without a factory it can only give back the specific entity a movement names (useful for
    entities created outside, such as a replica the model built). `emitted` counts what it gave.
    """

    __slots__ = ("name", "kind_stocked", "_factory", "emitted")

    def __init__(self, name: str, kind_stocked: str, factory: Callable[[], E] | None = None) -> None:
        self.name = name
        self.kind_stocked = kind_stocked
        self._factory = factory
        self.emitted = 0

    def remove(self, entity: E | None = None) -> E | None:
        if entity is None:
            if self._factory is None:
                return None
            entity = self._factory()
        self.emitted += 1
        return entity

    def count(self) -> int:
        return 0


@mypyc_attr(allow_interpreted_subclasses=True)
class Sink(Generic[E]):
    """A stock entities never leave. Counts what arrives; keeps the entities only if asked.

    Keeping is off by default so memory stays flat over long runs.
    """

    __slots__ = ("name", "kind_stocked", "_count", "kept")

    def __init__(self, name: str, kind_stocked: str, *, keep: bool = False) -> None:
        self.name = name
        self.kind_stocked = kind_stocked
        self._count = 0
        self.kept: list[E] | None = [] if keep else None

    def add(self, entity: E) -> None:
        self._count += 1
        if self.kept is not None:
            self.kept.append(entity)

    def count(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[E]:
        if self.kept is None:
            raise TypeError(f"sink {self.name!r} does not keep its entities; create it with keep=True")
        return iter(self.kept)


@mypyc_attr(allow_interpreted_subclasses=True)
class FifoStock(Generic[E]):
    """A through stock in arrival order: O(1) at head and tail, for queues and round robin.

    `remove(None)` takes the head. Removing a named entity is O(n) and keeps the order of the
    rest (the Go original swapped the last element in and lost FIFO order).
    """

    __slots__ = ("name", "kind_stocked", "_items")

    def __init__(self, name: str, kind_stocked: str) -> None:
        self.name = name
        self.kind_stocked = kind_stocked
        self._items: deque[E] = deque()

    def add(self, entity: E) -> None:
        self._items.append(entity)

    def remove(self, entity: E | None = None) -> E | None:
        items = self._items
        if entity is None:
            return items.popleft() if items else None
        try:
            items.remove(entity)
        except ValueError:
            return None
        return entity

    def rotate(self) -> E | None:
        """Move the head to the tail and return it: one step of round robin."""
        items = self._items
        if not items:
            return None
        head = items.popleft()
        items.append(head)
        return head

    def peek(self) -> E | None:
        return self._items[0] if self._items else None

    def count(self) -> int:
        return len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[E]:
        return iter(self._items)

    def __contains__(self, entity: object) -> bool:
        return entity in self._items


@mypyc_attr(allow_interpreted_subclasses=True)
class KeyedStock(Generic[E]):
    """A through stock with O(1) add and O(1) removal of a named entity.

    `remove(None)` gives the most recently added entity (O(1)); use a FifoStock when the
    order of removal matters.
    """

    __slots__ = ("name", "kind_stocked", "_items")

    def __init__(self, name: str, kind_stocked: str) -> None:
        self.name = name
        self.kind_stocked = kind_stocked
        self._items: dict[E, None] = {}

    def add(self, entity: E) -> None:
        self._items[entity] = None

    def remove(self, entity: E | None = None) -> E | None:
        items = self._items
        if entity is None:
            return items.popitem()[0] if items else None
        if entity in items:
            del items[entity]
            return entity
        return None

    def count(self) -> int:
        return len(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self) -> Iterator[E]:
        return iter(self._items)

    def __contains__(self, entity: object) -> bool:
        return entity in self._items
