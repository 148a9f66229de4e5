"""The details of the selected pair: both sides as stored, the verdict, what changed, and every number."""
from __future__ import annotations

from html import escape

from ztviewer.analysis.diff import PairDiff, TensorSide
from ztviewer.codec.text import printable
from ztviewer.session.formatting import human_bytes, shape_text

from .pairs_model import STATUS_TEXT, number_text, verdict_color


def _side(side: TensorSide | None) -> str:
    if side is None:
        return "—"
    encodings = "+".join(side.encodings) or "raw"
    return (escape(printable(side.name)) + "<br>"
            + escape(f"{side.dtype} {shape_text(side.shape)}, {side.layout}, {encodings}, "
                     f"{human_bytes(side.stored_bytes)} stored"))


def details_html(pair: PairDiff | None) -> str:
    """An HTML table of the pair (empty without a pair)."""
    if pair is None:
        return ""
    colour = verdict_color(pair.verdict).name()
    rows = [("verdict", f"<span style='color:{colour}'><b>{escape(STATUS_TEXT[pair.verdict])}</b></span>"
                        + (f" — {escape(printable(pair.reason))}" if pair.reason else "")),
            ("A", _side(pair.a)), ("B", _side(pair.b))]
    if pair.renamed:
        rows.append(("paired", "by content hash (renamed)"))
    if pair.changes:
        rows.append(("storage", escape(printable("; ".join(pair.changes)))))
    if pair.attributes:
        rows.append(("attributes", f"{len(pair.attributes)} changed (Attributes tab)"))
    stats = pair.stats
    if stats is not None:
        where = f" @[{','.join(map(str, stats.max_abs_index))}]" if stats.max_abs_index else ""
        numbers = [("elements", number_text(stats.count)), ("compared (both finite)", number_text(stats.compared)),
                   ("differing", number_text(stats.differing)), ("max |Δ|", number_text(stats.max_abs) + where),
                   ("mean |Δ|", number_text(stats.mean_abs)), ("rel L2", number_text(stats.rel_l2)),
                   ("cosine", number_text(stats.cosine, 9)), ("SNR dB", number_text(stats.snr_db)),
                   ("max ULP", number_text(None if stats.max_ulp is None else float(stats.max_ulp))),
                   ("NaN mismatches", number_text(stats.nan_mismatch)),
                   ("Inf mismatches", number_text(stats.inf_mismatch)),
                   ("bit-identical values", "yes" if stats.bit_identical else "no")]
        if stats.within_tolerance is not None:
            numbers.append(("within tolerance", "yes" if stats.within_tolerance else "no"))
        rows.extend((label, escape(value or "—")) for label, value in numbers)
    body = "".join(f"<tr><td style='padding-right:8px'>{label}</td><td>{value}</td></tr>" for label, value in rows)
    return f"<table cellspacing='1'>{body}</table>"
