"""ztensor 1.2.x quantized_group tensors: the corpus tensor's components match MANIFEST.json's hashes, the codes
are the words' 4-bit fields lowest first, the values (code − zero) × scale per group along the last axis."""
from __future__ import annotations

import hashlib
import json
import struct

import numpy as np
import pytest

from ztviewer.codec import decode, quantized
from ztviewer.codec.errors import DecodeError
from ztviewer.workers.tasks import open_path

NAME = "zt_v1.x/ztensor-1.2.3/types_attrs.zt"


@pytest.fixture
def qgroup(corpus_dir):
    tf = open_path(str(corpus_dir / NAME))
    yield tf, tf.tensor("qgroup")
    tf.close()


def test_components_match_the_manifest(qgroup, corpus_dir):
    tf, tensor = qgroup
    manifest = json.loads((corpus_dir / "MANIFEST.json").read_text())
    entry = next(t for f in manifest["files"] if f["path"] == NAME for t in f["tensors"] if t["name"] == "qgroup")
    for role, digest in entry["components_sha256"].items():
        data = bytes(decode.component_bytes(tf, tensor, tensor.components[role]))
        assert hashlib.sha256(data).hexdigest() == digest, role
    assert quantized.quantized_group(tensor) == quantized.QuantizedGroup(4, 16, 8, 64, 4)


def test_codes_and_values(qgroup):
    tf, tensor = qgroup
    raw = bytes(decode.component_bytes(tf, tensor, tensor.components["packed_weight"]))
    words = struct.unpack(f"<{len(raw) // 4}I", raw)
    expected_codes = [(word >> (4 * k)) & 0xF for word in words for k in range(8)]     # lowest nibble first
    codes = quantized.quantized_codes(tf, tensor)
    assert codes.shape == (4, 16) and codes.reshape(-1).tolist() == expected_codes
    scales = struct.unpack("<4e", bytes(decode.component_bytes(tf, tensor, tensor.components["scales"])))
    zeros = struct.unpack("<4e", bytes(decode.component_bytes(tf, tensor, tensor.components["zeros"])))
    values = quantized.dequantize(tf, tensor)
    assert values.dtype == np.float32 and values.shape == (4, 16)
    for row in range(4):                  # one group per row: group_size 16 = the last axis
        want = [(c - np.float32(zeros[row])) * np.float32(scales[row]) for c in expected_codes[16 * row:16 * row + 16]]
        np.testing.assert_allclose(values[row], want, rtol=1e-6)


def test_bad_attributes_are_a_decode_error(qgroup):
    tf, tensor = qgroup
    import copy

    for attributes in ({"bits": 4, "group_size": 5, "packing": "8_per_i32"},
                       {"bits": 3, "group_size": 16, "packing": "8_per_i32"},
                       {"bits": 4, "group_size": 16, "packing": "eight"}):
        broken = copy.copy(tensor)
        broken.attributes = attributes
        with pytest.raises(DecodeError):
            quantized.dequantize(tf, broken)


def test_the_view_registry_chooses_the_quantized_view(qgroup):
    from ztviewer.session.view_registry import view_kind

    assert view_kind(qgroup[1]) == "quantized"
