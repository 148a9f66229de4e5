"""Columns and custom data roles of the tensor tree (named constants shared by the model and its views)."""
from __future__ import annotations

from enum import IntEnum

from PySide6.QtCore import Qt

from ztviewer.session.tree_columns import COLUMN_COUNT, HEADERS, Column


class TreeRole(IntEnum):
    """Custom data roles of the tensor tree."""

    ITEM = Qt.ItemDataRole.UserRole + 1      # the codec object (TensorFile, TensorGroup, Tensor, Component)
    KIND = Qt.ItemDataRole.UserRole + 2      # NodeKind value
    SORT = Qt.ItemDataRole.UserRole + 3      # raw value of the column (ints for sizes and offsets)
    DIGEST_STATE = Qt.ItemDataRole.UserRole + 4   # DigestState value
    BYTE_RANGE = Qt.ItemDataRole.UserRole + 5     # (offset, length) of a component / tensor span, else None
    TENSOR = Qt.ItemDataRole.UserRole + 6         # the Tensor a tensor or component row belongs to


__all__ = ["COLUMN_COUNT", "HEADERS", "Column", "TreeRole"]
