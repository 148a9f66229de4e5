"""Minimal reproducers of codec bugs the fuzz properties found, kept as regression tests.

Each one fails today for the reason given. When the codec is fixed the test XPASSes, which strict=True
turns into a failure: then delete the marker (the reproducer stays as a regression test). The properties
in test_fuzz_properties.py stay active and keep finding these until they are fixed.
"""
from __future__ import annotations

import pytest

from tests.fuzz.properties import check_memory, deadline, decode_cap, exercise
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.errors import CodecError
from ztviewer.codec.registry import read_source
from ztviewer.codec.source import InMemorySource

# safetensors: F64 tensor of shape [2**62, 0] (zero elements, data_offsets [0, 0]).
ZERO_ELEMENTS_HUGE_DIM_DENSE = bytes.fromhex(
    "50000000000000007b2274223a7b226474797065223a22463634222c227368617065223a5b3436313136383630313834"
    "32373338373930342c305d2c22646174615f6f666673657473223a5b302c305d7d7d202020202020"
)

# zt v1.0: uint8 tensor of shape [2**64 - 1, 0] (zero elements; the dim exceeds numpy's intp).
ZERO_ELEMENTS_DIM_ABOVE_INTP = bytes.fromhex(
    "5a54454e31303030a46776657273696f6e63312e306967656e657261746f7261676a61747472696275746573a0677465"
    "6e736f7273a16174a46564747970656575696e7438657368617065821bffffffffffffffff0066666f726d6174656465"
    "6e73656a636f6d706f6e656e7473a16464617461a2666f666673657408666c656e677468007d00000000000000"
)

# zt v1.0: sparse_coo float32 of shape [0, 2**62] with nnz = 0 (empty values / coords).
ZERO_ELEMENTS_HUGE_DIM_SPARSE = bytes.fromhex(
    "5a54454e31303030a46776657273696f6e63312e306967656e657261746f7261676a61747472696275746573a0677465"
    "6e736f7273a16173a465647479706567666c6f6174333265736861706582001b400000000000000066666f726d61746a"
    "7370617273655f636f6f6a636f6d706f6e656e7473a26676616c756573a2666f66667365741840666c656e6774680066"
    "636f6f726473a2666f66667365741840666c656e67746800a000000000000000"
)

# zt v1.0: sparse_csr float32 of shape [1, 2**40], nnz = 0, indptr [0, 0]: a valid file.
SPARSE_HUGE_DENSE_EQUIVALENT = bytes.fromhex(
    "5a54454e3130303000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000a46776657273696f6e63312e30696765"
    "6e657261746f7261676a61747472696275746573a06774656e736f7273a16173a465647479706567666c6f6174333265"
    "736861706582011b000001000000000066666f726d61746a7370617273655f6373726a636f6d706f6e656e7473a36676"
    "616c756573a2666f66667365741840666c656e6774680067696e6469636573a2666f66667365741840666c656e677468"
    "0066696e64707472a2666f66667365741840666c656e67746810ba00000000000000"
)

# zt v1.0: sparse_csr float64 of shape [1, 2**20], nnz = 0: dense equivalent 8 MiB, above a 1 MiB cap.
SPARSE_8MIB_DENSE_EQUIVALENT = bytes.fromhex(
    "5a54454e3130303000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000000000000000000000000000000000000a46776657273696f6e63312e30696765"
    "6e657261746f7261676a61747472696275746573a06774656e736f7273a16173a465647479706567666c6f6174363465"
    "736861706582011a0010000066666f726d61746a7370617273655f6373726a636f6d706f6e656e7473a36676616c7565"
    "73a2666f66667365741840666c656e6774680067696e6469636573a2666f66667365741840666c656e6774680066696e"
    "64707472a2666f66667365741840666c656e67746810b600000000000000"
)

# BLZ1: float64, shape [1, 2**40], ranks [1, 0, 1]: 55 bytes, both cores empty (the reader only warns).
TT_RANK0_HUGE = bytes.fromhex(
    "424c5a31010002000000000000000001000000000000000000000000010000010000000000000000000000000000000100000000000000"
)

# BLZ1: float64, shape [1, 2**21], ranks [1, 0, 1]: a 16 MiB dense tensor from 55 bytes.
TT_RANK0_16MIB = bytes.fromhex(
    "424c5a31010002000000000000000001000000000000000000200000000000010000000000000000000000000000000100000000000000"
)

# zt v1.0: a VALID 222-byte file, one float32[4] tensor stored as a 17-byte zstd frame (no content size).
ZSTD_TINY_TENSOR = bytes.fromhex(
    "5a54454e3130303000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "0000000000000000000000000000000028b52ffd0000450000100000010032c002a46776657273696f6e63312e306967"
    "656e657261746f7261676a61747472696275746573a06774656e736f7273a1617aa465647479706567666c6f61743332"
    "657368617065810466666f726d61746564656e73656a636f6d706f6e656e7473a16464617461a3666f66667365741840"
    "666c656e6774681168656e636f64696e67647a7374648500000000000000"
)


# Was a bug: decode.dense_array: present(bits).reshape(shape) raises numpy's ValueError 'array is too big' for a zero-
# element shape whose non-zero dims overflow intp; must be a CodecError (or the reader flags the shape)
def test_dense_zero_elements_huge_dim():
    exercise(ZERO_ELEMENTS_HUGE_DIM_DENSE, "a.safetensors")


# Was a bug: decode.dense_array: reshape to a zero-element shape with a dim above 2**63 - 1 raises numpy's ValueError
# 'Maximum allowed dimension exceeded'; must be a CodecError
def test_dense_zero_elements_dim_above_intp():
    exercise(ZERO_ELEMENTS_DIM_ABOVE_INTP, "e.zt")


# Was a bug: sparse._densify: np.zeros(shape) raises numpy's ValueError 'array is too big' (the decode-limit check
# passes because the shape has 0 elements); must be a CodecError
def test_sparse_zero_elements_huge_dim():
    exercise(ZERO_ELEMENTS_HUGE_DIM_SPARSE, "b.zt")


# Was a bug: content_hash / sparse.iter_dense_chunks never checks decode_limit(): hashing the dense equivalent of a
# [1, 2**40] sparse tensor loops over 2**20 chunks of 1M zeros (hours) instead of raising DecodeLimitExceeded as
# to_dense does
def test_sparse_content_hash_respects_decode_limit():
    tf = read_source(InMemorySource(SPARSE_HUGE_DENSE_EQUIVALENT, "c.zt"))
    (tensor,) = tf.tensors
    assert not tensor.has_errors
    with decode_cap(1 << 20), pytest.raises(CodecError):
        content_sha256(tf, tensor, cancelled=deadline("content_sha256", 1.0))


# Was a bug: sparse.iter_dense_chunks allocates chunks of 2**20 elements (8 MiB for float64) whatever the decode cap
# (1 MiB here) and the file size (270 bytes)
def test_sparse_content_hash_memory():
    check_memory(SPARSE_8MIB_DENSE_EQUIVALENT, "c2.zt")


# Was a bug: decode.iter_decoded calls reader.read(CHUNK) with CHUNK = 8 MiB: python-zstandard allocates the full 8
# MiB output buffer for every read, so a 16-byte tensor costs 8 MiB (cap is 1 MiB); read min(chunk, cap - produced +
# 1) bytes instead
def test_zstd_small_tensor_memory():
    check_memory(ZSTD_TINY_TENSOR, "d.zt")


# Was a bug: content_hash.iter_logical_bytes and decode.to_dense call tt.reconstruct(cores) without its limit: a
# 55-byte BLZ of shape [1, 2**40] (rank 0 bond) asks numpy for 8 TiB; pass limit=decode_limit() // itemsize so it
# raises DecodeLimitExceeded
def test_tt_reconstruct_respects_decode_limit():
    with decode_cap(16 << 20):
        exercise(TT_RANK0_HUGE, "e1.blz")


# Was a bug: tt.reconstruct is called without the decode limit: 16 MiB allocated from a 55-byte file (cap 1 MiB)
def test_tt_reconstruct_memory():
    check_memory(TT_RANK0_16MIB, "e2.blz")
