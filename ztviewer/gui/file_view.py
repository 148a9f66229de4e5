"""One open file in a tab: filterable tensor tree on the left, file map and hex view on the right."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtCore import QItemSelectionModel, QModelIndex, Qt, QThreadPool, QTimer, Signal
from PySide6.QtGui import QShowEvent
from PySide6.QtWidgets import (
    QLabel,
    QLineEdit,
    QToolButton,
    QTreeView,
    QVBoxLayout,
    QWidget,
)

from ztviewer.codec import Component, Problem, Tensor, TensorFile
from ztviewer.session.file_layout import FileLayout, Segment
from ztviewer.session.file_session import FileSession, ShownBytes
from ztviewer.session.prepared_file import PreparedFile
from ztviewer.session.properties import Prop
from ztviewer.session.selection import Selection
from ztviewer.session.tree_nodes import NodeKind
from ztviewer.session.tree_state import TreeItem, opens_grouped
from ztviewer.workers.tasks import CheckFileTask, OpenedFile, VerifyDigestsTask

from .file_checks import FileChecks
from .file_panels import bytes_side, configure_tree, size_split, split, tree_side
from .inspect_tab import add_inspect_tab
from .models.filter_switch import FilterSwitch
from .models.problems_model import ProblemsModel
from .models.tensor_tree import TensorTreeModel, TreeRole
from .models.tree_proxy import TensorFilterProxy
from .tree_columns import TreeColumns
from .views.decoded_bytes import DecodedBytes
from .views.file_map import FileMap
from .views.hex_view import HexView
from .views.verify_progress import VerifyProgress

if TYPE_CHECKING:
    from ztviewer.codec.source import Source
    from ztviewer.session.decoded_part import DecodedPart

    from .models.edit_stack import EditSession
    from .views.tree_edits import TreeEditing



class FileView(QWidget):
    """Everything about one :class:`TensorFile`; the main window holds one per tab."""

    selection_changed = Signal(object)     # codec object (TensorFile, TensorGroup, Tensor, Component) or None
    cursor_moved = Signal(object)          # byte offset under the hex cursor
    status_message = Signal(str)
    properties_changed = Signal()          # the current item's properties changed (a group's, under a new filter)

    def __init__(self, opened: OpenedFile, grouped: bool = False, pool: QThreadPool | None = None,
                 parent: QWidget | None = None, session: FileSession | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("fileView")
        self._pool = pool
        prepared = opened.analysis if isinstance(opened.analysis, PreparedFile) else None
        self.session = session if session is not None else FileSession(
            opened.tensor_file, prepared.layout if prepared else None,
            name_order=prepared.name_order if prepared else None)
        self.tensor_file: TensorFile = self.session.tensor_file
        grouped = grouped or opens_grouped(len(self.tensor_file.tensors))
        self.tree_model = TensorTreeModel(self.tensor_file, grouped=grouped, parent=self, session=self.session)
        self.proxy = TensorFilterProxy(self)
        self.proxy.setSourceModel(self.tree_model)
        self.problems_model = ProblemsModel(self.tensor_file.all_problems(), self)
        self._scroll_hex_on_select = True
        self._following = False          # the tree is being moved to the session's selection
        self._decoded: DecodedPart | None = None   # a compressed part whose decoded bytes the hex view shows instead
        self.opened_as: set[str] = set()
        self.edit_session: EditSession | None = None     # the Qt face of session.edits, once editing is enabled
        self.tree_editing: TreeEditing | None = None
        self.save_progress: QWidget | None = None        # the strip of a save running from this tab
        self._build_widgets()
        self.checks = FileChecks(self.session, self.problems_model, self.tree_model, self.verify_bar,
                                 self.status_message.emit, pool, self)
        tree_state = self.session.tree          # the filter and grouping are shown as the session has them
        tree_state.filter_changed.connect(self._follow_filter)
        tree_state.regrouped.connect(self._follow_grouping)
        self.session.selection_changed.connect(self._render_selection)
        self.session.shown_changed.connect(self._render_shown)
        self.session.message.connect(self.status_message.emit)
        self.session.properties_changed.connect(lambda _none: self.properties_changed.emit())
        self._render_shown(self.session.shown)
        self.tree.expand(self.tree.model().index(0, 0))
        self.tree.setCurrentIndex(self.tree.model().index(0, 0))

    # -- construction ----------------------------------------------------------------------------------------
    def _build_widgets(self) -> None:
        self.filter_edit = QLineEdit()
        self.filter_edit.setObjectName("tensorFilter")
        self.filter_edit.setPlaceholderText("Filter tensors: substring or glob, e.g. *.weight  (Ctrl+F)")
        self.filter_edit.setClearButtonEnabled(True)
        self._filter_timer = QTimer(self, singleShot=True, interval=120)
        self._filter_timer.timeout.connect(self._apply_filter)
        self.filter_edit.textChanged.connect(lambda _text: self._filter_timer.start())
        self.match_label = QLabel()
        self.group_button = QToolButton()
        self.group_button.setText("Group")
        self.group_button.setToolTip("Group tensors by dotted name prefix")
        self.group_button.setCheckable(True)
        self.group_button.setChecked(self.tree_model.grouped)
        self.group_button.toggled.connect(self.set_grouped)

        self.tree = QTreeView()
        self.tree.setObjectName("tensorTree")
        self.filter_switch = FilterSwitch(self.tree, self.tree_model, self.proxy, self._on_current_changed)
        configure_tree(self.tree)
        self.columns = TreeColumns(self.tree)

        self.hex_view = HexView()
        self.file_map = FileMap()
        self.verify_bar = VerifyProgress()
        self.hex_view.cursor_moved.connect(self.cursor_moved)
        self.hex_view.window_changed.connect(self.file_map.set_window)
        self.hex_view.byte_activated.connect(self.select_owner_of)
        self.file_map.segment_clicked.connect(self._on_segment_clicked)

        left = tree_side(self.filter_edit, [self.match_label, self.group_button], self.tree)
        right, right_layout = bytes_side(self.file_map)
        self.decoded_bytes = DecodedBytes(self, self._pool)  # the hex view; a "Decoded" switch for compressed parts
        self.inspect, self.inspect_tabs = add_inspect_tab(self, right_layout, self.decoded_bytes)  # Bytes | Inspect
        self.splitter = split(left, right)
        self._sized = False
        self.main_layout = QVBoxLayout(self)
        self.main_layout.setContentsMargins(4, 4, 4, 4)
        self.main_layout.addWidget(self.splitter, 1)
        self.main_layout.addWidget(self.verify_bar)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._sized:       # the hex view gets its natural width unless the tree's important columns need it
            self._sized = True
            size_split(self.splitter, self.hex_view.sizeHint().width(), self.columns.least_width())
            self.columns.fit()

    # -- selection -------------------------------------------------------------------------------------------
    def to_source(self, index: QModelIndex) -> QModelIndex:
        """The tree-model index of an index of the tree view (which may show the filter proxy)."""
        return self.filter_switch.to_source(index)

    def current_source_index(self) -> QModelIndex:
        return self.to_source(self.tree.currentIndex())

    def current_item(self) -> TreeItem | None:
        return self.tree_model.item(self.current_source_index())

    def selected_tensors(self) -> list[Tensor]:
        """The tensors of the selected rows (a component row stands for its tensor), each once, in row order;
        else the current row's."""
        tensors = (self.tree_model.tensor_at(self.to_source(i)) for i in self.tree.selectionModel().selectedRows(0))
        unique = list({id(t): t for t in tensors if t is not None}.values())
        current = self.current_tensor()
        return unique or ([current] if current is not None else [])

    def current_tensor(self) -> Tensor | None:
        return self.tree_model.tensor_at(self.current_source_index())

    def selected_items(self) -> list[TreeItem | None]:
        rows = self.tree.selectionModel().selectedRows(0)
        return [self.tree_model.item(self.to_source(i)) for i in rows]

    def select_item(self, tensor: Tensor | None, role: str | None = None, scroll_hex: bool = True) -> bool:
        """Make a tensor (or one of its components, or the file row when ``tensor`` is None) current."""
        source = self.tree_model.index_of(tensor, role) if tensor is not None else self.tree_model.file_index()
        self._scroll_hex_on_select = scroll_hex
        try:
            return self._make_current(source)
        finally:
            self._scroll_hex_on_select = True

    def _make_current(self, source: QModelIndex) -> bool:
        """Make a tree-model row the view's current (and only selected) row and scroll to it, clearing the filter
        when it hides the row; ``False`` when there is no such row."""
        index = self.filter_switch.to_view(source)
        if not index.isValid() and self.proxy.pattern:
            self.filter_edit.clear()
            self._apply_filter()
            index = self.filter_switch.to_view(source)
        if not index.isValid():
            return False
        self.tree.selectionModel().setCurrentIndex(
            index, QItemSelectionModel.SelectionFlag.ClearAndSelect | QItemSelectionModel.SelectionFlag.Rows)
        self.tree.scrollTo(index)
        return True

    def _on_current_changed(self, current: QModelIndex, previous: QModelIndex) -> None:
        """The user moved in the tree: the session selects that item."""
        if self._following:
            return
        source = self.to_source(current)
        self.session.select(self.tree_model.item(source), self.tree_model.tensor_of(source))

    def _render_selection(self, selection: Selection) -> None:
        """Show the session's selection: its bytes highlighted, its row current in the tree."""
        if selection.byte_range is not None:
            self.hex_view.set_selection(*selection.byte_range, scroll=self._scroll_hex_on_select)
            self.file_map.set_selection(*selection.byte_range)
        else:
            self.hex_view.clear_selection()
            self.file_map.clear_selection()
        self._follow_in_tree(selection)
        self.selection_changed.emit(selection.item)

    def _tree_index_of(self, selection: Selection) -> QModelIndex:
        item, tensor = selection.item, selection.tensor
        if isinstance(item, Component) and tensor is not None:
            return self.tree_model.index_of(tensor, item.role)
        if isinstance(item, Tensor):
            return self.tree_model.index_of(item)
        if isinstance(item, TensorFile):
            return self.tree_model.file_index()
        return QModelIndex()      # a group: only the tree selects one, so it is current already

    def _follow_in_tree(self, selection: Selection) -> None:
        source = self._tree_index_of(selection)
        if not source.isValid() or source == self.current_source_index():
            return
        self._following = True
        try:
            self._make_current(source)
        finally:
            self._following = False

    def _render_shown(self, shown: ShownBytes) -> None:
        """Point the hex view and file map at the bytes the session shows (a shard's, in a multi-file set)."""
        self._decoded = None
        self.hex_view.set_source(shown.source, shown.layout)
        self.file_map.set_layout(shown.layout)

    @property
    def shown_source(self) -> Source | DecodedPart | None:
        """The source the hex view shows: the file's own, the current shard's in a multi-file set, or the decoded
        bytes of a compressed part."""
        return self._decoded if self._decoded is not None else self.session.shown_source

    @property
    def layout_map(self) -> FileLayout:
        """The layout of the shown bytes."""
        return self.session.shown.layout

    def show_bytes_of(self, part: DecodedPart | None, layout: FileLayout | None) -> None:
        """Show a compressed part's decoded bytes (a :class:`~ztviewer.session.decoded_part.DecodedPart`) in the
        hex view and the data inspector; ``None`` goes back to the session's shown bytes, with the selection."""
        if part is not None:
            self._decoded = part
            self.hex_view.set_source(part, layout)
            self.hex_view.cursor_moved.emit(0)
            return
        if self._decoded is None:
            return
        self._decoded = None
        shown = self.session.shown
        self.hex_view.set_source(shown.source, shown.layout)
        if self.session.selection.byte_range is not None:
            self.hex_view.set_selection(*self.session.selection.byte_range)
        self.hex_view.cursor_moved.emit(self.hex_view.cursor_offset())

    def select_owner_of(self, offset: int) -> None:
        if self._decoded is not None:      # decoded bytes: their offsets are not the file's
            return
        segment = self.session.segment_at(offset)
        if segment is not None:
            self._on_segment_clicked(segment, offset)

    def _on_segment_clicked(self, segment: Segment, offset: int) -> None:
        self._scroll_hex_on_select = False
        try:
            self.session.select_segment(segment)
        finally:
            self._scroll_hex_on_select = True
        self.hex_view.set_cursor(offset)

    def select_problem(self, problem: Problem) -> None:
        """Select the problem's tensor/component and bring its byte offset into the hex view."""
        self._scroll_hex_on_select = problem.offset is None
        try:
            self.session.select_problem(problem)
        finally:
            self._scroll_hex_on_select = True
        if problem.offset is not None:
            self.go_to_offset(problem.offset, select_owner=False)

    def go_to_offset(self, offset: int, select_owner: bool = True) -> None:
        """Show byte ``offset`` in the hex view (bringing the Bytes tab to the front) and, with ``select_owner``,
        select what owns it in the tree (a tensor's component, the header, padding…)."""
        self.inspect_tabs.setCurrentIndex(0)
        if select_owner:
            self.select_owner_of(offset)
        self.hex_view.set_cursor(offset)
        self.hex_view.setFocus()

    def properties(self) -> list[Prop]:
        """The properties-panel rows of the current item."""
        return self.session.properties()

    # -- filter and grouping ---------------------------------------------------------------------------------
    def focus_filter(self) -> None:
        self.filter_edit.setFocus()
        self.filter_edit.selectAll()

    def _apply_filter(self) -> None:
        self._filter_timer.stop()
        self.filter_switch.set_pattern(self.filter_edit.text())

    def _follow_filter(self, pattern: str) -> None:
        """The session's filter matched (a new pattern, or pending renames changed the names shown)."""
        if self.filter_edit.text() != pattern:      # set from elsewhere (a script, a test)
            self.filter_edit.blockSignals(True)
            self.filter_edit.setText(pattern)
            self.filter_edit.blockSignals(False)
        state = self.session.tree
        self.match_label.setText(state.match_text())
        file_index = self.tree.model().index(0, 0)
        self.tree.expand(file_index)
        if state.expands_matches():
            self._expand_groups(file_index)
        self.columns.fit(only_grow=True)

    def _expand_groups(self, parent: QModelIndex) -> None:
        model = self.tree.model()
        for row in range(model.rowCount(parent)):
            child = model.index(row, 0, parent)
            if child.data(TreeRole.KIND) == NodeKind.GROUP.value:
                self.tree.expand(child)
                self._expand_groups(child)

    def set_grouped(self, grouped: bool) -> None:
        """Group by name prefix (or not), keeping the current tensor current."""
        if grouped == self.tree_model.grouped:
            return
        current = self.current_item()
        self.session.tree.set_grouped(grouped)
        tensor = current if isinstance(current, Tensor) else None
        self.select_item(tensor, scroll_hex=False)

    def _follow_grouping(self, grouped: bool) -> None:
        self.group_button.setChecked(grouped)
        file_index = self.tree.model().index(0, 0)
        self.tree.expand(file_index)
        if self.session.tree.expands_matches():     # grouped under a filter: open the groups holding the matches
            self._expand_groups(file_index)

    def restore_manifest_order(self) -> None:
        self.tree.header().setSortIndicator(-1, Qt.SortOrder.AscendingOrder)
        self.tree_model.sort(-1)

    # -- editing ---------------------------------------------------------------------------------------------
    def enable_editing(self, ask_text: Callable[[str, str, str], str | None],
                       report: Callable[[str], None]) -> EditSession | None:
        """Edit this file: its session's edits get an undo stack, the tree its Rename / Delete actions. Returns
        the edit session (None for a file that cannot be read, so cannot be edited)."""
        from .models.edit_stack import create_session
        from .views.tree_edits import TreeEditing

        if self.edit_session is None:
            self.edit_session = create_session(self.session, self)
            if self.edit_session is not None:
                self.tree_editing = TreeEditing(self, self.edit_session, ask_text, report)
        return self.edit_session

    def show_save_progress(self, strip: QWidget | None) -> None:
        """Show the progress strip of a save from this tab below it, or remove the one shown (None)."""
        if self.save_progress is not None:
            self.save_progress.hide()
            self.save_progress.deleteLater()
        self.save_progress = strip
        if strip is not None:
            self.main_layout.addWidget(strip)

    # -- verification ----------------------------------------------------------------------------------------
    def report_problems(self, problems: list[Problem]) -> None:
        """Problems found after opening (a view's decode, Check File): see :meth:`.FileChecks.report_problems`."""
        self.checks.report_problems(problems)

    def check_file(self) -> CheckFileTask | None:
        """Check File: structure, decode every tensor, verify every digest (on a worker); returns the task."""
        return self.checks.check_file()

    def verify(self, selection_only: bool = False) -> VerifyDigestsTask | None:
        """Verify every recorded digest, or those of the selected rows; returns the task (or None)."""
        if not selection_only:
            return self.checks.verify()
        sources = [self.to_source(index) for index in self.tree.selectionModel().selectedRows(0)]
        return self.checks.verify((self.tree_model.item(s), self.tree_model.tensor_of(s)) for s in sources)

    def shutdown(self) -> None:
        """Stop background work and release the file (the tab is closing)."""
        self.checks.shutdown()
        self.inspect.shutdown()
        self.decoded_bytes.find_bar.shutdown()
        self.hex_view.set_source(None)
        self.session.close()
