"""``ztviewer diff``: exit status 0 / 1 / 2, the table, --json, --only changed, --tolerance."""
from __future__ import annotations

import json

import numpy as np
import pytest
from safetensors.numpy import save_file

from tests._corpus import CORPUS, corpus_available
from ztviewer.cli import main

needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")


@pytest.fixture
def pair(tmp_path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 5)).astype(np.float32)
    keep = np.arange(4, dtype=np.int32)
    save_file({"w": w, "keep": keep}, str(tmp_path / "a.safetensors"), metadata={"step": "1"})
    w2 = w.copy()
    w2[2, 3] += 1e-3
    save_file({"w": w2, "keep": keep}, str(tmp_path / "b.safetensors"), metadata={"step": "1"})
    return tmp_path / "a.safetensors", tmp_path / "b.safetensors", w, w2


def test_identical_files_exit_0(pair, capsys):
    a, _, _, _ = pair
    assert main(["diff", str(a), str(a)]) == 0
    out = capsys.readouterr().out
    assert "2 identical bytes" in out and "same content" in out


def test_difference_exits_1_with_numbers(pair, capsys):
    a, b, w, w2 = pair
    assert main(["diff", str(a), str(b)]) == 1
    out = capsys.readouterr().out
    line = next(row for row in out.splitlines() if row.startswith("numerically different"))
    assert " w " in line and "[2,3]" in line and "1/40" in line
    assert main(["diff", str(a), str(b), "--json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["identical"] is False
    w_doc = next(t for t in doc["tensors"] if t["name"] == "w")
    assert w_doc["verdict"] == "numerically different"
    assert w_doc["stats"]["max_abs"] == pytest.approx(float(np.abs(w.astype(np.float64) - w2).max()), rel=1e-12)
    assert w_doc["stats"]["max_abs_index"] == [2, 3] and w_doc["stats"]["worst"][0]["index"] == [2, 3]


def test_only_changed_and_tolerance(pair, capsys):
    a, b, _, _ = pair
    assert main(["diff", str(a), str(b), "--json", "--only", "changed"]) == 1
    assert [t["name"] for t in json.loads(capsys.readouterr().out)["tensors"]] == ["w"]
    assert main(["diff", str(a), str(b), "--tolerance", "0,1e-2"]) == 0
    assert "equal within tolerance" in capsys.readouterr().out
    assert main(["diff", str(a), str(b), "--tolerance", "0,1e-5"]) == 1


def test_identical_json_is_strict_json(pair, capsys):
    a, _, _, _ = pair
    assert main(["diff", str(a), str(a), "--json"]) == 0
    text = capsys.readouterr().out
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    assert doc["identical"] is True and {t["verdict"] for t in doc["tensors"]} == {"identical bytes"}


def test_attribute_change_exits_1(pair, tmp_path, capsys):
    a, _, w, _ = pair
    save_file({"w": w, "keep": np.arange(4, dtype=np.int32)}, str(tmp_path / "c.safetensors"),
              metadata={"step": "2"})
    assert main(["diff", str(a), str(tmp_path / "c.safetensors")]) == 1
    assert '~ step: "1" → "2"' in capsys.readouterr().out


def test_errors_exit_2_and_an_unreadable_file_1(pair, tmp_path, capsys):
    a, _, _, _ = pair
    assert main(["diff", str(a), str(tmp_path / "missing.zt")]) == 2
    assert "no such file" in capsys.readouterr().err
    junk = tmp_path / "junk.zt"
    junk.write_bytes(b"not a tensor file")
    assert main(["diff", str(junk), str(a)]) == 1     # a problem in a file: as check says of it
    err = capsys.readouterr().err
    assert "cannot be read" in err and "Traceback" not in err
    assert main(["diff", str(a), str(a), "--tolerance", "x"]) == 2
    assert main(["diff", str(a), str(a), "--tolerance", "-1,0"]) == 2
    assert main(["diff", str(a)]) == 2


def test_control_characters_in_names_are_escaped(tmp_path, capsys):
    save_file({"evil\x1b[2Jname": np.zeros(2, np.float32)}, str(tmp_path / "a.safetensors"))
    save_file({"other": np.ones(3, np.float32)}, str(tmp_path / "b.safetensors"))
    assert main(["diff", str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")]) == 1
    out = capsys.readouterr().out
    assert "\x1b" not in out and "evil\\x1b[2Jname" in out


@needs_corpus
def test_safetensors_against_every_zt_generation(capsys):
    st = CORPUS / "safetensors" / "safetensors-0.8.0" / "dtypes_2d.safetensors"
    for zt in ("zt_v0.1/ztensor-0.1.4/dtypes_2d.zt", "zt_v1.0/ztensor-1.0.1/dtypes_2d.zt",
               "zt_v1.x/ztensor-1.2.3/dtypes_2d.zt"):
        assert main(["diff", str(st), str(CORPUS / zt)]) == 0, zt
        assert "13 identical bytes" in capsys.readouterr().out
    big = CORPUS / "zt_v0.1" / "ztensor-0.1.4-rust" / "zstd_crc32c.zt"
    assert main(["diff", str(big), str(big), "--only", "changed"]) == 0


@needs_corpus
def test_hostile_files_never_crash(capsys):
    """Every malformed file against itself and against a sound file: an answer, never an internal error."""
    from tests._corpus import hostile_entries

    sound = CORPUS / "zt_v1.0" / "ztensor-1.0.1" / "dtypes_2d.zt"
    for entry in hostile_entries():
        path = CORPUS / "hostile" / entry["file"]
        for args in ([path, path], [path, sound], [sound, path]):
            code = main(["diff", *map(str, args)])
            captured = capsys.readouterr()
            assert code in (0, 1, 2), (entry["file"], code)
            assert "internal error" not in captured.err and "Traceback" not in captured.err, entry["file"]


def test_table_layout_with_attribute_lines(capsys):
    """The table's exact text: columns no row uses are left out, each cell padded to its column, attribute lines
    under their row, trailing spaces stripped."""
    from ztviewer.analysis.diff import AttrChange, AttrKind, DiffStats, FileDiff, PairDiff, TensorSide, Verdict
    from ztviewer.cli_diff import print_diff

    def side(name):
        return TensorSide(name, 0, "float32", (2,), "dense", ("raw",), 8)

    pairs = [PairDiff(side("w"), side("w"), Verdict.IDENTICAL),
             PairDiff(side("ln"), side("ln"), Verdict.IDENTICAL,
                      attributes=[AttrChange("unit", AttrKind.CHANGED, "m", "cm")]),
             PairDiff(side("d"), side("d"), Verdict.DIFFERENT, stats=DiffStats(
                 count=2, compared=2, differing=1, max_abs=0.5, max_abs_index=(1,), mean_abs=0.25, rel_l2=0.125)),
             PairDiff(None, side("new"), Verdict.ONLY_B)]
    print_diff(FileDiff("a.zt", "b.zt", "zt", "zt", pairs, [AttrChange("step", AttrKind.ADDED, None, 3)]))
    print_diff(FileDiff("a.zt", "b.zt", "zt", "zt", pairs[:1]))   # no numbers, no notes: two columns
    assert capsys.readouterr().out == """A: a.zt (zt)
B: b.zt (zt)

verdict                tensor  max |Δ| [at]  mean |Δ|  rel L2  cosine  SNR dB  differing  max ULP  notes
identical bytes        w
identical bytes        ln                                                                          1 attribute change(s)
    attr ~ unit: "m" → "cm"
numerically different  d       0.5 [1]       0.25      0.125   —       —       1/2        —
only in B              new

file attributes:
  + step: 3

4 tensors: 2 identical bytes, 1 numerically different, 1 only in B; differences found
A: a.zt (zt)
B: b.zt (zt)

verdict          tensor
identical bytes  w

1 tensor: 1 identical bytes; same content
"""
