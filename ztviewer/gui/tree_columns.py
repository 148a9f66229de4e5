"""The tensor tree's columns: names shortened in the middle by dotted segments, every column as wide as its
header and content, the important ones first so that they are on screen in a narrow window."""
from __future__ import annotations

from PySide6.QtCore import QAbstractItemModel, QEvent, QModelIndex, QObject, QPersistentModelIndex, QSize, Qt
from PySide6.QtWidgets import (
    QHeaderView,
    QStyle,
    QStyledItemDelegate,
    QStyleOptionViewItem,
    QTreeView,
)

from ztviewer.session.name_elide import elide_dotted

from .models.tree_roles import Column

#: visual order: what a user compares first (name, type, shape, size, digest), then the storage details
VISUAL_ORDER = (Column.NAME, Column.DTYPE, Column.SHAPE, Column.STORED, Column.DIGEST, Column.LAYOUT,
                Column.ENCODING, Column.OFFSET)
IMPORTANT = (Column.NAME, Column.DTYPE, Column.SHAPE, Column.STORED, Column.DIGEST)
NAME_MIN_CHARS = 22          # the name column keeps at least this many average characters
SAMPLE_ROWS = 100            # rows measured to size a column: two screens (rows of the lazy model are built to be read)
EXACT_ROWS = 8               # of those, the widest texts of a column measured through its delegate


class NameElideDelegate(QStyledItemDelegate):
    """Shortens long dotted names by whole segments (``…layers.12…q_proj.weight``), then in the middle; its size
    hint is the whole name's."""

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._measuring = False

    def sizeHint(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> QSize:
        self._measuring = True
        try:
            return super().sizeHint(option, index)
        finally:
            self._measuring = False

    def initStyleOption(self, option: QStyleOptionViewItem, index: QModelIndex | QPersistentModelIndex) -> None:
        super().initStyleOption(option, index)
        option.textElideMode = Qt.TextElideMode.ElideMiddle
        text = option.text
        if self._measuring or not text or "." not in text:
            return
        style = option.widget.style() if option.widget is not None else None
        margin = 2 * ((style.pixelMetric(QStyle.PixelMetric.PM_FocusFrameHMargin, None, option.widget) + 1)
                      if style is not None else 3)
        room = option.rect.width() - margin
        if option.features & QStyleOptionViewItem.ViewItemFeature.HasDecoration:
            room -= option.decorationSize.width() + margin
        metrics = option.fontMetrics
        option.text = elide_dotted(text, lambda candidate: metrics.horizontalAdvance(candidate) <= room)


class TreeColumns(QObject):
    """Arranges and sizes the columns of ``tree`` (call :meth:`fit` once rows are there); then keeps the name
    column filling the room the other important columns leave, until the user resizes a column."""

    def __init__(self, tree: QTreeView) -> None:
        super().__init__(tree)
        self.tree = tree
        self.user_sized = False
        self._fitting = False
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(QHeaderView.ResizeMode.Interactive)
        header.setTextElideMode(Qt.TextElideMode.ElideRight)
        header.setResizeContentsPrecision(SAMPLE_ROWS)     # a double click on a divider reads as many rows
        for visual, column in enumerate(VISUAL_ORDER):
            header.moveSection(header.visualIndex(column), visual)
        tree.setItemDelegateForColumn(Column.NAME, NameElideDelegate(tree))
        header.sectionResized.connect(self._on_section_resized)
        header.sortIndicatorChanged.connect(self._forget_widths)
        tree.viewport().installEventFilter(self)
        self._widths: dict[int, int] = {}    # measured content widths, until the rows or the header change
        self._watched_model: QAbstractItemModel | None = None

    def content_width(self, column: int) -> int:
        """Width that shows the header label (with its sort arrow) and the measured rows of ``column``.
        The rows are measured once for every column (see :meth:`_measure_rows`) and kept until the model changes."""
        self._watch(self.tree.model())
        if not self._widths:
            header = self.tree.header()
            rows = self._measure_rows()
            self._widths = {c: max(header.sectionSizeHint(c), rows.get(c, 0)) for c in range(header.count())}
        return self._widths.get(column, 0)

    def _measure_rows(self) -> dict[int, int]:
        """Content width per column over the first ``SAMPLE_ROWS`` rows the tree shows, as the tree's own
        ``sizeHintForColumn`` would find it at a fraction of the work: that asks the delegate, so the model,
        for every role of every row; here one text per cell is compared by its advance in the tree's font
        and only the ``EXACT_ROWS`` widest are measured through the delegate (their font, icon, margins and
        indentation)."""
        tree, model = self.tree, self.tree.model()
        if model is None:
            return {}
        rows: list[QModelIndex] = []
        index = model.index(0, 0)
        while index.isValid() and len(rows) < SAMPLE_ROWS:
            rows.append(index)
            index = tree.indexBelow(index)
        metrics = tree.fontMetrics()
        option = QStyleOptionViewItem()
        tree.initViewItemOption(option)
        widths: dict[int, int] = {}
        # asked of the model itself: a cell's sibling and data, asked of the index, go through Qt and back into
        # the (Python) model, which finds the row's parent again for every cell
        places = [(row.row(), row.parent()) for row in rows]
        index_of, text_of = model.index, model.data
        for column in range(model.columnCount()):
            if tree.isColumnHidden(column):
                continue
            cells = [index_of(row, column, parent) for row, parent in places]
            texts = [str(text_of(cell) or "") for cell in cells]
            advance_of = {text: metrics.horizontalAdvance(text) for text in set(texts)}  # columns repeat values
            advances = list(map(advance_of.__getitem__, texts))
            widest = sorted(range(len(cells)), key=advances.__getitem__, reverse=True)[:EXACT_ROWS]
            widths[column] = max((self._delegate_width(option, cells[i]) for i in widest), default=0)
        return widths

    def _delegate_width(self, option: QStyleOptionViewItem, index: QModelIndex) -> int:
        tree = self.tree
        width = tree.itemDelegateForIndex(index).sizeHint(option, index).width()
        tree_column = tree.treePosition() if tree.treePosition() >= 0 else tree.header().logicalIndex(0)
        if index.column() == tree_column:
            depth, parent = 0, index.parent()
            while parent.isValid():
                depth, parent = depth + 1, parent.parent()
            width += (depth + tree.rootIsDecorated()) * tree.indentation()
        return width

    def _watch(self, model: QAbstractItemModel | None) -> None:
        if model is self._watched_model:
            return
        self._widths.clear()
        self._watched_model = model
        if model is not None:
            for signal in (model.modelReset, model.layoutChanged, model.rowsInserted, model.rowsRemoved,
                           model.dataChanged, model.headerDataChanged):
                signal.connect(self._forget_widths)

    def _forget_widths(self, *args: object) -> None:
        self._widths.clear()

    def fit(self, only_grow: bool = False) -> None:
        """Size every column but the name to its content and let the name fill the rest. ``only_grow``: widen
        the columns whose shown content became wider (a filter's "3 of 12 tensors" on group rows), never
        narrowing one, and leave them alone once the user has sized a column."""
        if only_grow and self.user_sized:
            return
        header = self.tree.header()
        widths = {c: self.content_width(c) for c in Column if c != Column.NAME}
        if only_grow:
            widths = {c: w for c, w in widths.items()
                      if w > header.sectionSize(c) and not self.tree.isColumnHidden(c)}
            if not widths:
                return
        self._fitting = True
        try:
            for column, width in widths.items():
                header.resizeSection(column, width)
            self._fill_name()
        finally:
            self._fitting = False
        self.user_sized = False

    def name_width(self) -> int:
        """The name column: the room the other important columns leave, at least ``NAME_MIN_CHARS`` wide and no
        wider than its content."""
        header = self.tree.header()
        others = sum(header.sectionSize(c) for c in IMPORTANT if c != Column.NAME)
        room = self.tree.viewport().width() - others
        least = self.tree.fontMetrics().averageCharWidth() * NAME_MIN_CHARS
        return max(least, min(room, max(self.content_width(Column.NAME), least)))

    def least_width(self) -> int:
        """The tree width that shows the important columns with the shortest name column allowed."""
        others = sum(self.content_width(c) for c in IMPORTANT if c != Column.NAME)
        least = self.tree.fontMetrics().averageCharWidth() * NAME_MIN_CHARS
        return others + least + self.tree.verticalScrollBar().sizeHint().width() + 2 * self.tree.frameWidth()

    def _fill_name(self) -> None:
        self.tree.header().resizeSection(Column.NAME, self.name_width())

    def _on_section_resized(self, *args) -> None:
        if not self._fitting:
            self.user_sized = True

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Resize and not self.user_sized:
            self._fitting = True
            try:
                self._fill_name()
            finally:
                self._fitting = False
        return False
