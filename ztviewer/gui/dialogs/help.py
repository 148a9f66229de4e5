"""Help ▸ Keyboard Shortcuts (read from the window's actions: one source of truth) and Help ▸ Quick Guide."""
from __future__ import annotations

import re
from dataclasses import dataclass

from PySide6.QtCore import QSortFilterProxyModel, Qt
from PySide6.QtGui import QAction, QKeySequence, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (
    QAbstractButton,
    QDialog,
    QDialogButtonBox,
    QHeaderView,
    QLineEdit,
    QMainWindow,
    QMenu,
    QTableView,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)


@dataclass(frozen=True, slots=True)
class ShortcutRow:
    where: str      # the menu ('File', 'Edit ▸ Copy as Code') or the view the shortcut works in ('Hex view')
    command: str
    keys: str       # every binding, in the platform's spelling
    description: str


def shortcut_rows(window: QMainWindow) -> list[ShortcutRow]:
    """Every shortcut the window has now: its menus' actions first (in menu order), then the actions and
    buttons of the open views (each command once, however many tabs carry it)."""
    rows: list[ShortcutRow] = []
    seen: set[tuple[str, str]] = set()

    def add(where: str, text: str, sequences: list[QKeySequence], tip: str) -> None:
        keys = ", ".join(s.toString(QKeySequence.SequenceFormat.NativeText) for s in sequences
                         if not s.isEmpty() and not _media_key(s)).replace("Shift+Backtab", "Shift+Tab")
        command = _plain(text)
        if keys and (command, keys) not in seen:
            seen.add((command, keys))
            rows.append(ShortcutRow(where, command, keys, tip if tip != command else ""))

    def walk(menu: QMenu, where: str) -> None:
        for action in menu.actions():
            submenu = action.menu()
            if isinstance(submenu, QMenu):
                walk(submenu, f"{where} ▸ {_plain(action.text())}")
            elif not action.isSeparator():
                add(where, action.text(), action.shortcuts(), action.statusTip() or action.toolTip())

    for top in window.menuBar().actions():
        menu = top.menu()
        if isinstance(menu, QMenu):
            walk(menu, _plain(top.text()))
    for action in window.findChildren(QAction):
        add(_owner_name(action), action.text(), action.shortcuts(), action.statusTip() or action.toolTip())
    for button in window.findChildren(QAbstractButton):
        add(_owner_name(button), button.text(), [button.shortcut()], button.toolTip())
    return rows


def _media_key(sequence: QKeySequence) -> bool:
    """A dedicated keyboard key (Open, Refresh, Undo…) that the platform adds to a standard binding."""
    return bool(sequence.count()) and sequence[0].key().value >= Qt.Key.Key_Back.value  # type: ignore[index]


def _plain(text: str) -> str:
    """Menu text without its mnemonic marker or trailing ellipsis: '&Open…' → 'Open'."""
    return re.sub(r"&(.)", r"\1", text).rstrip("…").rstrip(".").strip()


def _owner_name(item: QAction | QAbstractButton) -> str:
    """The nearest ztviewer widget holding ``item``, in words: HexView → 'Hex view'."""
    owner = item.parent()
    while owner is not None:
        if type(owner).__module__.startswith("ztviewer.") and isinstance(owner, QWidget):
            words = re.findall(r"[A-Z]+(?![a-z])|[A-Z][a-z0-9]*|[a-z0-9]+", type(owner).__name__)
            return " ".join([words[0]] + [w if w.isupper() else w.lower() for w in words[1:]]) if words else "View"
        owner = owner.parent()
    return "Window"


class ShortcutsDialog(QDialog):
    """A filterable table of :func:`shortcut_rows`."""

    HEADERS = ("Where", "Command", "Keys", "What it does")

    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setObjectName("shortcutsDialog")
        self.setWindowTitle("Keyboard Shortcuts")
        self.model = QStandardItemModel(0, len(self.HEADERS), self)
        self.model.setHorizontalHeaderLabels(list(self.HEADERS))
        for row in shortcut_rows(window):
            items = [QStandardItem(text) for text in (row.where, row.command, row.keys, row.description)]
            for item in items:
                item.setEditable(False)
            items[3].setToolTip(row.description)
            self.model.appendRow(items)
        self.proxy = QSortFilterProxyModel(self)
        self.proxy.setSourceModel(self.model)
        self.proxy.setFilterKeyColumn(-1)
        self.proxy.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.filter_edit = QLineEdit()
        self.filter_edit.setPlaceholderText("Filter by command, key or menu")
        self.filter_edit.setClearButtonEnabled(True)
        self.filter_edit.textChanged.connect(self.proxy.setFilterFixedString)
        self.table = QTableView()
        self.table.setModel(self.proxy)
        self.table.verticalHeader().hide()
        self.table.setWordWrap(False)
        self.table.setSelectionBehavior(QTableView.SelectionBehavior.SelectRows)
        self.table.verticalHeader().setDefaultSectionSize(self.fontMetrics().height() + 6)
        header = self.table.horizontalHeader()
        for column in range(3):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        header.setSectionResizeMode(3, QHeaderView.ResizeMode.Stretch)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.filter_edit)
        layout.addWidget(self.table)
        layout.addWidget(buttons)
        em = self.fontMetrics().horizontalAdvance("M")
        self.resize(96 * em, 36 * self.fontMetrics().height())


QUICK_GUIDE = """
<h2>ztviewer in ten clicks</h2>
<ol>
<li><b>Open</b> — File ▸ Open… ({open}), drop files on the window, or pick one under File ▸ Open Recent.
    A folder or a <code>*.index.json</code> opens a sharded checkpoint as one set.</li>
<li><b>Tree</b> — every tensor with its dtype, shape, stored size, encoding, offset and digest. Type in the
    filter box ({find}) to find a name; View ▸ Group by Name Prefix folds names by their dotted prefix
    (<code>model.layers.N</code>).
    Click a tensor or one of its components.</li>
<li><b>Bytes</b> — the hex view shows the selected bytes; the Data Inspector below reads the bytes at the
    cursor as every type. Go to Offset ({goto}); Find Bytes ({find_bytes}).</li>
<li><b>Inspect</b> — the tensor decoded: heatmap or sparsity plot (wheel zooms, drag pans, hover shows
    values), histogram and statistics; the Values button shows the plane as a table.
    Tensor trains show their cores and a reconstructed slice.</li>
<li><b>Problems</b> — everything wrong in the file, with where (tensor, component, byte offset) and the rule;
    double-click one to go there. A zTensor v2 file whose last save was interrupted shows the generation before
    it; File ▸ Repair Interrupted Save… rolls the file back to it.</li>
<li><b>Check File</b> ({check}) — structure, decode every tensor and verify every digest; what it finds goes to
    Problems, the tree and the status bar.</li>
<li><b>Verify</b> — Verify All Digests ({verify}) or only the selected tensors ({verify_selection}).</li>
<li><b>Edit</b> — rename (F2), delete (Del) or change attributes in the tree and Attributes dock; Undo
    ({undo}) and the History dock step back.</li>
<li><b>Save</b> — Save As… writes zTensor or safetensors; the extension you type chooses the format.</li>
<li><b>Compare</b> — File ▸ Compare… ({compare}) two files or sets: which tensors changed, by how much, and
    where (A, B and Δ side by side).</li>
</ol>
<p>Help ▸ Keyboard Shortcuts lists every key.</p>
"""


def quick_guide_html(window: QMainWindow) -> str:
    """The guide with the window's current shortcuts filled in."""
    actions = getattr(window, "actions_", None)

    def keys(name: str) -> str:
        action = getattr(actions, name, None)
        if action is None:
            editing = getattr(window, "editing", None)
            action = getattr(editing, f"{name}_action", None)
        sequence = action.shortcut() if action is not None else QKeySequence()
        return sequence.toString(QKeySequence.SequenceFormat.NativeText) or "no key"

    names = ("open", "find", "goto", "find_bytes", "check", "verify", "verify_selection", "undo", "compare")
    attribute = {"check": "check_file", "verify": "verify_all"}
    return QUICK_GUIDE.format(**{n: keys(attribute.get(n, n)) for n in names})


class QuickGuideDialog(QDialog):
    def __init__(self, window: QMainWindow) -> None:
        super().__init__(window)
        self.setObjectName("quickGuideDialog")
        self.setWindowTitle("Quick Guide")
        self.browser = QTextBrowser()
        self.browser.setHtml(quick_guide_html(window))
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(self.browser)
        layout.addWidget(buttons)
        em = self.fontMetrics().horizontalAdvance("M")
        self.resize(56 * em, 36 * self.fontMetrics().height())
