"""The A | B | Δ row of views the Compare tab shows a pair in: each view under its title."""
from __future__ import annotations

from collections.abc import Mapping

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QSplitter, QVBoxLayout, QWidget


def side_columns(views: Mapping[str, QWidget], delta_note: str, name: str) -> tuple[QSplitter, dict[str, QLabel]]:
    """A horizontal splitter with one column per side: the title ``<b>side</b>`` (``delta_note`` added for Δ,
    object name ``name + side``) over the view, which takes the height. Also returns the title labels."""
    split = QSplitter(Qt.Orientation.Horizontal)
    labels: dict[str, QLabel] = {}
    for side, view in views.items():
        box = QWidget()
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.setSpacing(0)
        label = QLabel(f"<b>{side}</b>" + (delta_note if side == "Δ" else ""))
        label.setObjectName(f"{name}{side}")
        labels[side] = label
        column.addWidget(label)
        column.addWidget(view, 1)
        split.addWidget(box)
    return split, labels
