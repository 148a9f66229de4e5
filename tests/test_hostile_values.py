"""Issue 16: hostile values in well-formed containers (built in ``hostile_values``) give clean problems in
every command, never a traceback, and every human-readable line is printable whatever the file holds."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.hostile_values import (
    BIG,
    CASES,
    ESCAPE_NAME,
    cbor_map,
    enc,
    suffix,
    tt_wide_middle,
    v01_entry,
    v01_file,
    v10_dense,
    v10_file,
)
from ztviewer.cli import main
from ztviewer.codec import registry, tt
from ztviewer.codec.check import check_file
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.dense import to_dense
from ztviewer.codec.errors import CodecError, DecodeLimitExceeded
from ztviewer.codec.formats import zt  # noqa: F401  (registers the handlers)
from ztviewer.codec.formats.zt_footer import RULE_SHARING
from ztviewer.codec.huge_int import HugeInt
from ztviewer.codec.source import InMemorySource
from ztviewer.codec.text import int_text, json_safe, printable, value_text


def write(tmp_path: Path, name: str, data: bytes | None = None) -> Path:
    path = tmp_path / (name + suffix(name))
    path.write_bytes(CASES[name]() if data is None else data)
    return path


def open_case(name: str):
    return registry.read_source(InMemorySource(CASES[name](), path=name + suffix(name)))


def assert_printable(text: str) -> None:
    """No control character but newline, no lone surrogate, nothing a terminal would act on."""
    bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF]
    assert not bad, f"unescaped characters {bad!r} in {text[:300]!r}"


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err and "internal error" not in out + err, out + err
    assert code in (0, 1, 2), (code, out, err)
    return code, out, err


# ------------------------------------------------------------------------------------ every case, every command

@pytest.mark.timeout(60)
@pytest.mark.parametrize("name", [n for n in CASES if n != "blz_tt_wide_middle"])
def test_every_command_is_clean(name, tmp_path, capsys):
    path = write(tmp_path, name)
    _, out, err = run(capsys, "info", str(path))
    assert_printable(out + err)
    _, out, err = run(capsys, "info", "--json", "--hash", str(path))
    assert_printable(err)
    doc = json.loads(out)
    out.encode("utf-8")  # no lone surrogate left raw
    assert not any(0x7F <= ord(c) <= 0x9F for c in out)
    _, out, err = run(capsys, "check", str(path))
    assert_printable(out + err)
    run(capsys, "convert", str(path), str(tmp_path / "out.zt"))
    for tensor in doc["tensors"][:1]:
        if "\0" not in tensor["name"]:
            _, out, err = run(capsys, "export", str(path), tensor["name"], "-o", str(tmp_path / "x.npy"))
            assert_printable(out + err)


# ------------------------------------------------------------------------------------ 1. integers past 4,300 digits

@pytest.mark.parametrize("name, rule, words", [
    ("zt10_bignum_offset", "component offset is a u64", "'offset' is <16,610-bit integer>"),
    ("zt10_bignum_length", "component length is a u64", "'length' is <16,610-bit integer>"),
    ("zt10_bignum_negative_length", "component length is a u64", "'length' is <-16,610-bit integer>"),
    ("zt10_bignum_shape", "", "invalid dimension integer <16,610-bit integer>"),
    ("zt10_bignum_uncompressed", "uncompressed_length is a u64", "<16,610-bit integer>"),
    ("zt10_bignum_tt_ranks", "tensor_train ranks", "[1, <16,610-bit integer>, 1]"),
    ("zt10_bignum_tensor_key", "v1: names are text strings", "<16,610-bit integer>"),
    ("zt01_bignum_offset", "v0.1: offset is a u64", "<16,610-bit integer>"),
    ("zt01_bignum_size", "v0.1: size is a u64", "<16,610-bit integer>"),
    ("zt01_bignum_shape", "", "<-16,610-bit integer>"),
    ("zt01_bignum_name", "v0.1: name is a text string", "<16,610-bit integer>"),
    ("st_long_number_offsets", "", "<about 16,610-bit integer>"),
    ("st_long_number_shape", "", "<about 16,610-bit integer>"),
])
def test_huge_integers_in_structural_fields_are_errors_with_the_rule(name, rule, words):
    tf = open_case(name)
    found = [p for p in tf.all_problems() if p.is_error and words in p.message]
    assert found, [str(p) for p in tf.all_problems()]
    assert not rule or found[0].rule == rule


def test_huge_version_is_fatal_with_the_rule():
    tf = open_case("zt10_bignum_version")
    (problem,) = tf.problems
    assert not tf.readable and "version <16,610-bit integer> is not of the form" in problem.message


def test_huge_attribute_is_kept_exactly_and_shown_by_size(tmp_path, capsys):
    tf = open_case("zt10_bignum_attribute")
    assert tf.attributes["big"] == HugeInt(value=BIG) and not tf.has_errors
    path = write(tmp_path, "zt10_bignum_attribute")
    _, out, _ = run(capsys, "info", "--json", str(path))
    assert int(json.loads(out)["attributes"]["big"]["integer_hex"], 16) == BIG
    _, out, _ = run(capsys, "info", str(path))
    assert "big: {\"integer_hex\"" in out
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.zt"), "--to", "zt-v1.0")
    assert code == 1 and "attribute 'big'" in err and "<16,610-bit integer>" in err


def test_huge_map_key_and_custom_v01_key(tmp_path, capsys):
    tf = open_case("zt10_bignum_map_key")
    (key,) = tf.attributes
    assert key == HugeInt(value=BIG)
    _, out, _ = run(capsys, "info", "--json", str(write(tmp_path, "zt10_bignum_map_key")))
    assert json.loads(out)["attributes"] == {"<16,610-bit integer>": "value"}
    tensor = open_case("zt01_bignum_custom_key").tensors[0]
    assert tensor.attributes == {"extra": HugeInt(value=BIG), HugeInt(value=BIG): 1}


def test_long_json_metadata_number_is_a_problem_not_a_failure():
    tf = open_case("st_long_number_metadata")
    assert tf.readable and [t.name for t in tf.tensors] == ["t"]
    assert any("'k' is integer" in p.message for p in tf.problems)
    assert tf.attributes["k"] == HugeInt(digits="9" * 5000)


def test_int_text_and_value_text():
    assert int_text(10 ** 300) == "1" + "0" * 300
    assert int_text(1 << 1000) == "<1,001-bit integer>" and int_text(-(1 << 2000)) == "<-2,001-bit integer>"
    assert value_text([BIG, {"k\x1b": b"\x01\x02"}]) == "[<16,610-bit integer>, {'k\\x1b': <2 bytes> 01 02}]"
    assert value_text(list(range(10_000)), 40) == "[0, 1, 2, 3, 4, 5, 6, 7, …]"
    assert value_text("x" * 1000, 20).endswith("…") and len(value_text("x" * 1000, 20)) == 20
    assert f"{HugeInt(value=BIG):,}" == "<16,610-bit integer>"


# ------------------------------------------------------------------------------------ 2. CBOR value sharing

@pytest.mark.parametrize("name", ["zt10_shared_self_attribute", "zt10_shared_laughs_attribute", "zt10_shared_root",
                                  "zt01_shared_laughs_entry", "zt01_shared_self_shape"])
def test_value_sharing_is_refused_with_the_rule(name):
    tf = open_case(name)
    (problem,) = tf.problems
    assert not tf.readable and problem.rule == RULE_SHARING and "tag 28 / 29" in problem.message


_PEAK = """
import sys
from ztviewer.cli import main
code = main(sys.argv[1:])
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("RESULT", code, hwm)
"""


def peak_kib(*argv: str) -> tuple[int, int]:
    proc = subprocess.run([sys.executable, "-c", _PEAK, *argv], capture_output=True, text=True, timeout=120,
                          check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT"))
    _, code, hwm = line.split()
    return int(code), int(hwm)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc for the peak memory")
def test_billion_laughs_costs_nothing(tmp_path):
    code, hwm = peak_kib("info", "--json", str(write(tmp_path, "zt10_shared_laughs_attribute")))
    assert code == 1 and hwm < 256 * 1024


# ------------------------------------------------------------------------------------ 3. deep legal nesting

def test_deep_metadata_is_dropped_with_a_problem_and_the_tensors_stay():
    tf = open_case("st_metadata_deep_arrays")
    assert [t.name for t in tf.tensors] == ["t"] and not tf.tensors[0].has_errors
    assert any("deeper than 64 levels" in p.message for p in tf.problems)
    assert tf.attributes["k"].startswith("<dropped")


def test_json_nesting_past_the_parser_limit_is_a_clean_fatal_problem():
    tf = open_case("st_deep_2000")
    (problem,) = tf.problems
    assert not tf.readable and "not valid JSON" in problem.message


def test_cbor_nesting_within_the_limit_still_reads():
    tf = open_case("zt10_cbor_nested_60")
    assert tf.readable and not tf.has_errors


# ------------------------------------------------------------------------------------ 4. names and escapes

def test_terminal_escapes_are_escaped_in_text_and_round_trip_in_json(tmp_path, capsys):
    path = write(tmp_path, "zt10_name_escapes")
    _, out, _ = run(capsys, "info", str(path))
    assert "\\x1b]0;pwned\\x07\\x1b[2Jname\\x9b31m" in out and "k\\x1b[2J" in out
    _, out, _ = run(capsys, "info", "--json", str(path))
    doc = json.loads(out)
    assert doc["tensors"][0]["name"] == ESCAPE_NAME and doc["attributes"] == {"k\x1b[2J": "v\x1b[31m"}
    assert "\x1b" not in out and "\x9b" not in out
    _, out, _ = run(capsys, "check", str(path))
    assert "\x1b" not in out


def test_cbor_text_that_is_not_utf8_is_a_clean_fatal_problem():
    tf = open_case("zt10_name_surrogate")
    (problem,) = tf.problems
    assert not tf.readable and "not valid CBOR" in problem.message


def test_lone_surrogates_survive_every_output(tmp_path, capsys):
    path = write(tmp_path, "st_name_surrogate")  # JSON allows the escape "\ud800"; Python decodes it as is
    _, out, _ = run(capsys, "info", str(path))
    assert "a\\ud800" in out
    _, out, _ = run(capsys, "info", "--json", str(path))
    assert json.loads(out)["tensors"][0]["name"] == "a\ud800"
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.safetensors"))
    assert code == 1 and "not valid Unicode" in err
    code, _, err = run(capsys, "convert", str(path), str(tmp_path / "o.zt"), "--to", "zt-v1.0")
    assert code == 1 and "not valid Unicode" in err


def test_c1_and_bidi_controls_in_safetensors_keys(tmp_path, capsys):
    _, out, _ = run(capsys, "info", str(write(tmp_path, "st_name_raw_c1")))
    assert "a\\x9b2J\\u202e" in out


def test_printable_and_json_safe():
    assert printable("plain ünïcode ✓") == "plain ünïcode ✓"
    assert printable("a\x00b\x1b\x7f\x9b\ud800\u202e\n") == "a\\x00b\\x1b\\x7f\\x9b\\ud800\\u202e\\n"
    text = json_safe(json.dumps({"k\x9b": "\ud800\u2028"}, ensure_ascii=False))
    assert json.loads(text) == {"k\x9b": "\ud800\u2028"} and text.encode("utf-8")


# ------------------------------------------------------------------------------------ 6. work bounded by output

def test_blz_with_more_axes_than_numpy_hashes_and_refuses_export(tmp_path, capsys):
    tf = open_case("blz_ndim_255")
    tensor = tf.tensors[0]
    assert content_sha256(tf, tensor) == hashlib.sha256(np.zeros(1, "<f8").tobytes()).hexdigest()
    with pytest.raises(CodecError, match="cannot be held by a numpy array"):
        to_dense(tf, tensor)
    code, _, err = run(capsys, "export", str(write(tmp_path, "blz_ndim_255")), tensor.name, "-o",
                       str(tmp_path / "x.npy"))
    assert code == 1 and "255-D" in err


def test_zero_dimensional_sparse_coo_exports_and_hashes(tmp_path, capsys):
    tf = open_case("zt10_coo_scalar")
    tensor = tf.tensors[0]
    assert to_dense(tf, tensor) == np.float32(2.5) and to_dense(tf, tensor).shape == ()
    assert content_sha256(tf, tensor) == hashlib.sha256(np.float32(2.5).tobytes()).hexdigest()
    path = write(tmp_path, "zt10_coo_scalar")
    assert run(capsys, "export", str(path), "s", "-o", str(tmp_path / "s.npy"))[0] == 0
    assert np.load(tmp_path / "s.npy") == np.float32(2.5)


@pytest.mark.parametrize("shape, bonds", [((1000, 1, 10), (1, 1, 300, 1)), ((10, 1, 1000), (1, 300, 1, 1)),
                                          ((3, 4, 5, 6), (1, 2, 7, 3, 1)), ((2, 0, 3), (1, 2, 2, 1))])
def test_tt_reconstruction_matches_einsum_whatever_the_cut(shape, bonds):
    rng = np.random.default_rng(16)
    cores = [rng.standard_normal((bonds[k], shape[k], bonds[k + 1])) for k in range(len(shape))]
    expected = cores[0]
    for core in cores[1:]:
        expected = np.tensordot(expected, core, axes=(-1, 0))
    assert np.allclose(tt.reconstruct(cores), expected.reshape(shape))


def test_tt_intermediate_larger_than_result_and_cores_is_refused():
    # ranks 1-R-1 with d = (N, N): every cut needs N × R, more than the cores (2·N·R) only when... it is not;
    # a chain where both sides blow up: (N, 1, N) with ranks (1, R, R, 1) needs N·R either way.
    cores = [np.zeros((1, 50, 400)), np.zeros((400, 1, 400)), np.zeros((400, 50, 1))]
    assert tt.reconstruct(cores).shape == (50, 1, 50)  # 20,000-element intermediates ≤ the 160,000-element core
    with pytest.raises(DecodeLimitExceeded):
        tt.reconstruct_flat([np.zeros((1, 2000, 1)), np.zeros((1, 1, 1))], limit=1000)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs /proc for the peak memory")
def test_tt_with_a_huge_middle_rank_exports_in_bounded_memory(tmp_path):
    path = tmp_path / "wide.blz"
    path.write_bytes(tt_wide_middle(200_000))  # a one-way sweep needs a 1000 × 200,000 f64 intermediate (1.6 GB)
    code, hwm = peak_kib("export", str(path), "wide", "-o", str(tmp_path / "w.npy"))
    assert code == 0 and hwm < 400 * 1024
    assert np.array_equal(np.load(tmp_path / "w.npy"), np.zeros((1000, 1, 10)))


# ------------------------------------------------------------------------------------ 8. zstd tensor-train cores

def test_zstd_tt_cores_are_decoded(tmp_path, capsys):
    tf = open_case("zt10_tt_zstd_core")
    assert np.array_equal(to_dense(tf, tf.tensors[0]), np.outer([1, 2], np.ones(3)))
    report = check_file(tf)
    assert report.ok and report.tensors_decoded == 1


def test_corrupt_zstd_tt_core_fails_check():
    data = bytearray(CASES["zt10_tt_zstd_core"]())
    data[64 + 6:64 + 10] = b"\xff\xff\xff\xff"  # inside the first core's frame
    tf = registry.read_source(InMemorySource(bytes(data), path="bad.zt"))
    report = check_file(tf)
    assert not report.ok and any(p.component == "core_0" and "zstd" in p.message for p in report.problems)


# ------------------------------------------------------------------------------------ 13. corpus verdicts

def test_blz_trailing_bytes_are_a_warning(tmp_path, capsys):
    code, out, _ = run(capsys, "check", str(write(tmp_path, "blz_trailing_bytes")))
    assert code == 0 and "warning:" in out and "4 trailing bytes" in out


def test_v01_aliased_blob_shows_both_tensors_with_a_warning(tmp_path, capsys):
    tf = open_case("zt01_aliased_blob")
    assert [t.name for t in tf.tensors] == ["a", "b"] and not tf.has_errors
    assert all("same blob as tensor" in t.problems[0].message for t in tf.tensors)
    path = write(tmp_path, "zt01_aliased_blob")
    code, out, _ = run(capsys, "check", str(path))
    assert code == 0 and out.count("warning:") == 2 and "same blob as tensor 'a'" in out
    assert run(capsys, "export", str(path), "b", "-o", str(tmp_path / "b.npy"))[0] == 0
    assert np.array_equal(np.load(tmp_path / "b.npy"), np.arange(4, dtype=np.float32))


def test_partial_overlap_is_still_an_error():
    from tests.hostile_values import enc, v01_entry, v01_file

    entries = [v01_entry(enc("a")), v01_entry(enc("b"), offset=enc(68), size=enc(12), shape=enc([3]))]
    tf = registry.read_source(InMemorySource(v01_file(entries), path="p.zt"))
    assert tf.has_errors and any("overlaps" in p.message for p in tf.all_problems())


# ------------------------------------------------------------------------------------ element counts past 4,300 digits

U64 = (1 << 64) - 1


@pytest.mark.parametrize("data, name", [
    (lambda: v10_file(cbor_map([(enc("t"), v10_dense(shape=enc([U64] * 300)))])), "x.zt"),
    (lambda: v01_file([v01_entry(enc("a"), shape=enc([U64] * 300))]), "y.zt"),
])
def test_shapes_whose_element_count_overflows_are_errors(data, name, tmp_path, capsys):
    tf = registry.read_source(InMemorySource(data(), path=name))
    (problem,) = [p for p in tf.all_problems() if p.rule == "the element count fits in 64 bits"]
    assert "<19,200-bit integer> elements" in problem.message
    path = tmp_path / name
    path.write_bytes(data())
    assert run(capsys, "check", str(path))[0] == 1


def test_properties_panel_copes_with_huge_counts_and_hostile_names():
    from tests.hostile_values import blz_file
    from ztviewer.session.properties import file_props, tensor_props

    def flat(props):
        for p in props:
            yield p.key, p.value
            yield from flat(p.children)

    tf = registry.read_source(InMemorySource(blz_file([U64] * 255, [1] * 256, b""), path="x.blz"))
    shown = dict(flat(tensor_props(tf.tensors[0], None, tf.size)))
    assert shown["element count"] == "<16,320-bit integer>" and shown["compression ratio"] == "> 10³⁰⁸×"
    assert dict(flat(file_props(open_case("zt10_bignum_attribute"), None)))["big"] == "<16,610-bit integer>"
    escapes = open_case("zt10_name_escapes")
    shown = dict(flat(tensor_props(escapes.tensors[0], None, escapes.size)))
    assert shown["name"] == printable(ESCAPE_NAME) and "\x1b" not in shown["name"]
    assert dict(flat(file_props(escapes, None)))["k\x1b[2J"] == "v\\x1b[31m"
