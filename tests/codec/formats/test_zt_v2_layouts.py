"""Layout profiles beyond dense and sparse: zt.mx/1 decoded, zt.quant_group/1 and gguf.*/1 validated and
shown structurally, unknown layouts problem-free; all built by hand."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.codec.formats.v2_builders import assemble, part
from ztviewer.codec import open_file
from ztviewer.codec.check import check_file
from ztviewer.codec.convert import convert
from ztviewer.codec.dense import to_dense
from ztviewer.codec.errors import UnsupportedConversion, UnsupportedLayout
from ztviewer.codec.formats.zt_v2 import rules


def _mx_file(tmp_path: Path, data: bytes, data_fields: dict, shape: list[int], scales: bytes, **attributes) -> Path:
    attrs = {"block_size": 32, "scale_form": "e8m0_exponent", **attributes}
    manifest = {"objects": {"m": {"shape": shape, "layout": "zt.mx/1", "attributes": attrs, "parts": {
        "data": part(data_fields.pop("dtype", "u8"), 4096, len(data), **data_fields),
        "scales": part("u8", 8192, len(scales), type="f8_e8m0")}}}}
    path = tmp_path / "mx.zt"
    path.write_bytes(assemble(manifest, {4096: data, 8192: scales}))
    return path


def test_mxfp8_blocks_scale_their_elements(tmp_path):
    elements = np.array([0x38, 0x40, 0xB8, 0x00] * 32, dtype=np.uint8)  # 1.0, 2.0, -1.0, 0.0 in e4m3fn
    path = _mx_file(tmp_path, elements.tobytes(), {"type": "f8_e4m3fn"}, [2, 64], bytes([127, 128, 126, 0xFF]))
    with open_file(path) as tf:
        tensor = tf.tensor("m")
        assert not list(tf.all_problems()) and tensor.dtype == "float8_e4m3fn"
        values = to_dense(tf, tensor)
        base = np.tile(np.array([1.0, 2.0, -1.0, 0.0], np.float32), 32).reshape(4, 32)
        expected = (base * np.array([1.0, 2.0, 0.5, np.nan], np.float32)[:, None]).reshape(2, 64)
        np.testing.assert_array_equal(values, expected)
        assert check_file(tf).ok


def test_mxfp4_and_mxint8(tmp_path):
    packed = bytes([0x32, 0x0A] * 16)  # codes 2, 3, 10, 0 → 1.0, 1.5, -1.0, 0.0
    path = _mx_file(tmp_path, packed, {"type": "f4_e2m1"}, [64], bytes([128, 127]))
    with open_file(path) as tf:
        values = to_dense(tf, tf.tensor("m"))
        np.testing.assert_array_equal(values[:4], [2.0, 3.0, -2.0, 0.0])
        np.testing.assert_array_equal(values[32:36], [1.0, 1.5, -1.0, 0.0])
    ints = np.array([64, -32, 127, -128] * 8, dtype=np.int8)
    path = _mx_file(tmp_path, ints.tobytes(), {"dtype": "i8"}, [32], bytes([129]))
    with open_file(path) as tf:
        np.testing.assert_array_equal(to_dense(tf, tf.tensor("m"))[:4], [4.0, -2.0, 127 / 16, -8.0])


@pytest.mark.parametrize("change, words", [
    ({"scales": bytes(3)}, "3 bytes"),
    ({"scale_form": "factors"}, "scale_form"),
    ({"block_size": 7}, "block_size"),
    ({"axis": 2}, "axis"),
])
def test_mx_metadata_rules(tmp_path, change, words):
    scales = change.pop("scales", bytes(2))
    path = _mx_file(tmp_path, bytes(64), {"type": "f8_e5m2"}, [64], scales, **change)
    with open_file(path) as tf:
        found = [p for p in tf.all_problems() if p.is_error]
        assert [p.rule for p in found] == [rules.LAYOUT_RULE] and words in found[0].message


def _quant(tmp_path: Path, attributes: dict, parts: dict, blobs: dict, shape: list[int]) -> Path:
    manifest = {"objects": {"q": {"shape": shape, "layout": "zt.quant_group/1", "attributes": attributes,
                                  "parts": parts}}}
    path = tmp_path / "q.zt"
    path.write_bytes(assemble(manifest, blobs))
    return path


AWQ = {"bits": 4, "group_size": 32, "axis": 1, "packing": {"word": "u32", "order": "lsb_first", "per_word": 8},
       "scale_form": "f16_factors", "zero_point": {"form": "tensor", "packing": "same_as_data"}}


def test_quant_group_is_validated_and_shown_structurally(tmp_path):
    shape = [4, 64]  # 256 codes: 32 u32 words; groups 2 × lanes 4 = 8 scales (f16), 8 zeros packed in 1 word
    parts = {"data": part("u32", 4096, 128), "scales": part("f16", 8192, 16), "zeros": part("u32", 12288, 4)}
    path = _quant(tmp_path, AWQ, parts, {4096: bytes(128), 8192: bytes(16), 12288: bytes(4)}, shape)
    with open_file(path) as tf:
        tensor = tf.tensor("q")
        assert not list(tf.all_problems())
        assert tensor.extra["quant_group"]["per_word"] == 8 and set(tensor.components) == {"data", "scales", "zeros"}
        with pytest.raises(UnsupportedLayout, match="not decoded"):
            to_dense(tf, tensor)
        report = check_file(tf)
        assert report.ok and any("not decoded" in p.message for p in report.problems)
    wrong = dict(AWQ, packing={"word": "u32", "order": "lsb_first", "per_word": 4})
    with open_file(_quant(tmp_path, wrong, parts, {4096: bytes(128), 8192: bytes(16), 12288: bytes(4)}, shape)) as tf:
        assert [p.rule for p in tf.all_problems()] == [rules.LAYOUT_RULE]


@pytest.mark.parametrize("to", ["zt-v1.0", "zt-objects", "safetensors", "zt-v0.1", "blz"])
def test_a_format_that_cannot_hold_quant_group_names_zt_v2_instead(tmp_path, to):
    parts = {"data": part("u32", 4096, 128), "scales": part("f16", 8192, 16), "zeros": part("u32", 12288, 4)}
    path = _quant(tmp_path, AWQ, parts, {4096: bytes(128), 8192: bytes(16), 12288: bytes(4)}, [4, 64])
    with pytest.raises(UnsupportedConversion) as refused:
        convert(path, tmp_path / "out", to=to)
    message = refused.value.message
    assert "'zt.quant_group/1'-layout tensor 'q'" in message and "keep the file in zTensor v2" in message
    assert "convert to zTensor v1.0" not in message
    assert not (tmp_path / "out").exists()
    convert(path, tmp_path / "out.zt", to="zt-v2")  # the format the refusal names holds it
    with open_file(tmp_path / "out.zt") as tf:
        assert tf.tensor("q").layout == "zt.quant_group/1" and not list(tf.all_problems())


def test_gguf_blocks_are_opaque_but_sized(tmp_path):
    def gguf(length: int) -> Path:
        manifest = {"objects": {"g": {"shape": [4, 64], "layout": "gguf.q8_0/1",
                                      "attributes": {"elems_per_block": 32, "block_bytes": 34},
                                      "parts": {"data": part("u8", 4096, length)}}}}
        path = tmp_path / "g.zt"
        path.write_bytes(assemble(manifest, {4096: bytes(length)}))
        return path

    with open_file(gguf(8 * 34)) as tf:
        assert not list(tf.all_problems())
        with pytest.raises(UnsupportedLayout, match="opaque GGUF"):
            to_dense(tf, tf.tensor("g"))
    with open_file(gguf(8 * 34 - 1)) as tf:
        assert [p.rule for p in tf.all_problems()] == [rules.LAYOUT_RULE]


def test_u32_sparse_indices_and_unique_coo_coordinates(tmp_path):
    coords = np.array([[0, 1, 1], [2, 0, 2]], dtype=np.uint32)  # rows, then columns (structure of arrays)
    values = np.array([1.0, 2.0, 3.0], np.float32)
    manifest = {"objects": {"c": {"shape": [2, 3], "layout": "zt.sparse_coo/1", "parts": {
        "coords": part("u32", 4096, coords.nbytes), "values": part("f32", 8192, values.nbytes)}}}}
    path = tmp_path / "coo.zt"
    path.write_bytes(assemble(manifest, {4096: coords.tobytes(), 8192: values.tobytes()}))
    with open_file(path) as tf:
        np.testing.assert_array_equal(to_dense(tf, tf.tensor("c")), [[0, 0, 1], [2, 0, 3]])
    duplicated = np.array([[0, 0, 1], [2, 2, 0]], dtype=np.uint32)
    path.write_bytes(assemble(manifest, {4096: duplicated.tobytes(), 8192: values.tobytes()}))
    with open_file(path) as tf:
        found = [p for p in check_file(tf).problems if p.is_error]
        assert len(found) == 1 and found[0].rule.startswith(rules.LAYOUT_DATA)
        assert "same coordinates" in found[0].message
