"""``ztviewer diff`` at scale: the pairs kept compact (:class:`PairLog`), the table and ``--json`` written a batch at a
time, byte for byte what building the whole table / document wrote, and a memory guard at 20,000 tensors."""
from __future__ import annotations

import io
import json
import os
import struct
import tracemalloc
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest
from safetensors.numpy import save_file

from ztviewer import cli_diff
from ztviewer.analysis.diff import (
    AttrChange,
    AttrKind,
    DiffOptions,
    DiffStats,
    FileDiff,
    PairDiff,
    PairLog,
    TensorSide,
    Verdict,
    compare_files,
)
from ztviewer.cli import main
from ztviewer.codec.multifile import open_path
from ztviewer.codec.text import json_safe
from ztviewer.session.formatting import plural


def one_element_safetensors(path: Path, n: int, changed: tuple[int, ...] = ()) -> Path:
    """``n`` one-element float32 tensors (values 0 … n-1, ``changed`` ones + 0.5), the header written directly."""
    header = json.dumps({f"layer.{i}.w": {"dtype": "F32", "shape": [1], "data_offsets": [4 * i, 4 * i + 4]}
                         for i in range(n)}).encode()
    header += b" " * (-len(header) % 8)
    values = np.arange(n, dtype=np.float32)
    values[list(changed)] += 0.5
    path.write_bytes(struct.pack("<Q", len(header)) + header + values.tobytes())
    return path


def old_print_diff(result, only_changed: bool = False) -> None:
    """The table as ``print_diff`` wrote it before it streamed: every row built, then padded column by column."""
    print(f"A: {cli_diff._text(result.path_a)} ({result.kind_a})")
    print(f"B: {cli_diff._text(result.path_b)} ({result.kind_b})")
    if result.kind_a != result.kind_b:
        print(f"container: {result.kind_a} → {result.kind_b}")
    shown = [p for p in result.pairs if not (only_changed and p.unchanged)]
    rows = [cli_diff.HEADER] + [[cli_diff._text(cell) if cell else "" for cell in cli_diff._row(p)] for p in shown]
    columns = list(zip(*rows))
    used = [i for i, column in enumerate(columns) if i < 2 or any(column[1:])]
    line = "  ".join(f"{{{i}:<{max(map(len, columns[i]))}}}" for i in used).format
    if shown:
        lines = ["", line(*cli_diff.HEADER).rstrip()]
        for pair, r in zip(shown, rows[1:]):
            lines.append(line(*r).rstrip())
            if pair.attributes:
                lines.extend(cli_diff._attr_lines(pair.attributes, "    attr "))
        print("\n".join(lines))
    if result.attributes:
        print("\nfile attributes:")
        print("\n".join(cli_diff._attr_lines(result.attributes, "  ")))
    counts = {k: v for k, v in result.counts().items() if v}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items()) or "no tensors"
    verdict = "same content" if result.unchanged else "differences found"
    print(f"\n{plural(len(result.pairs), 'tensor')}: {summary}; {verdict}")   # "1 tensor", not "1 entries"


def _side(name: str, index: int = 0, stored: int = 8) -> TensorSide:
    return TensorSide(name, index, "float32", (2,), "dense", ("raw",), stored)


def _mixed_pairs() -> list[PairDiff]:
    """Every kind of pair a log keeps whole or in columns, names with control characters among them."""
    stats = DiffStats(count=2, compared=2, differing=1, max_abs=float("nan"), max_abs_index=(1,), mean_abs=0.25,
                      rel_l2=0.125, worst=[((1,), 1.0, float("inf"))])
    return [PairDiff(_side("w"), _side("w"), Verdict.IDENTICAL),
            PairDiff(_side("evil\x1b[2J\u202e"), _side("evil\x1b[2J\u202e"), Verdict.IDENTICAL),
            PairDiff(_side("moved", 3), _side("moved", 7), Verdict.IDENTICAL),
            PairDiff(_side("ln"), _side("ln"), Verdict.IDENTICAL, attributes=[AttrChange("u", AttrKind.CHANGED, 1, 2)]),
            PairDiff(_side("old"), _side("new"), Verdict.IDENTICAL, renamed=True),
            PairDiff(_side("s"), _side("s", stored=4), Verdict.SAME_CONTENT, changes=["dtype float32 → bfloat16"]),
            PairDiff(_side("d"), _side("d"), Verdict.DIFFERENT, stats=stats),
            PairDiff(_side("x"), _side("x"), Verdict.INCOMPARABLE, reason="A is damaged"),
            PairDiff(_side("gone"), None, Verdict.ONLY_A),
            PairDiff(None, _side("added"), Verdict.ONLY_B)]


def test_pair_log_reads_back_what_was_appended():
    pairs = _mixed_pairs()
    log = PairLog(pairs)
    assert len(log) == len(pairs) and list(log) == pairs and log == pairs and log[-1] == pairs[-1]
    assert log[2:5] == pairs[2:5]
    assert [log.plain_name(i) for i in range(3)] == ["w", "evil\x1b[2J\u202e", "moved"]
    assert all(log.plain_name(i) is None for i in range(3, len(pairs)))
    tally = {v.value: sum(p.verdict is v for p in pairs) for v in Verdict}
    assert log.counts() == {**tally, "renamed": 1}
    assert not log.unchanged and PairLog(pairs[:3]).unchanged


@pytest.mark.parametrize("only_changed", [False, True])
@pytest.mark.parametrize("count", [0, 1, 3, 10])
def test_streamed_output_is_byte_identical_to_the_whole_document(monkeypatch, count, only_changed):
    """Table and JSON as the whole-document code wrote them, across several write batches (of 3 here)."""
    monkeypatch.setattr(cli_diff, "_BATCH", 3)
    for attributes in ([], [AttrChange("step", AttrKind.ADDED, None, 3)]):
        result = FileDiff("a\x1b.zt", "b.safetensors", "zt", "safetensors", _mixed_pairs()[:count], attributes)
        streamed, whole = io.StringIO(), io.StringIO()
        with redirect_stdout(streamed):
            cli_diff.print_diff(result, only_changed)
        with redirect_stdout(whole):
            old_print_diff(result, only_changed)
        assert streamed.getvalue() == whole.getvalue()
        out = io.StringIO()
        cli_diff.write_diff_json(result, out, only_changed)
        document = cli_diff.diff_document(result, only_changed)
        assert out.getvalue() == json_safe(json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
        json.loads(out.getvalue())


def test_files_diffed_as_the_whole_document_did(tmp_path, monkeypatch):
    """Two real files (3 values changed, one tensor renamed, one added): the command's output is what the table
    and document built whole give for the same comparison."""
    monkeypatch.setattr(cli_diff, "_BATCH", 7)
    a = one_element_safetensors(tmp_path / "a.safetensors", 40)
    b = one_element_safetensors(tmp_path / "b.safetensors", 40, changed=(3, 17, 39))
    tensors = {f"t{i}": np.full(3, i, np.float32) for i in range(20)}
    save_file(tensors, str(tmp_path / "c.safetensors"), metadata={"step": "1"})
    renamed = {("moved" if name == "t5" else name): value for name, value in tensors.items()}
    save_file({**renamed, "extra": np.ones(2, np.int8)}, str(tmp_path / "d.safetensors"), metadata={"step": "2"})
    for left, right in ((a, b), (a, a), (tmp_path / "c.safetensors", tmp_path / "d.safetensors")):
        with open_path(left) as tf_a, open_path(right) as tf_b:
            result = compare_files(tf_a, tf_b, DiffOptions(worst=cli_diff.WORST_SHOWN))
        for args, expected in (([], old_print_diff), (["--only", "changed"], old_print_diff),
                               (["--json"], None), (["--json", "--only", "changed"], None)):
            only_changed = "--only" in args
            whole = io.StringIO()
            with redirect_stdout(whole):
                if expected is None:
                    document = cli_diff.diff_document(result, only_changed)
                    print(json_safe(json.dumps(document, indent=1, ensure_ascii=False)))
                else:
                    expected(result, only_changed)
            streamed = io.StringIO()
            with redirect_stdout(streamed):
                main(["diff", *args, str(left), str(right)])
            assert streamed.getvalue() == whole.getvalue(), (left.name, right.name, args)


def test_diff_of_20000_tensors_stays_small(tmp_path):
    """Pairs, verdicts and the written output of 20,000 one-element tensors against a copy with one value changed:
    measured 8 MiB (table) and 17 MiB (--json, a batch of entries) traced at the peak, where keeping every pair,
    tensor and row took 36 and 129 MiB."""
    small = one_element_safetensors(tmp_path / "small.safetensors", 3)
    a = one_element_safetensors(tmp_path / "a.safetensors", 20_000)
    b = one_element_safetensors(tmp_path / "b.safetensors", 20_000, changed=(7,))
    for args in ([], ["--json"]):
        with open(os.devnull, "w") as sink, redirect_stdout(sink):
            main(["diff", *args, str(small), str(small)])   # imports outside the measurement
            tracemalloc.start()
            try:
                assert main(["diff", *args, str(a), str(b)]) == 1
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                tracemalloc.stop()
        assert peak < 28 << 20, (args, peak >> 20)
