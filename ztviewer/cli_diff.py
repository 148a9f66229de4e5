"""``ztviewer diff A B``: compare two files or sets (any format) tensor by tensor.

Exit status: 0 when every tensor's content and every attribute is the same (storage may differ), 1 when
anything differs or an input cannot be read as a tensor file, 2 on bad arguments or a path that cannot be
opened (:data:`~ztviewer.cli_common.EXIT_STATUSES`).
"""
from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Iterator
from itertools import islice
from typing import IO, Any

from .cli_common import EXIT_OK, EXIT_PROBLEMS, ProblemsFound, UsageError, open_input, say_journal_warnings
from .cli_info import float_name, jsonable
from .codec.text import json_safe, printable
from .session.formatting import number_text, plural

WORST_SHOWN = 5


def add_diff_command(sub: argparse._SubParsersAction) -> None:
    diff = sub.add_parser("diff", help="compare two files or sets: what changed, by how much, and where "
                          "(exit 0 same content, 1 differences)")
    diff.add_argument("a", metavar="A", help="file, folder, index or manifest (the reference)")
    diff.add_argument("b", metavar="B", help="file, folder, index or manifest to compare with A")
    diff.add_argument("--json", action="store_true", help="machine-readable output")
    diff.add_argument("--tolerance", metavar="RTOL,ATOL",
                      help="call tensors equal when |a - b| <= atol + rtol * |b| everywhere (NaN matches NaN)")
    diff.add_argument("--only", choices=("changed",), help="list only tensors that differ")
    diff.add_argument("--no-renames", action="store_true", help="do not pair leftover tensors by content hash")
    diff.set_defaults(handler=cmd_diff)


def _text(value: object) -> str:
    """A value shown in the text table: control characters escaped so a file cannot drive the terminal."""
    return printable(str(value))


def _open(path: str):
    tf = open_input(path)
    say_journal_warnings(tf)
    if not tf.readable:
        first = next(iter(tf.problems), None)
        tf.close()
        raise ProblemsFound(f"{path} cannot be read" + (f": {first.describe()}" if first else ""))
    return tf


def cmd_diff(args: argparse.Namespace) -> int:
    from .analysis.diff import DiffOptions, Tolerance, compare_files
    from .cli_write import _Progress
    from .codec.gc_pause import building_many

    try:
        tolerance = Tolerance.parse(args.tolerance) if args.tolerance else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    opened = []
    try:
        for path in (args.a, args.b):
            opened.append(_open(path))
        progress = _Progress()
        try:
            result = compare_files(opened[0], opened[1], DiffOptions(tolerance=tolerance, worst=WORST_SHOWN,
                                                        find_renames=not args.no_renames), progress=progress)
        finally:
            progress.close()
    finally:
        for tf in opened:
            tf.close()
    with building_many():   # a row or an entry of small containers per pair: no collector passes over them
        if args.json:
            write_diff_json(result, sys.stdout, args.only == "changed")
        else:
            print_diff(result, args.only == "changed")
    return EXIT_OK if result.unchanged else EXIT_PROBLEMS


def _number(value: float | None) -> Any:
    return value if value is None or math.isfinite(value) else float_name(value)


def _side_json(side) -> dict[str, Any] | None:
    if side is None:
        return None
    return {"name": side.name, "dtype": side.dtype, "shape": list(side.shape), "layout": side.layout,
            "encodings": list(side.encodings), "stored_bytes": side.stored_bytes}


def _attrs_json(changes) -> list[dict[str, Any]]:
    return [{"key": c.key, "change": c.kind.value, "a": jsonable(c.a), "b": jsonable(c.b)} for c in changes]


def _tensor_json(pair) -> dict[str, Any]:
    stats = None
    if pair.stats is not None:
        stats = {k: _number(v) if isinstance(v, float) else v for k, v in pair.stats.as_dict().items()}
        stats["worst"] = jsonable(stats["worst"])
    return {"name": pair.name, "verdict": pair.verdict.value, "renamed": pair.renamed,
            "a": _side_json(pair.a), "b": _side_json(pair.b), "changes": pair.changes,
            "reason": pair.reason, "stats": stats, "attributes": _attrs_json(pair.attributes)}


def _shown(result, only_changed: bool) -> Iterator[Any]:
    return (pair for pair in result.pairs if not (only_changed and pair.unchanged))


def _head(result) -> dict[str, Any]:
    return {"a": {"path": result.path_a, "kind": result.kind_a}, "b": {"path": result.path_b, "kind": result.kind_b},
            "identical": result.unchanged, "counts": result.counts(), "attributes": _attrs_json(result.attributes)}


def diff_document(result, only_changed: bool = False) -> dict[str, Any]:
    """The JSON document printed by ``diff --json`` (:func:`write_diff_json` writes it entry by entry)."""
    return {**_head(result), "tensors": list(map(_tensor_json, _shown(result, only_changed)))}


_INDENTED = json.JSONEncoder(indent=1, ensure_ascii=False, check_circular=False)
_BATCH = 2000   # entries or lines per write
_OPEN, _CLOSE = '{\n "tensors": [\n', "\n ]\n}"


def write_diff_json(result, out: IO[str], only_changed: bool = False) -> None:
    """:func:`diff_document` as ``json.dumps(indent=1)`` writes it, one batch of tensor entries at a time (a
    million pairs never become one document or one string)."""
    head = _INDENTED.encode({**_head(result), "tensors": []})
    entries = _shown(result, only_changed)
    batch = list(islice(entries, _BATCH))
    if not batch:
        out.write(json_safe(head) + "\n")
        return
    out.write(json_safe(head[:-len("]\n}")]) + "\n")   # up to the tensors' "["
    separator = ""
    while batch:   # a batch as the document nests it: {"tensors": [entries]}, cut to the entries
        text = _INDENTED.encode({"tensors": list(map(_tensor_json, batch))})
        out.write(separator + json_safe(text[len(_OPEN):-len(_CLOSE)]))
        separator = ",\n"
        batch = list(islice(entries, _BATCH))
    out.write(_CLOSE + "\n")


def _g(value: float | None, digits: int = 3) -> str:
    return number_text(value, digits, missing="—", minus="-", grouped=False)


def _name(pair) -> str:
    if pair.renamed and pair.a is not None and pair.b is not None:
        return f"{pair.a.name} → {pair.b.name}"
    return pair.name


def _row(pair) -> list[str]:
    s = pair.stats
    notes = list(pair.changes) + ([pair.reason] if pair.reason else [])
    if pair.renamed:
        notes.insert(0, "renamed")
    if pair.attributes:
        notes.append(f"{len(pair.attributes)} attribute change(s)")
    if s is None or pair.verdict.value in ("identical bytes", "same content, different storage"):
        return [pair.verdict.value, _name(pair)] + [""] * 7 + ["; ".join(notes)]
    if s.nan_mismatch or s.inf_mismatch:
        notes.append(f"{s.nan_mismatch} NaN, {s.inf_mismatch} Inf mismatches")
    where = "" if s.max_abs_index is None else "[" + ",".join(map(str, s.max_abs_index)) + "]"
    return [pair.verdict.value, _name(pair), f"{_g(s.max_abs)} {where}".strip(), _g(s.mean_abs), _g(s.rel_l2),
            _g(s.cosine, 6), _g(s.snr_db, 4), f"{s.differing:,}/{s.count:,}",
            "—" if s.max_ulp is None else f"{s.max_ulp:,}", "; ".join(notes)]


HEADER = ["verdict", "tensor", "max |Δ| [at]", "mean |Δ|", "rel L2", "cosine", "SNR dB", "differing", "max ULP",
          "notes"]


def _attr_lines(changes, indent: str) -> list[str]:
    signs = {"added": "+", "removed": "-", "changed": "~"}
    lines = []
    for c in changes:
        if c.kind.value == "changed":
            before, after = (json.dumps(v, ensure_ascii=False, default=repr) for v in (c.a, c.b))
            shown = f"{before} → {after}"
        else:
            shown = json.dumps(c.a if c.b is None else c.b, ensure_ascii=False, default=repr)
        lines.append(f"{indent}{signs[c.kind.value]} {_text(c.key)}: {_text(shown)}")
    return lines


def print_diff(result, only_changed: bool = False) -> None:
    """The text table, written a batch of lines at a time: a first pass over the pairs measures the columns, a
    second writes the rows (the pairs are kept compact, their rows are not)."""
    print(f"A: {_text(result.path_a)} ({result.kind_a})")
    print(f"B: {_text(result.path_b)} ({result.kind_b})")
    if result.kind_a != result.kind_b:
        print(f"container: {result.kind_a} → {result.kind_b}")
    widths, filled, shown = list(map(len, HEADER)), [True, True] + [False] * (len(HEADER) - 2), 0
    for cells, _ in _table_rows(result, only_changed):
        shown += 1
        for i, cell in enumerate(cells):
            if cell:
                filled[i] = True
                widths[i] = max(widths[i], len(cell))
    used = [i for i in range(len(HEADER)) if filled[i]]
    line = "  ".join(f"{{{i}:<{widths[i]}}}" for i in used).format   # each used cell, padded
    if shown:
        sys.stdout.write("\n" + line(*HEADER).rstrip() + "\n")
        rows = _table_rows(result, only_changed)
        while batch := list(islice(rows, _BATCH)):
            lines = []
            for cells, attributes in batch:
                lines.append(line(*cells).rstrip())
                if attributes:
                    lines.extend(_attr_lines(attributes, "    attr "))
            sys.stdout.write("\n".join(lines) + "\n")
    if result.attributes:
        print("\nfile attributes:")
        print("\n".join(_attr_lines(result.attributes, "  ")))
    counts = {k: v for k, v in result.counts().items() if v}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items()) or "no tensors"
    verdict = "same content" if result.unchanged else "differences found"
    print(f"\n{plural(len(result.pairs), 'tensor')}: {summary}; {verdict}")


def _table_rows(result, only_changed: bool) -> Iterator[tuple[list[str], list[Any]]]:
    """The cells and attribute changes of each pair shown; a pair kept in the log's columns (identical bytes,
    nothing else to say) is not rebuilt for it."""
    from .analysis.diff import Verdict

    identical, blank = _text(Verdict.IDENTICAL.value), [""] * (len(HEADER) - 2)
    pairs = result.pairs
    for position in range(len(pairs)):
        name = pairs.plain_name(position)
        if name is not None:
            if not only_changed:
                yield [identical, _text(name), *blank], []
            continue
        pair = pairs[position]
        if not (only_changed and pair.unchanged):
            yield [_text(cell) if cell else "" for cell in _row(pair)], pair.attributes
