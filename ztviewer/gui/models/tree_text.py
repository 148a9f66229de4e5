"""What each cell of the tensor tree shows, per node kind and column (display, tooltip, sort key, colour).

A view asks for every painted cell several times: each answer builds only the text of the column asked for, and
tests (problems, shared blobs) use flags the session keeps rather than the text they would show.
"""
from __future__ import annotations

import os
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor, QFont, QIcon
from PySide6.QtWidgets import QApplication, QStyle

from ztviewer.codec import Component, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.errors import Severity
from ztviewer.session.digest_states import PRIORITY
from ztviewer.session.formatting import exact_bytes, hex_offset, human_bytes, plural, shape_text
from ztviewer.session.selection import byte_range_of
from ztviewer.session.tree_columns import tensor_encoding
from ztviewer.session.tree_nodes import NodeKind, TensorGroup, kind_of
from ztviewer.session.tree_state import TreeItem, TreeState
from ztviewer.session.zt_v2_facts import file_kind_text, has_shared_part, shared_note, tensor_shared_note

from .. import theme
from .tree_roles import Column, TreeRole

R = Qt.ItemDataRole
DIGEST_TEXT = {DigestState.NONE: "—", DigestState.UNCHECKED: "unchecked", DigestState.OK: "✓ ok",
               DigestState.MISMATCH: "✗ mismatch", DigestState.INVALID: "invalid"}
DIGEST_TIP = {DigestState.NONE: "the file records no digest", DigestState.UNCHECKED: "not verified yet",
              DigestState.OK: "the stored bytes match the recorded digest",
              DigestState.MISMATCH: "the stored bytes do not match the recorded digest",
              DigestState.INVALID: "the recorded digest cannot be checked"}
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
#: The roles :func:`cell` can answer; a view asks for more (font, background, check state) for every cell.
CELL_ROLES = frozenset({R.DisplayRole, R.ToolTipRole, R.ForegroundRole, R.DecorationRole, R.TextAlignmentRole,
                        TreeRole.SORT, TreeRole.BYTE_RANGE, TreeRole.DIGEST_STATE})
#: appended to the offset of a part (and its tensor) whose blob other parts reference too (weight tying)
SHARED_MARK = " ⇄"
_DELETED = QColor(150, 150, 150)     # a tensor the next save drops, shown struck out
_ENCODING_TIPS = {"raw": "stored as is", "zstd": "one zstd stream",
                  "zt.zstd-seekable/1": "independent zstd frames indexed by a seek table (random access)"}


def file_title(tensor_file: TensorFile) -> str:
    return os.path.basename(tensor_file.path) or tensor_file.path


def cell(state: TreeState, node: int, column: Column, role: int) -> Any:
    """What the cell of row ``node`` in ``column`` shows for ``role`` (one of :data:`CELL_ROLES`)."""
    if role == R.TextAlignmentRole:
        return _RIGHT if column in (Column.STORED, Column.OFFSET) else None
    item = state.item(node)
    if role == TreeRole.BYTE_RANGE:
        return byte_range_of(item)
    if role == TreeRole.DIGEST_STATE:
        return _digest_state(state, node, item).value
    if column == Column.DIGEST:
        return _digest_cell(state, node, item, role)
    if isinstance(item, Tensor):
        return _tensor_cell(state, item, column, role)
    if isinstance(item, Component):
        return _component_cell(item, column, role)
    if isinstance(item, TensorGroup):
        return _group_cell(state, item, column, role)
    return _file_cell(state, item, column, role)


def edit_font(state: TreeState, node: int) -> QFont | None:
    """The name cell's font of a tensor an unsaved edit renames (italic) or deletes (struck out)."""
    tensor = state.tensor_of(node)
    if tensor is None or kind_of(node) is not NodeKind.TENSOR:
        return None
    pending, new = state.pending_name(tensor)
    if not pending:
        return None
    font = QFont()
    font.setItalic(new is not None)
    font.setStrikeOut(new is None)
    return font


def _digest_state(state: TreeState, node: int, item: TreeItem) -> DigestState:
    if isinstance(item, Component):
        tensor = state.tensor_of(node)
        return state.digest_state(tensor, item) if tensor is not None else DigestState.initial(item)
    if isinstance(item, Tensor):
        return state.digests.of_tensor(item)
    if isinstance(item, TensorGroup):
        return state.group_state(item)
    return state.digests.of_file()


def _digest_cell(state: TreeState, node: int, item: TreeItem, role: int) -> Any:
    digest = _digest_state(state, node, item)
    if role == R.DisplayRole:
        return DIGEST_TEXT[digest]
    if role == R.ToolTipRole:
        return _digest_tooltip(state, item, digest)
    if role == R.ForegroundRole:
        return _digest_color(digest)
    if role == TreeRole.SORT:
        return PRIORITY[digest]
    return None


def _digest_color(state: DigestState) -> QColor | None:
    if state is DigestState.OK:
        return theme.ok_color()
    if state is DigestState.MISMATCH:
        return theme.error_color()
    if state is DigestState.INVALID:
        return theme.warning_color()
    if state is DigestState.NONE:
        return theme.muted_color()
    return None


def _digest_tooltip(state: TreeState, item: TreeItem, digest: DigestState) -> str:
    if isinstance(item, Component):
        tip = DIGEST_TIP[digest]
        if item.digest and item.extra and item.extra.get("digest_over") == "decoded":   # zTensor v2
            tip = tip.replace("stored bytes", "decoded bytes") + "\n(the digest covers the decoded bytes)"
        return f"{item.digest or 'no digest'}\n{tip}"
    if isinstance(item, TensorFile):
        counts = state.digests.totals()
        return "\n".join(f"{DIGEST_TEXT[s]}: {plural(n, 'component')}" for s, n in counts.items()) or "no components"
    return DIGEST_TIP[digest]


def _file_cell(state: TreeState, tf: TensorFile, column: Column, role: int) -> Any:
    if role in (R.DisplayRole, TreeRole.SORT):
        if column == Column.NAME:
            return file_title(tf)
        if column == Column.SHAPE:
            return state.count_text()
        if column == Column.LAYOUT:
            return file_kind_text(tf)
        if column == Column.STORED:
            return human_bytes(tf.size) if role == R.DisplayRole else tf.size
        return ""
    if role == R.ToolTipRole:
        return tf.path if column == Column.NAME else (exact_bytes(tf.size) if column == Column.STORED else None)
    if role == R.DecorationRole and column == Column.NAME:
        return _problem_icon(state.problem_level(tf))
    return None


def _group_cell(state: TreeState, group: TensorGroup, column: Column, role: int) -> Any:
    """A group row totals the tensors shown under it: under a filter its matches (``3 of 12 tensors``)."""
    totals = state.group_totals
    if column == Column.STORED and role in (R.DisplayRole, TreeRole.SORT, R.ToolTipRole):
        if role == R.ToolTipRole:
            return totals.bytes_tip(group)
        nbytes = totals.stored_nbytes(group)
        return nbytes if role == TreeRole.SORT else human_bytes(nbytes)
    if role in (R.DisplayRole, TreeRole.SORT):
        if column == Column.NAME:
            return group.label or "(empty)"
        return totals.count_text(group) if column == Column.SHAPE else ""
    if role == R.ToolTipRole and column == Column.NAME:
        return group.prefix
    if role == R.DecorationRole and column == Column.NAME:
        return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_DirIcon)
    return None


def _tensor_cell(state: TreeState, tensor: Tensor, column: Column, role: int) -> Any:
    if column == Column.NAME and role in (R.DisplayRole, R.ToolTipRole, R.ForegroundRole):
        pending, new = state.pending_name(tensor)
        if pending and (new is None or role != R.ForegroundRole):   # a renamed tensor keeps its problem colour
            return _edited_name_cell(state, tensor, new, role)
    if role == R.DisplayRole:
        return _tensor_text(state, tensor, column)
    if role == TreeRole.SORT:
        return state.sort_key(tensor, column)
    if role == R.ToolTipRole:
        return _tensor_tip(state, tensor, column)
    if role in (R.ForegroundRole, R.DecorationRole) and column == Column.NAME:
        level = state.problem_level(tensor)
        if level is None or role == R.DecorationRole:
            return _problem_icon(level)
        return theme.error_color() if level is Severity.ERROR else theme.warning_color()
    return None


def _edited_name_cell(state: TreeState, tensor: Tensor, new: str | None, role: int) -> Any:
    """The name cell of a tensor an unsaved edit renames or deletes (it shows the full new name, even grouped)."""
    if role == R.DisplayRole:
        return state.shown_name(tensor)
    if role == R.ForegroundRole:
        return QBrush(_DELETED)
    return (f"deleted: {tensor.name} will not be saved (Ctrl+Z to undo)" if new is None
            else f"renamed from {tensor.name} (saved on Ctrl+S)")


def _tensor_text(state: TreeState, tensor: Tensor, column: Column) -> str | None:
    if column == Column.NAME:
        return state.shown_name(tensor)
    if column == Column.DTYPE:
        return tensor.dtype
    if column == Column.SHAPE:
        return shape_text(tensor.shape)
    if column == Column.LAYOUT:
        return tensor.layout
    if column == Column.STORED:
        return human_bytes(tensor.stored_nbytes)
    if column == Column.ENCODING:
        return tensor_encoding(tensor)
    span = tensor.byte_span()
    return (hex_offset(span[0]) if span else "") + (SHARED_MARK if has_shared_part(tensor) else "")


def _tensor_tip(state: TreeState, tensor: Tensor, column: Column) -> str | None:
    if column == Column.NAME:
        return "\n".join([tensor.name] + [str(p) for p in state.problems_of(tensor)])
    if column == Column.STORED:
        return exact_bytes(tensor.stored_nbytes)
    if column == Column.OFFSET:
        span = tensor.byte_span()
        if not span:
            return None
        note = tensor_shared_note(tensor)
        return f"{span[0]:,}" + (f"\n{note}" if note else "")
    if column == Column.ENCODING:
        return _encoding_tip(tensor_encoding(tensor))
    if column == Column.LAYOUT and tensor.layout_spelling and tensor.layout_spelling != tensor.layout:
        return f"written as {tensor.layout_spelling!r}"
    return None


def _component_cell(component: Component, column: Column, role: int) -> Any:
    if role == R.DisplayRole:
        return _component_text(component, column)
    if role == TreeRole.SORT:
        return {Column.NAME: component.role, Column.DTYPE: component.dtype or "", Column.STORED: component.length,
                Column.ENCODING: component.encoding, Column.OFFSET: component.offset}.get(column, "")
    if role == R.ToolTipRole:
        if column == Column.STORED:
            extra = (f"\ndecoded: {exact_bytes(component.uncompressed_length)}"
                     if component.uncompressed_length is not None else "")
            return exact_bytes(component.length) + extra
        if column == Column.OFFSET:
            note = shared_note(component)
            return f"{component.offset:,} .. {component.end:,}" + (f"\n{note}" if note else "")
        if column == Column.ENCODING:
            return _encoding_tip(component.encoding)
        if column == Column.DTYPE and component.extra.get("type"):
            return f"stored as {component.dtype}, read as the logical type {component.extra['type']}"
    return None


def _component_text(component: Component, column: Column) -> str:
    if column == Column.NAME:
        return component.role
    if column == Column.DTYPE:
        logical = component.extra.get("type")
        dtype = component.dtype or ""
        return f"{dtype} ({logical})" if logical else dtype
    if column == Column.SHAPE:
        shape = component.shape
        return shape_text(shape) if isinstance(shape, (list, tuple)) else ""
    if column == Column.STORED:
        return human_bytes(component.length)
    if column == Column.ENCODING:
        return component.encoding
    if column == Column.OFFSET:
        return hex_offset(component.offset) + (SHARED_MARK if component.shared_with else "")
    return ""


def _encoding_tip(encoding: str) -> str:
    tips = [f"{e}: {_ENCODING_TIPS[e]}" if e in _ENCODING_TIPS else e for e in encoding.split(", ")]
    return "\n".join(tips)


def _problem_icon(level: Severity | None) -> QIcon | None:
    if level is None:
        return None
    pixmap = (QStyle.StandardPixmap.SP_MessageBoxCritical if level is Severity.ERROR
              else QStyle.StandardPixmap.SP_MessageBoxWarning)
    return QApplication.style().standardIcon(pixmap)
