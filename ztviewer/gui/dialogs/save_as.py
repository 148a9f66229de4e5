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
    QPushButton,
    QSpinBox,
    QVBoxLayout,
    QWidget,
)

from ztviewer.codec.writers.document import EditableDocument
from ztviewer.session.conversion import (
    FORMAT_CHOICES,
    SaveOptions,
    Verdict,
    plan_save,
    with_extension,
)

ENCODINGS = [("keep", "Keep as stored"), ("raw", "Raw (uncompressed)"), ("zstd", "zstd")]
DIGESTS = [("keep", "Keep recorded digests"), ("none", "None"), ("crc32c", "crc32c"), ("sha256", "sha256"),
           ("xxh3", "xxh3 (zTensor v2)")]
_ERROR = "color: #b3261e;"
_OK = "color: #1b6e2f;"


class SaveAsDialog(QDialog):
    """Choose where and how to save ``doc``; :attr:`verdict` holds the prepared document when OK is enabled."""

    def __init__(self, doc: EditableDocument, path: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setObjectName("saveAsDialog")
        self.setWindowTitle("Save As")
        self.doc = doc
        self.verdict = Verdict(None)
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
        self.compact_check = QCheckBox("Compact: rewrite as a fresh canonical file (its earlier generations go)")
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
        summary = QLabel(f"{count:,} tensor{'s' if count != 1 else ''}, {doc.target.label}"
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
        self.path_edit.textChanged.connect(self.recheck)
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
        compress = {"keep": None, "raw": "raw"}.get(encoding, ("zstd", self.level_spin.value()))
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
        if self.path_edit.text().strip():
            self.path_edit.setText(with_extension(self.path_edit.text().strip(), self.format_combo.currentData()))
        self.recheck()

    def _browse(self) -> None:
        path, _ = QFileDialog.getSaveFileName(self, "Save As", self.path_edit.text())
        if path:
            self.path_edit.setText(path)

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
            self.message.setText(f"Cannot save: {problem}")
        else:
            self.message.setStyleSheet(_OK)
            self.message.setText(" ".join(("Ready to save.",) + self.verdict.notes + self._generation_notes()))
        self.buttons.button(QDialogButtonBox.StandardButton.Save).setEnabled(not problem)

    def _generation_notes(self) -> tuple[str, ...]:
        earlier = len(self.doc.original.extra.get("_generations") or ()) if self.doc.original.format == "zt-v2" else 0
        plural = earlier != 1
        generations = f"{earlier} earlier generation{'s' if plural else ''}"
        if self._over_v2_original():
            if not self.compact:
                return ("Appends a generation if the edits change no data (else rewrites the file).",)
            if not earlier:
                return ("Rewrites the file.",)
            return (f"Rewrites the file; its {generations} {'are' if plural else 'is'} dropped.",)
        if earlier:
            return (f"The {generations} of the open file {'stay' if plural else 'stays'} in it; the new file has one.",)
        return ()

    def can_save(self) -> bool:
        return self.buttons.button(QDialogButtonBox.StandardButton.Save).isEnabled()
