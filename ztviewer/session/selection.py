"""What is selected in an open file: a tree item (the file, a name group, a tensor or one of its components) and
the byte range it covers in the bytes being shown."""
from __future__ import annotations

from dataclasses import dataclass

from ztviewer.codec import Component, Tensor, TensorFile

from .tree_nodes import TensorGroup

Item = TensorFile | TensorGroup | Tensor | Component | None


def byte_range_of(item: Item) -> tuple[int, int] | None:
    """``(offset, length)`` an item covers in its own file: a component's blob, a tensor's span, the whole file."""
    if isinstance(item, Component):
        return item.offset, item.length
    if isinstance(item, Tensor):
        return item.byte_span()
    if isinstance(item, TensorFile):
        return 0, item.size
    return None


@dataclass(frozen=True, slots=True)
class Selection:
    """The current item of one open file.

    ``tensor`` is the selected tensor, or the tensor owning the selected component. ``byte_range`` is the
    ``(offset, length)`` to highlight in the shown bytes: the item's range when its bytes are the ones shown
    (a tensor of another shard is shown by switching shards first), a segment's range when a range without a
    tree item was picked, else None.
    """

    item: Item = None
    tensor: Tensor | None = None
    byte_range: tuple[int, int] | None = None

    @property
    def role(self) -> str | None:
        """The role of the selected component (None unless a component is selected)."""
        return self.item.role if isinstance(self.item, Component) else None
