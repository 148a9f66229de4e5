"""Save As: target format, encoding, digest and densify, with the refusal shown live before anything is saved."""
from __future__ import annotations

import os

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialog,
    QDialogButtonBox,
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ztviewer.codec.convert import Compression
from ztviewer.codec.writers.document import EditableDocument
from ztviewer.session.conversion import (
    EXTENSION_DEFAULTS,
    EXTENSIONS,
    FORMAT_CHOICES,
    SaveOptions,
    Verdict,
    plan_save,
    with_extension,
)
from ztviewer.session.formatting import plural

ENCODINGS = [("keep", "Keep as stored"), ("raw", "Raw (uncompressed)"), ("zstd", "zstd")]
DIGESTS = [("keep", "Keep recorded digests"), ("none", "None"), ("crc32c", "crc32c"), ("sha256", "sha256"),
           ("xxh3", "xxh3 (zTensor v2)")]
_ERROR = "color: #b3261e;"


def format_for_name(name: str, current: str) -> str | None:
    """The format the extension of ``name`` asks for when ``current`` does not fit it (None: it fits, or the
    extension is not one ztviewer knows)."""
    ext = os.path.splitext(name.strip())[1].lower()
    if ext == EXTENSIONS[current]:
        return None
    return EXTENSION_DEFAULTS.get(ext)


def name_filters() -> list[tuple[str, str]]:
    """(file-dialog filter, format key) for every target format."""
    return [(f"{label} (*{EXTENSIONS[key]})", key) for key, label in FORMAT_CHOICES]
_OK = "color: #1b6e2f;"


class SaveAsDialog(QDialog):
    """Choose where and how to save ``doc``; :attr:`verdict` holds the prepared document when OK is enabled."""

    def __init__(self, doc: EditableDocument, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("saveAsDialog")
        self.setWindowTitle("Save As")
        self.doc = doc
        self.verdict = Verdict(None)
        self.format_note = ""         # says when the name's extension chose the format
        self.path_edit = QLineEdit(path)
        self.path_edit.setObjectName("saveAsPath")
        self.path_edit.setMinimumWidth(420)
        browse = QPushButton("Browse…")
        browse.clicked.connect(self._browse)
        path_row = QHBoxLayout()
        path_row.addWidget(self.path_edit, 1)
        path_row.addWidget(browse)
        self.format_combo = self._combo(FORMAT_CHOICES, doc.target.key)
        self.encoding_combo = self._combo(ENCODINGS, "keep")
        self.level_spin = QSpinBox()
        self.level_spin.setRange(1, 22)
        self.level_spin.setValue(3)
        self.level_spin.setPrefix("level ")
        encoding_row = QHBoxLayout()
        encoding_row.addWidget(self.encoding_combo, 1)
        encoding_row.addWidget(self.level_spin)
        self.digest_combo = self._combo(DIGESTS, "keep")
        self.densify_check = QCheckBox("Store sparse tensors and tensor trains dense")
        self.compact_check = QCheckBox("Compact: rewrite the whole file (its earlier generations go; parts keep the "
                                       "encoding chosen above)")
        self.compact_check.setObjectName("saveAsCompact")
        self.compact_check.setToolTip("Unchecked, edits that change no data are appended as a new generation "
                                      "(only the new manifest is written; the earlier ones stay readable)")
        self.compact_check.setChecked(True)
        form = QFormLayout()
        form.addRow("File:", path_row)
        form.addRow("Format:", self.format_combo)
        form.addRow("Encoding:", encoding_row)
        form.addRow("Digest:", self.digest_combo)
        form.addRow("", self.densify_check)
        form.addRow("", self.compact_check)
        self.message = QLabel()
        self.message.setObjectName("saveAsMessage")
        self.message.setWordWrap(True)
        self.message.setMinimumHeight(48)
        self.message.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        count = len(doc.tensors)
        summary = QLabel(f"{plural(count, 'tensor')}, {doc.target.label}"
                         + (" with unsaved edits" if doc.modified else ""))
        summary.setObjectName("saveAsSummary")
        summary.setStyleSheet("color: palette(placeholder-text);")
        layout = QVBoxLayout(self)
        layout.addWidget(summary)
        layout.addLayout(form)
        layout.addWidget(self.message)
        layout.addWidget(self.buttons)
        for combo in (self.encoding_combo, self.digest_combo):
            combo.currentIndexChanged.connect(self.recheck)
        self.format_combo.currentIndexChanged.connect(self._on_format)
        self.level_spin.valueChanged.connect(self.recheck)
        self.densify_check.toggled.connect(self.recheck)
        self.compact_check.toggled.connect(self.recheck)
        self.path_edit.textChanged.connect(self._follow_extension)
        self.recheck()

    def _combo(self, choices, current: str) -> QComboBox:
        combo = QComboBox()
        for key, label in choices:
            combo.addItem(label, key)
        combo.setCurrentIndex(max(0, combo.findData(current)))
        return combo

    # -- options ---------------------------------------------------------------------------------------------
    def options(self) -> SaveOptions:
        encoding = self.encoding_combo.currentData()
        compress: Compression = (None if encoding == "keep" else "raw" if encoding == "raw"
                                 else ("zstd", self.level_spin.value()))
        digest = self.digest_combo.currentData()
        return SaveOptions(self.format_combo.currentData(), compress, None if digest == "keep" else digest,
                           self.densify_check.isChecked())

    def set_options(self, target: str, encoding: str = "keep", level: int = 3, digest: str = "keep",
                    densify: bool = False) -> None:
        """Choose options as a user would (tests, scripting)."""
        self.format_combo.setCurrentIndex(self.format_combo.findData(target))
        self.encoding_combo.setCurrentIndex(self.encoding_combo.findData(encoding))
        self.level_spin.setValue(level)
        self.digest_combo.setCurrentIndex(self.digest_combo.findData(digest))
        self.densify_check.setChecked(densify)

    @property
    def compact(self) -> bool:
        """Write a fresh canonical file; only saving a zTensor v2 file over itself can append instead."""
        return not self.compact_check.isVisibleTo(self) or self.compact_check.isChecked()

    def _over_v2_original(self) -> bool:
        original = self.doc.original
        return (original.format == "zt-v2" and self.format_combo.currentData() == "zt-v2" and bool(original.path)
                and os.path.realpath(self.path) == os.path.realpath(original.path))

    @property
    def path(self) -> str:
        return os.path.abspath(os.path.expanduser(self.path_edit.text().strip()))

    def _on_format(self) -> None:
        self.format_note = ""
        text = self.path_edit.text().strip()
        if text and with_extension(text, self.format_combo.currentData()) != text:
            self.path_edit.blockSignals(True)
            self.path_edit.setText(with_extension(text, self.format_combo.currentData()))
            self.path_edit.blockSignals(False)
        self.recheck()

    def _follow_extension(self) -> None:
        """A typed name ending in another format's extension chooses that format (and says so)."""
        target = format_for_name(self.path_edit.text(), self.format_combo.currentData())
        if target is not None:
            self.format_combo.blockSignals(True)
            self.format_combo.setCurrentIndex(self.format_combo.findData(target))
            self.format_combo.blockSignals(False)
            ext = os.path.splitext(self.path_edit.text().strip())[1]
            self.format_note = f"Format {self.format_combo.currentText()}, chosen by the extension {ext}."
        self.recheck()

    def _browse(self) -> None:
        filters = name_filters()
        current = next(f for f, key in filters if key == self.format_combo.currentData())
        path, chosen = QFileDialog.getSaveFileName(self, "Save As", self.path_edit.text(),
                                                   ";;".join(f for f, _ in filters), current)
        if not path:
            return
        target = next((key for f, key in filters if f == chosen), self.format_combo.currentData())
        ext = os.path.splitext(path)[1].lower()
        if ext not in EXTENSION_DEFAULTS:     # no known extension: the filter decides and names it
            path += EXTENSIONS[target]
        if EXTENSIONS[target] == ext.lower() or ext not in EXTENSION_DEFAULTS:
            self.format_combo.setCurrentIndex(self.format_combo.findData(target))
        self.path_edit.setText(path)     # a known extension that contradicts the filter chooses (and says so)

    def accept(self) -> None:
        """Save, unless the name's extension does not fit the format and the user does not confirm it."""
        expected = EXTENSIONS[self.format_combo.currentData()]
        ext = os.path.splitext(self.path)[1]
        if ext.lower() != expected:
            answer = self.ask_mismatch(os.path.basename(self.path), self.format_combo.currentText(), expected)
            if answer == "cancel":
                return
            if answer == "fix":
                self.path_edit.setText(self.path + expected)
                if not self.can_save():
                    return
        super().accept()

    def ask_mismatch(self, name: str, format_label: str, expected: str) -> str:
        """Ask whether to save ``name`` as ``format_label`` although it does not end in ``expected``:
        "keep" the name, "fix" it (append the extension) or "cancel"."""
        box = QMessageBox(QMessageBox.Icon.Question, "Save As",
                          f"“{name}” does not end in {expected}, the extension of {format_label} files.",
                          QMessageBox.StandardButton.Cancel, self)
        box.setInformativeText(f"Other programs may not recognise it. Save it as {format_label} anyway?")
        fix = box.addButton(f"Save as “{name}{expected}”", QMessageBox.ButtonRole.AcceptRole)
        keep = box.addButton("Keep the Name", QMessageBox.ButtonRole.DestructiveRole)
        box.setDefaultButton(fix)
        box.exec()
        return "fix" if box.clickedButton() is fix else "keep" if box.clickedButton() is keep else "cancel"

    # -- live check ------------------------------------------------------------------------------------------
    def recheck(self) -> None:
        self.level_spin.setEnabled(self.encoding_combo.currentData() == "zstd")
        self.verdict = plan_save(self.doc, self.options())
        self.compact_check.setVisible(self._over_v2_original())
        problem = self.verdict.refusal
        if not problem and not self.path_edit.text().strip():
            problem = "Choose a file name."
        elif not problem and not os.path.isdir(os.path.dirname(self.path)):
            problem = f"The folder {os.path.dirname(self.path)} does not exist."
        if problem:
            self.message.setStyleSheet(_ERROR)
            self.message.setText(f"Cannot save: {problem}" + (f" ({self.format_note})" if self.format_note else ""))
        else:
            self.message.setStyleSheet(_OK)
            notes = ((self.format_note,) if self.format_note else ()) + self.verdict.notes + self._generation_notes()
            self.message.setText(" ".join(("Ready to save.",) + notes))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(not problem)

    def _generation_notes(self) -> tuple[str, ...]:
        earlier = len(self.doc.original.extra.get("_generations") or ()) if self.doc.original.format == "zt-v2" else 0
        several = earlier != 1
        generations = plural(earlier, "earlier generation")
        if self._over_v2_original():
            if not self.compact:
                return ("Appends a generation if the edits change no data (else rewrites the file).",)
            if not earlier:
                return ("Rewrites the file.",)
            return (f"Rewrites the file; its {generations} {'are' if several else 'is'} dropped.",)
        if earlier:
            stay = "stay" if several else "stays"
            return (f"The {generations} of the open file {stay} in it; the new file has one.",)
        return ()

    def can_save(self) -> bool:
        return self.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled()
