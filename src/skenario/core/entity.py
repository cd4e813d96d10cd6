"""Entities: the things that move between stocks.

As the seeds say, entities stay nearly anonymous; the logic lives in the stocks that hold them.
"""

from __future__ import annotations

from typing import ClassVar

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)
class Entity:
    """Something a Movement can move. Subclasses add `__slots__` for their own state."""

    __slots__ = ("id",)
    kind: ClassVar[str] = "Entity"

    def __init__(self, id: int) -> None:
        self.id = id

    @property
    def name(self) -> str:
        return f"{self.kind.lower()}-{self.id}"

    def __repr__(self) -> str:
        return f"<{self.kind} {self.id}>"
