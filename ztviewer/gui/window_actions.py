"""Menus, toolbar and shortcuts of the main window."""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QDockWidget, QMenu, QMenuBar, QStyle, QToolBar

from ztviewer.codec import Tensor, TensorFile

from .copy_code import CopyCodeMenu
from .window_host import WindowHost

if TYPE_CHECKING:
    from .tab_opener import TabOpener

SP = QStyle.StandardPixmap
Shortcut = str | QKeySequence.StandardKey | list[str | QKeySequence.StandardKey]


class ActionsHost(WindowHost, Protocol):
    """The window as its actions use it: the commands they trigger, its menu bar and tool bar."""

    @property
    def opener(self) -> TabOpener: ...

    def menuBar(self) -> QMenuBar: ...

    def addToolBar(self, toolbar: QToolBar, /) -> None: ...

    def docks(self) -> list[QDockWidget]: ...

    def reload_current(self) -> object: ...

    def close_current(self) -> None: ...

    def close(self) -> bool: ...

    def focus_filter(self) -> None: ...

    def show_goto_dialog(self) -> None: ...

    def set_grouped(self, grouped: bool) -> None: ...

    def restore_manifest_order(self) -> None: ...

    def verify(self, selection_only: bool = False) -> object: ...

    def check_file(self) -> object: ...

    def repair_current(self) -> object: ...

    def cancel_verify(self) -> None: ...

    def cycle_tab(self, step: int) -> None: ...

    def show_quick_guide(self) -> object: ...

    def show_shortcuts(self) -> object: ...

    def show_about(self) -> None: ...


@dataclass(frozen=True)
class WindowMenus:
    """The menus of the menu bar, by what they are (never found by their text), and the tool bar."""

    file: QMenu
    recent: QMenu
    edit: QMenu
    view: QMenu
    tools: QMenu
    help: QMenu
    toolbar: QToolBar


class WindowActions:
    """Creates every action once; the window enables them according to the current tab."""

    def __init__(self, window: ActionsHost) -> None:
        self.window = window
        parent = window.window()
        style = parent.style()
        w = window

        def action(text: str, slot: Callable[..., object], shortcut: Shortcut | None = None,
                   icon: QStyle.StandardPixmap | None = None, tip: str = "", checkable: bool = False) -> QAction:
            act = QAction(text, parent)
            if shortcut is not None:
                keys = shortcut if isinstance(shortcut, list) else [shortcut]
                sequences: list[QKeySequence] = []
                for key in keys:
                    bindings = (QKeySequence.keyBindings(key) if isinstance(key, QKeySequence.StandardKey)
                                else [QKeySequence(key)])
                    for seq in bindings:
                        if not seq.isEmpty() and seq not in sequences:
                            sequences.append(seq)
                act.setShortcuts(sequences)
            if icon is not None:
                act.setIcon(style.standardIcon(icon))
            if tip:
                act.setStatusTip(tip)
                act.setToolTip(tip)
            act.setCheckable(checkable)
            act.triggered.connect(slot)
            return act

        self.open = action("&Open…", w.opener.show_open_dialog, QKeySequence.StandardKey.Open, SP.SP_DialogOpenButton,
                           "Open tensor files")
        self.compare = action("Com&pare…", w.opener.show_compare_dialog, "Ctrl+Shift+D", None,
                              "Compare two files or sets: what changed, by how much, and where")
        self.reload = action("&Reload", w.reload_current, QKeySequence.StandardKey.Refresh, SP.SP_BrowserReload,
                             "Read the current file again from disk")
        self.close = action("&Close", w.close_current, QKeySequence.StandardKey.Close, None, "Close the current file")
        self.quit = action("&Quit", w.close, [QKeySequence.StandardKey.Quit, "Ctrl+Q"], None, "Quit ztviewer")
        self.quit.setMenuRole(QAction.MenuRole.QuitRole)
        self.find = action("&Find Tensor…", w.focus_filter, QKeySequence.StandardKey.Find, None,
                           "Filter the tensor tree by name (substring or glob)")
        self.goto = action("&Go to Offset…", w.show_goto_dialog, "Ctrl+G", SP.SP_ArrowRight, "Jump to a byte offset")
        self.group = action("&Group by Name Prefix", w.set_grouped, "Ctrl+Shift+G", None,
                            "Group tensors by dotted name prefix (model.layers.0. …)", checkable=True)
        self.manifest_order = action("&Manifest Order", w.restore_manifest_order, None, None,
                                     "Show tensors in the order the file lists them")
        self.verify_all = action("&Verify All Digests", lambda: w.verify(False), "Ctrl+Shift+V",
                                 SP.SP_DialogApplyButton, "Check every recorded digest against the stored bytes")
        self.verify_selection = action("Verify &Selected", lambda: w.verify(True), "Ctrl+Alt+V", None,
                                       "Check the digests of the selected tensors and components")
        self.check_file = action("C&heck File", w.check_file, "Ctrl+Shift+K", SP.SP_FileDialogInfoView,
                                 "Check the structure, decode every tensor and verify every digest "
                                 "(like ztviewer check); problems go to the Problems panel")
        self.repair = action("Re&pair Interrupted Save…", w.repair_current, None, None,
                             "Roll a zTensor v2 file back to the generation before a save a crash interrupted "
                             "(like ztviewer repair); opening it only reported it")
        self.cancel_verify = action("&Cancel Verification", w.cancel_verify, None, SP.SP_DialogCancelButton,
                                    "Stop the running verification or check")
        self.generations = action("&Generations…", w.opener.show_generations, None, None,
                                  "The append generations of a zTensor v2 file; open an earlier one read-only")
        # the menu shows the first binding: a readable one, not the platform's "Ctrl+Shift+Backtab"
        self.next_tab = action("Next File", lambda: w.cycle_tab(1), ["Ctrl+PgDown", QKeySequence.StandardKey.NextChild])
        self.previous_tab = action("Previous File", lambda: w.cycle_tab(-1),
                                   ["Ctrl+PgUp", QKeySequence.StandardKey.PreviousChild])
        self.copy_code = action("Copy Tensor as &Code", self._copy_code, "Ctrl+Alt+C", None,
                                "Copy Python that loads the current tensor (its format's library, else "
                                "ztviewer.codec) for pasting into a notebook")
        self.find_bytes = action("Find &Bytes…", lambda: self._find_bar("focus"), "Ctrl+Shift+F", None,
                                 "Find hex bytes, text or a typed value in the hex view")
        self.find_next_bytes = action("Find Next Bytes", lambda: self._find_bar("find_next"), "F3", None,
                                      "Next match after the hex cursor")
        self.find_previous_bytes = action("Find Previous Bytes", lambda: self._find_bar("find_previous"),
                                          "Shift+F3", None, "Previous match before the hex cursor")
        self.quick_guide = action("&Quick Guide", w.show_quick_guide, "F1", None,
                                  "What to click: open, tree, bytes, inspect, problems, check, verify, edit, save")
        self.shortcuts_help = action("&Keyboard Shortcuts", w.show_shortcuts, "Ctrl+F1", None,
                                     "Every keyboard shortcut of the window and the open views")
        self.demo = action("Open &Demo Files", self._open_demo_files, None, None,
                           "Open the sample files that come with ztviewer (zTensor, safetensors, a tensor train)")
        self.about = action("&About ztviewer", w.show_about)
        self.about.setMenuRole(QAction.MenuRole.AboutRole)
        self.file_actions = [self.reload, self.close, self.find, self.goto, self.group, self.manifest_order,
                             self.verify_all, self.verify_selection, self.check_file, self.next_tab, self.previous_tab,
                             self.copy_code, self.find_bytes, self.find_next_bytes, self.find_previous_bytes]

    def build_menus(self) -> WindowMenus:
        """The tool bar and the menu bar's menus, once."""
        w = self.window
        toolbar = self._build_toolbar()
        bar = w.menuBar()
        file_menu = bar.addMenu("&File")
        file_menu.addAction(self.open)
        recent_menu = file_menu.addMenu("Open &Recent")
        file_menu.addAction(self.compare)
        file_menu.addSeparator()
        file_menu.addAction(self.reload)
        file_menu.addAction(self.check_file)
        file_menu.addAction(self.repair)
        file_menu.addAction(self.close)
        file_menu.addSeparator()
        file_menu.addAction(self.quit)
        edit_menu = bar.addMenu("&Edit")
        edit_menu.addAction(self.find)
        edit_menu.addAction(self.goto)
        edit_menu.addAction(self.find_bytes)
        edit_menu.addAction(self.find_next_bytes)
        edit_menu.addAction(self.find_previous_bytes)
        edit_menu.addSeparator()
        self.copy_code_menu = CopyCodeMenu(self._code_target, lambda text: w.statusBar().showMessage(text, 8000),
                                           w.window())
        edit_menu.addAction(self.copy_code)
        edit_menu.addMenu(self.copy_code_menu)
        view_menu = bar.addMenu("&View")
        view_menu.addAction(self.group)
        view_menu.addAction(self.manifest_order)
        view_menu.addAction(self.generations)
        view_menu.addSeparator()
        for dock in w.docks():
            view_menu.addAction(dock.toggleViewAction())
        view_menu.addAction(toolbar.toggleViewAction())
        view_menu.addSeparator()
        view_menu.addAction(self.next_tab)
        view_menu.addAction(self.previous_tab)
        tools_menu = bar.addMenu("&Tools")
        tools_menu.addAction(self.check_file)
        tools_menu.addAction(self.verify_all)
        tools_menu.addAction(self.verify_selection)
        tools_menu.addAction(self.cancel_verify)
        help_menu = bar.addMenu("&Help")
        help_menu.addAction(self.quick_guide)
        help_menu.addAction(self.shortcuts_help)
        help_menu.addAction(self.demo)
        help_menu.addSeparator()
        help_menu.addAction(self.about)
        self.menus = WindowMenus(file_menu, recent_menu, edit_menu, view_menu, tools_menu, help_menu, toolbar)
        return self.menus

    @property
    def recent_menu(self) -> QMenu:
        return self.menus.recent

    def _code_target(self) -> tuple[TensorFile, Tensor] | None:
        view = self.window.current_view()
        tensor = view.current_tensor() if view is not None else None
        return None if view is None or tensor is None else (view.tensor_file, tensor)

    def _find_bar(self, what: str) -> None:
        view = self.window.current_view()
        if view is not None:
            view.inspect_tabs.setCurrentWidget(view.decoded_bytes)   # the hex view in front
            getattr(view.decoded_bytes.find_bar, what)()

    def _open_demo_files(self) -> None:
        from ..paths import demo_files

        files = demo_files()
        if files:
            self.window.opener.open_paths(files)
        else:
            self.window.statusBar().showMessage("The demo files are missing from this installation", 8000)

    def _copy_code(self) -> None:
        self.copy_code_menu.copy_first()

    def _build_toolbar(self) -> QToolBar:
        toolbar = QToolBar("Toolbar", self.window.window())
        toolbar.setObjectName("mainToolBar")
        toolbar.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        toolbar.setMovable(False)
        shown = (self.open, self.reload, None, self.check_file, self.verify_all, self.cancel_verify, None, self.goto)
        for act in shown:
            if act is None:
                toolbar.addSeparator()
            else:
                toolbar.addAction(act)
        self.window.addToolBar(toolbar)
        return toolbar

    def update_enabled(self, has_file: bool, verifying: bool, has_generations: bool = False,
                       repairable: bool = False) -> None:
        for act in self.file_actions:
            act.setEnabled(has_file)
        self.generations.setEnabled(has_generations)
        self.repair.setEnabled(repairable and not verifying)
        self.verify_all.setEnabled(has_file and not verifying)
        self.verify_selection.setEnabled(has_file and not verifying)
        self.check_file.setEnabled(has_file and not verifying)
        self.cancel_verify.setEnabled(verifying)
