"""What the Inspect view says about a tensor whose values ztviewer does not decode (a layout shown structurally
only: zt.quant_group/1, zt.mx/1, gguf.*/1, an unknown layout): why, and the parts it is made of."""
from __future__ import annotations

from html import escape

from ztviewer.codec.model import Tensor

from .formatting import human_bytes, plural

MAX_PARTS = 16


def structural_reason(tensor: Tensor) -> str:
    """Why the tensor is shown structurally: the reader's own reason when it gave one."""
    reason = tensor.extra_value("structural")
    if isinstance(reason, str) and reason:
        return reason.removesuffix("; shown structurally")
    layout = tensor.layout_spelling or tensor.layout
    return f"ztviewer does not decode the {layout!r} layout (its parts and metadata are checked and listed)"


def structural_note(tensor: Tensor) -> str:
    """Rich text for the Inspect view: ``name`` shown structurally: why, then one line per part."""
    lines = [f"<b>{escape(tensor.name)}</b> is shown structurally: {escape(structural_reason(tensor), quote=False)}."]
    parts = list(tensor.components.items())
    rows = []
    for role, c in parts[:MAX_PARTS]:
        logical = c.extra.get("type") if c.extra else None
        dtype = f"{c.dtype or '?'}" + (f" ({logical})" if logical else "")
        rows.append(f"<tr><td><b>{escape(role)}</b></td><td>{escape(dtype)}</td><td>{escape(c.encoding)}</td>"
                    f"<td align='right'>{human_bytes(c.length)}</td><td>at 0x{c.offset:X}</td></tr>")
    if len(parts) > MAX_PARTS:
        rows.append(f"<tr><td colspan='5'>… {len(parts) - MAX_PARTS:,} more parts</td></tr>")
    if rows:
        lines.append(f"Its {plural(len(parts), 'part')} (select one in the tree to see its "
                     f"bytes):<table cellspacing='6'>{''.join(rows)}</table>")
    return "<br>".join(lines)
