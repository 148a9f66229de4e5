"""One open file's state, without Qt: the file, what is selected, which file's bytes are shown, verification
states, decoded data; views render it and send the user's intent back through its methods.

Every change is announced on an :class:`~.events.Event`, so a Qt widget, a test or a notebook can follow the
same session (napari's ``components`` vs ``_qt`` split).
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ztviewer.codec import Component, Problem, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.source import Source

from . import properties
from .digest_states import DigestStates
from .dims import Dims
from .edit_session import EditSession
from .events import Event
from .file_layout import FileLayout, Segment, build_layout, stored_here
from .selection import Item, Selection, byte_range_of
from .tree_nodes import TensorGroup
from .tree_state import TreeState

if TYPE_CHECKING:
    from .decode_cache import DecodedCache


@dataclass(frozen=True, slots=True)
class ShownBytes:
    """The file whose bytes the hex view and file map show: the open file, or one shard of a multi-file set."""

    source: Source | None
    layout: FileLayout
    label: str | None = None     # the shard's name when a shard is shown


class FileSession:
    """The state of one open file (one tab).

    Parameters
    ----------
    tensor_file:
        The opened file; the session owns it and closes it in :meth:`close`.
    layout:
        Its byte layout when already built (the worker that opened the file builds it); else built here.
    cache:
        Where decoded tensor data is kept. By default the process-wide cache, so all open files share one byte
        budget; :meth:`close` drops this file's entries.

    ``dims`` is the plane state of the inspect view (displayed axes, slice indices); ``edits`` the unsaved edits
    and their undo history (None for a file that could not be read); ``tree`` the tensor tree's order, grouping,
    filter and marks.

    Events: ``selection_changed(Selection)``, ``shown_changed(ShownBytes)`` (another shard's bytes are shown),
    ``digests_changed(list[(Tensor, role, DigestState)])``, ``message(str)`` (for a status line),
    ``properties_changed(None)`` (the selected item's :meth:`properties` changed without a new selection).
    """

    def __init__(self, tensor_file: TensorFile, layout: FileLayout | None = None,
                 cache: DecodedCache | None = None, name_order: list[int] | None = None) -> None:
        self.tensor_file = tensor_file
        self._layout = layout
        self._name_order = name_order
        self._shown: ShownBytes | None = None
        self.selection = Selection()
        self.digests = DigestStates(tensor_file.tensors)
        self.dims = Dims()        # the plane of the selected tensor the inspect view shows
        self.edits = EditSession(tensor_file) if tensor_file.readable else None
        self._cache = cache
        self._shard_layouts: dict[int, FileLayout] = {}
        self._tree: TreeState | None = None
        self.selection_changed: Event[Selection] = Event("selection_changed")
        self.shown_changed: Event[ShownBytes] = Event("shown_changed")
        self.digests_changed: Event[list[tuple[Tensor, str, DigestState]]] = Event("digests_changed")
        self.message: Event[str] = Event("message")
        self.properties_changed: Event[None] = Event("properties_changed")

    @property
    def layout(self) -> FileLayout:
        """The byte layout of the open file itself (built on first use)."""
        if self._layout is None:
            self._layout = build_layout(self.tensor_file)
        return self._layout

    @property
    def shown(self) -> ShownBytes:
        """Whose bytes are shown: the file's own until a tensor of another shard is selected."""
        if self._shown is None:
            self._shown = ShownBytes(self.tensor_file.source, self.layout)
        return self._shown

    @property
    def shown_source(self) -> Source | None:
        """The source whose bytes are shown (without building a layout)."""
        return self._shown.source if self._shown is not None else self.tensor_file.source

    @property
    def tree(self) -> TreeState:
        """The tensor tree's rows, order, grouping, filter and marks (built on first use: a file opened only to
        be listed from a script needs none)."""
        if self._tree is None:
            self._tree = TreeState(self.tensor_file, self.digests, self.edits, self._name_order)
            self.digests_changed.connect(self._tree.on_digests_changed)
            self._tree.filter_changed.connect(self._on_filter_changed)
        return self._tree

    @property
    def cache(self) -> DecodedCache:
        if self._cache is None:
            from .decode_cache import shared_cache  # decoding is imported when first needed, not at start-up

            self._cache = shared_cache()
        return self._cache

    # -- lookups ---------------------------------------------------------------------------------------------
    def tensor(self, name: str) -> Tensor | None:
        """The tensor called ``name`` (the first one, if a damaged file repeats a name); only that one is built
        (:meth:`~ztviewer.codec.model.TensorFile.tensor` looks names up without building the others)."""
        try:
            return self.tensor_file.tensor(name)
        except KeyError:
            return None

    def tensor_by_index(self, index: int) -> Tensor | None:
        tensors = self.tensor_file.tensors
        if 0 <= index < len(tensors) and tensors[index].index == index:
            return tensors[index]
        return next((t for t in tensors if t.index == index), None)

    def segment_at(self, offset: int) -> Segment | None:
        """The segment of the shown bytes containing ``offset``."""
        return self.shown.layout.segment_at(offset)

    # -- selection -------------------------------------------------------------------------------------------
    def select(self, item: Item, tensor: Tensor | None = None) -> Selection:
        """Make ``item`` current (``tensor`` names the owner when ``item`` is a component). A tensor stored in
        another shard of a multi-file set brings that shard's bytes into view first."""
        if isinstance(item, Tensor):
            tensor = item
        elif not isinstance(item, Component):
            tensor = None
        if tensor is not None and not stored_here(self.tensor_file, tensor):
            self._show_shard_of(tensor)
        here = tensor is None or (tensor.source or self.tensor_file.source) is self.shown_source
        span = byte_range_of(item) if here and isinstance(item, (Tensor, Component)) else None
        return self._set_selection(Selection(item, tensor, span))

    def select_tensor(self, name: str, role: str | None = None) -> Selection:
        """Select a tensor (or one of its components) by name; raises KeyError for an unknown one."""
        tensor = self.tensor(name)
        if tensor is None or (role is not None and role not in tensor.components):
            raise KeyError(name if tensor is None else f"{name}: {role}")
        return self.select(tensor.components[role] if role is not None else tensor, tensor)

    def select_segment(self, segment: Segment) -> Selection:
        """Select the owner of a segment of the shown bytes (a component), else the segment's range alone."""
        owner = segment.owner
        if owner is not None and owner.tensor_index is not None:
            tensor = self.tensor_by_index(owner.tensor_index)
            if tensor is not None:
                item = tensor.components.get(owner.role) if owner.role is not None else None
                return self.select(item if item is not None else tensor, tensor)
        self.message.emit(segment.describe())
        return self._set_selection(Selection(self.tensor_file, None, (segment.offset, segment.length)))

    def select_offset(self, offset: int) -> Selection | None:
        """Select what owns the byte at ``offset`` of the shown bytes (None when outside every segment)."""
        segment = self.segment_at(offset)
        return self.select_segment(segment) if segment is not None else None

    def select_problem(self, problem: Problem) -> Selection:
        """Select the tensor / component a problem names (the file when it names none)."""
        tensor = self.tensor(problem.tensor) if problem.tensor is not None else None
        if tensor is not None and problem.component in tensor.components:
            return self.select(tensor.components[problem.component], tensor)
        return self.select(tensor if tensor is not None else self.tensor_file)

    def _set_selection(self, selection: Selection) -> Selection:
        self.selection = selection
        self.selection_changed.emit(selection)
        return selection

    # -- shown bytes -----------------------------------------------------------------------------------------
    def _show_shard_of(self, tensor: Tensor) -> None:
        source = self.tensor_file.source_for(tensor)
        if source is self.shown_source:
            return
        layout = self._shard_layouts.get(id(source))
        if layout is None:
            from ztviewer.codec.multifile.shards import shard_file

            layout = self._shard_layouts[id(source)] = build_layout(shard_file(self.tensor_file, source))
        label = str(tensor.shard or source.path)
        self._shown = ShownBytes(source, layout, label)
        self.shown_changed.emit(self._shown)
        self.message.emit(f"Showing the bytes of shard {label}")

    # -- what the panels show --------------------------------------------------------------------------------
    def properties(self) -> list[properties.Prop]:
        """The properties-panel rows of the selected item."""
        item, size, layout = self.selection.item, self.tensor_file.size, self.shown.layout
        tensor = self.selection.tensor
        if isinstance(item, Component) and tensor is not None:
            state = self.digests.of(tensor, item).value
            return properties.component_props(tensor, item, layout, size, state, self.tensor_file)
        if isinstance(item, Tensor):
            return properties.tensor_props(item, layout, size, self.tensor_file)
        if isinstance(item, TensorGroup):
            return properties.group_props(item, self.tree.group_totals)
        return properties.file_props(self.tensor_file, layout)

    def _on_filter_changed(self, _pattern: str) -> None:
        """A selected group's properties total the filter's matches, as its row does: they changed."""
        if isinstance(self.selection.item, TensorGroup):
            self.properties_changed.emit(None)

    # -- verification ----------------------------------------------------------------------------------------
    def digest_state(self, tensor: Tensor, component: Component) -> DigestState:
        return self.digests.of(tensor, component)

    def set_digest_states(self, updates: Iterable[tuple[Tensor, str, DigestState]]) -> list[tuple[Tensor, str,
                                                                                                   DigestState]]:
        """Record verification outcomes; announces (and returns) those that changed a state."""
        changed = [(t, role, state) for t, role, state in updates
                   if role in t.components and self.digests.set(t, t.components[role], state)]
        if changed:
            self.digests_changed.emit(changed)
        return changed

    def reset_digest_states(self, pairs: Iterable[tuple[Tensor, Component]]) -> None:
        """Mark components as not verified yet (a new verification of them starts)."""
        self.set_digest_states([(t, c.role, DigestState.initial(c)) for t, c in pairs])

    # -- end -------------------------------------------------------------------------------------------------
    def close(self) -> None:
        """Forget this file's decoded data and close the file (its tab is closing)."""
        if self._cache is not None:
            self._cache.drop_file(self.tensor_file)
        self.tensor_file.close()
        for event in (self.selection_changed, self.shown_changed, self.digests_changed, self.message):
            event.disconnect_all()
        if self._tree is not None:
            self._tree.close()
