"""What each cell of the tensor tree shows, per node kind and column (display, tooltip, sort key, colour)."""
from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication, QStyle

from ztviewer.codec import Component, Tensor, TensorFile
from ztviewer.codec.digest_state import DigestState
from ztviewer.codec.tensor_table import stored_nbytes
from ztviewer.session.digest_states import PRIORITY, DigestStates
from ztviewer.session.formatting import exact_bytes, hex_offset, human_bytes, natural_key, shape_text
from ztviewer.session.selection import byte_range_of
from ztviewer.session.tree_nodes import TensorGroup
from ztviewer.session.zt_v2_facts import file_kind_text, shared_note, tensor_shared_note

from .. import theme
from .tree_roles import Column, TreeRole

if TYPE_CHECKING:
    from .tensor_tree import TensorTreeModel

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


def tensor_encoding(tensor: Tensor) -> str:
    return ", ".join(dict.fromkeys(tensor.component_encodings()))


def file_title(tensor_file: TensorFile) -> str:
    return os.path.basename(tensor_file.path) or tensor_file.path


def sort_key(tensor: Tensor, column: Column, digests: DigestStates) -> Any:
    if column == Column.NAME:
        return natural_key(tensor.name)
    if column == Column.DTYPE:
        return tensor.dtype or ""
    if column == Column.SHAPE:
        return (tensor.numel if all(d >= 0 for d in tensor.shape) else -1, tuple(tensor.shape))
    if column == Column.LAYOUT:
        return tensor.layout or ""
    if column == Column.STORED:
        return tensor.stored_nbytes
    if column == Column.ENCODING:
        return tensor_encoding(tensor)
    if column == Column.OFFSET:
        span = tensor.byte_span()
        return span[0] if span else -1
    return PRIORITY[digests.of_tensor(tensor)]


def cell(model: TensorTreeModel, index, column: Column, role: int) -> Any:
    if role == R.TextAlignmentRole:
        return _RIGHT if column in (Column.STORED, Column.OFFSET) else None
    item = model.item(index)
    if role == TreeRole.BYTE_RANGE:
        return byte_range_of(item)
    if role == TreeRole.DIGEST_STATE:
        return _digest_state(model, index, item).value
    if column == Column.DIGEST:
        state = _digest_state(model, index, item)
        if role == R.DisplayRole:
            return DIGEST_TEXT[state]
        if role == R.ToolTipRole:
            return _digest_tooltip(model, item, state)
        if role == R.ForegroundRole:
            return _digest_color(state)
        if role == TreeRole.SORT:
            return PRIORITY[state]
        return None
    if isinstance(item, TensorFile):
        return _file_cell(model, item, column, role)
    if isinstance(item, TensorGroup):
        return _group_cell(model, item, column, role)
    if isinstance(item, Tensor):
        return _tensor_cell(model, item, column, role)
    return _component_cell(item, column, role)


def _digest_state(model: TensorTreeModel, index, item) -> DigestState:
    if isinstance(item, Component):
        return model.digest_state(model.tensor_of(index), item)
    if isinstance(item, Tensor):
        return model.digests.of_tensor(item)
    if isinstance(item, TensorGroup):
        return model.group_state(item)
    return model.digests.of_file()


def _digest_color(state: DigestState):
    if state is DigestState.OK:
        return theme.ok_color()
    if state is DigestState.MISMATCH:
        return theme.error_color()
    if state is DigestState.INVALID:
        return theme.warning_color()
    if state is DigestState.NONE:
        return theme.muted_color()
    return None


def _digest_tooltip(model: TensorTreeModel, item, state: DigestState) -> str:
    if isinstance(item, Component):
        tip = DIGEST_TIP[state]
        if item.digest and item.extra and item.extra.get("digest_over") == "decoded":   # zTensor v2
            tip = tip.replace("stored bytes", "decoded bytes") + "\n(the digest covers the decoded bytes)"
        return f"{item.digest or 'no digest'}\n{tip}"
    if isinstance(item, TensorFile):
        counts = model.digests.totals()
        return "\n".join(f"{DIGEST_TEXT[s]}: {n:,} components" for s, n in counts.items()) or "no components"
    return DIGEST_TIP[state]


def _file_cell(model: TensorTreeModel, tf: TensorFile, column: Column, role: int) -> Any:
    if role in (R.DisplayRole, TreeRole.SORT):
        n = len(tf.tensors)
        return {Column.NAME: file_title(tf), Column.SHAPE: f"{n:,} tensor{'s' if n != 1 else ''}",
                Column.LAYOUT: file_kind_text(tf),
                Column.STORED: human_bytes(tf.size) if role == R.DisplayRole else tf.size}.get(column, "")
    if role == R.ToolTipRole:
        return tf.path if column == Column.NAME else (exact_bytes(tf.size) if column == Column.STORED else None)
    if role == R.DecorationRole and column == Column.NAME:
        problems = model.problems_of(tf)
        return _problem_icon(problems, any(p.is_error for p in problems))
    return None


def _group_cell(model: TensorTreeModel, group: TensorGroup, column: Column, role: int) -> Any:
    if column == Column.STORED and role in (R.DisplayRole, TreeRole.SORT, R.ToolTipRole):
        if group.stored_nbytes is None:
            group.stored_nbytes = stored_nbytes(model.tensors, group.members)
        return {R.DisplayRole: human_bytes(group.stored_nbytes), TreeRole.SORT: group.stored_nbytes,
                R.ToolTipRole: exact_bytes(group.stored_nbytes)}[role]
    if role in (R.DisplayRole, TreeRole.SORT):
        n = len(group.members)
        texts = {Column.NAME: group.label or "(empty)", Column.SHAPE: f"{n:,} tensor{'s' if n != 1 else ''}"}
        return texts.get(column, "")
    if role == R.ToolTipRole and column == Column.NAME:
        return group.prefix
    if role == R.DecorationRole and column == Column.NAME:
        return QApplication.style().standardIcon(QStyle.StandardPixmap.SP_DirIcon)
    return None


def _tensor_cell(model: TensorTreeModel, tensor: Tensor, column: Column, role: int) -> Any:
    span = tensor.byte_span()
    if role == R.DisplayRole:
        name = tensor.name.rsplit(".", 1)[-1] if model.grouped else tensor.name
        if column == Column.OFFSET:
            return (hex_offset(span[0]) if span else "") + (SHARED_MARK if tensor_shared_note(tensor) else "")
        return {Column.NAME: name, Column.DTYPE: tensor.dtype, Column.SHAPE: shape_text(tensor.shape),
                Column.LAYOUT: tensor.layout, Column.STORED: human_bytes(tensor.stored_nbytes),
                Column.ENCODING: tensor_encoding(tensor)}.get(column)
    if role == TreeRole.SORT:
        return sort_key(tensor, column, model.digests)
    if role == R.ToolTipRole:
        if column == Column.NAME:
            lines = [tensor.name] + [str(p) for p in model.problems_of(tensor)]
            return "\n".join(lines)
        if column == Column.STORED:
            return exact_bytes(tensor.stored_nbytes)
        if column == Column.OFFSET and span:
            note = tensor_shared_note(tensor)
            return f"{span[0]:,}" + (f"\n{note}" if note else "")
        if column == Column.ENCODING:
            return _encoding_tip(tensor_encoding(tensor))
        if column == Column.LAYOUT and tensor.layout_spelling and tensor.layout_spelling != tensor.layout:
            return f"written as {tensor.layout_spelling!r}"
        return None
    if role in (R.ForegroundRole, R.DecorationRole) and column == Column.NAME:
        problems = model.problems_of(tensor)
        if not problems:
            return None
        has_errors = any(p.is_error for p in problems)
        if role == R.DecorationRole:
            return _problem_icon(problems, has_errors)
        return theme.error_color() if has_errors else theme.warning_color()
    return None


def _component_cell(component: Component, column: Column, role: int) -> Any:
    if role == R.DisplayRole:
        shape = component.shape
        logical = component.extra.get("type")
        dtype = component.dtype or ""
        return {Column.NAME: component.role, Column.DTYPE: f"{dtype} ({logical})" if logical else dtype,
                Column.SHAPE: shape_text(shape) if isinstance(shape, (list, tuple)) else "",
                Column.STORED: human_bytes(component.length), Column.ENCODING: component.encoding,
                Column.OFFSET: hex_offset(component.offset) + (SHARED_MARK if shared_note(component) else "")
                }.get(column, "")
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


#: appended to the offset of a part (and its tensor) whose blob other parts reference too (weight tying)
SHARED_MARK = " ⇄"
_ENCODING_TIPS = {"raw": "stored as is", "zstd": "one zstd stream",
                  "zt.zstd-seekable/1": "independent zstd frames indexed by a seek table (random access)"}


def _encoding_tip(encoding: str) -> str:
    tips = [f"{e}: {_ENCODING_TIPS[e]}" if e in _ENCODING_TIPS else e for e in encoding.split(", ")]
    return "\n".join(tips)


def _problem_icon(problems: list, has_errors: bool):
    if not problems:
        return None
    pixmap = QStyle.StandardPixmap.SP_MessageBoxCritical if has_errors else QStyle.StandardPixmap.SP_MessageBoxWarning
    return QApplication.style().standardIcon(pixmap)
