"""Small plain pairs compared a run at a time (:mod:`ztviewer.analysis.diff.plain_bytes`): the same results as
comparing each pair on its own, without a ``compare_pair`` for the pairs whose stored bytes are the same."""
from __future__ import annotations

import json
import struct

import numpy as np
import pytest
from safetensors.numpy import save_file

import ztviewer.analysis.diff.engine as engine
from ztviewer.analysis.diff import DiffOptions, Verdict, compare_files
from ztviewer.analysis.diff.plain_bytes import SMALL, PlainBytes
from ztviewer.codec.convert import convert
from ztviewer.codec.errors import Cancelled
from ztviewer.codec.multifile import open_path


def _tensors(n: int = 300) -> dict[str, np.ndarray]:
    tensors = {f"t.{i:04d}": np.array([i], dtype=np.float32) for i in range(n)}
    tensors["big"] = np.arange(SMALL // 4 + 1, dtype=np.float32)    # past SMALL: compared on its own
    tensors["empty"] = np.zeros(0, dtype=np.float32)
    tensors["wide"] = np.arange(12, dtype=np.int64).reshape(3, 4)
    return tensors


def _compare(a, b, monkeypatch, **options):
    """The comparison, checked against one where every pair goes through compare_pair; and the names of the pairs
    compare_pair saw."""
    seen: list[str] = []

    def counted(tf_a, a, *args, **kwargs):
        seen.append(a.name)
        return compare_pair(tf_a, a, *args, **kwargs)

    compare_pair = engine.compare_pair
    with monkeypatch.context() as patch:
        patch.setattr(engine, "compare_pair", counted)
        with open_path(a) as tf_a, open_path(b) as tf_b:
            fast = compare_files(tf_a, tf_b, DiffOptions(**options))
    with monkeypatch.context() as patch:
        patch.setattr(PlainBytes, "identical", lambda self, position: False)
        with open_path(a) as tf_a, open_path(b) as tf_b:
            slow = compare_files(tf_a, tf_b, DiffOptions(**options))
    assert fast == slow
    return fast, seen


def test_a_file_against_itself_reads_runs_not_pairs(tmp_path, monkeypatch):
    save_file(_tensors(), str(tmp_path / "a.safetensors"))
    result, seen = _compare(tmp_path / "a.safetensors", tmp_path / "a.safetensors", monkeypatch)
    assert {p.verdict for p in result.pairs} == {Verdict.IDENTICAL} and len(result.pairs) == 303
    assert seen == ["big"]


def test_changed_values_moved_spans_and_other_descriptions(tmp_path, monkeypatch):
    tensors = _tensors()
    save_file(tensors, str(tmp_path / "a.safetensors"))
    changed = dict(tensors)
    changed["t.0007"] = np.array([-7], dtype=np.float32)                    # in the middle of a run
    changed["t.0299"] = np.array([np.nan], dtype=np.float32)
    changed["t.0100"] = tensors["t.0100"].view(np.int32)                    # same bytes, another dtype
    changed["t.0150.extra"] = np.ones(5, dtype=np.float32)                  # moves B's later spans
    changed["wide"] = tensors["wide"] + 1
    save_file(changed, str(tmp_path / "b.safetensors"))
    result, seen = _compare(tmp_path / "a.safetensors", tmp_path / "b.safetensors", monkeypatch)
    verdicts = {p.name: p.verdict for p in result.pairs}
    assert verdicts["t.0007"] is verdicts["t.0299"] is verdicts["wide"] is Verdict.DIFFERENT
    assert verdicts["t.0100"] is Verdict.DIFFERENT      # the same bytes as another dtype: compared as numbers
    assert verdicts["t.0150.extra"] is Verdict.ONLY_B
    assert sum(v is Verdict.IDENTICAL for v in verdicts.values()) == 300 - 3 + 2   # + "empty", "big"
    assert sorted(seen) == ["big", "t.0007", "t.0100", "t.0299", "wide"]


def test_other_formats_and_checksums(tmp_path, monkeypatch):
    save_file(_tensors(40), str(tmp_path / "a.safetensors"))
    convert(tmp_path / "a.safetensors", tmp_path / "a.zt", to="zt")
    convert(tmp_path / "a.safetensors", tmp_path / "c.zt", to="zt", digest="crc32c")
    for other in ("a.zt", "c.zt"):
        result, _ = _compare(tmp_path / "a.safetensors", tmp_path / other, monkeypatch)
        assert result.unchanged
    result, seen = _compare(tmp_path / "a.zt", tmp_path / "a.zt", monkeypatch)
    assert {p.verdict for p in result.pairs} == {Verdict.IDENTICAL} and seen == ["big"]


def test_cancel_stops_before_a_run_is_read(tmp_path):
    save_file(_tensors(10), str(tmp_path / "a.safetensors"))
    with open_path(tmp_path / "a.safetensors") as a, pytest.raises(Cancelled):
        compare_files(a, a, cancelled=lambda: True)


def _one_element_file(path, values: np.ndarray, order: np.ndarray):
    """One-element float32 tensors ``t.i`` = ``values[i]``, the data of tensor ``i`` stored ``order[i]``-th."""
    header = json.dumps({f"t.{i:04d}": {"dtype": "F32", "shape": [1], "data_offsets": [4 * int(k), 4 * int(k) + 4]}
                         for i, k in enumerate(order)}).encode()
    header += b" " * (-len(header) % 8)
    data = np.empty(len(values), np.float32)
    data[order] = values
    path.write_bytes(struct.pack("<Q", len(header)) + header + data.tobytes())
    return path


def test_spans_stored_in_another_order(tmp_path, monkeypatch):
    """B stores the same tensors backwards, then shuffled, with one value changed: every span is its own run."""
    values = np.arange(200, dtype=np.float32)
    a = _one_element_file(tmp_path / "a.safetensors", values, np.arange(200))
    backwards = _one_element_file(tmp_path / "r.safetensors", values, np.arange(200)[::-1])
    result, seen = _compare(a, backwards, monkeypatch)
    assert result.unchanged and seen == []
    changed = values.copy()
    changed[77] = -1
    shuffled = _one_element_file(tmp_path / "s.safetensors", changed, np.random.default_rng(1).permutation(200))
    result, seen = _compare(a, shuffled, monkeypatch)
    assert seen == ["t.0077"] and [p.name for p in result.pairs if not p.unchanged] == ["t.0077"]
