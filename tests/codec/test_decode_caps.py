"""Issue 16 §7: decompression is streamed and capped per file. Unsized zstd streams are measured while
streaming (a bomb stops at the cap holding one chunk), every pass over a whole file shares one decode budget,
a blob named by many entries is decoded once, and running out of memory is a problem, not a crash."""
from __future__ import annotations

import subprocess
import sys
import tracemalloc

import numpy as np
import pytest
import zstandard

from tests.hostile_values import (
    V01,
    V1,
    cbor_array,
    cbor_map,
    enc,
    sparse_zstd_unsized,
    v10,
    zt_file,
)
from ztviewer.codec import check as check_module
from ztviewer.codec import registry
from ztviewer.codec.check import check_file
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.decode import component_bytes
from ztviewer.codec.decode_rules import per_file_budget
from ztviewer.codec.dense import to_dense
from ztviewer.codec.errors import DecodeLimitExceeded, FileDecodeBudgetSpent
from ztviewer.codec.formats import zt  # noqa: F401  (registers the handler)
from ztviewer.codec.source import InMemorySource

MiB = 1 << 20


def open_bytes(data: bytes, name: str = "t.zt"):
    return registry.read_source(InMemorySource(data, path=name))


def zeros_frame(nbytes: int) -> bytes:
    return zstandard.ZstdCompressor(level=3).compress(bytes(nbytes))


def coo_unsized(values_frame: bytes, shape: list[int], nnz: int) -> bytes:
    """A v1.0 COO tensor: values in zstd without a recorded size, ``nnz`` raw u64 coordinates (all zero)."""
    pad = -(-len(values_frame) // 64) * 64
    comps = cbor_map([(enc("values"), cbor_map([(enc("offset"), enc(64)), (enc("length"), enc(len(values_frame))),
                                                (enc("encoding"), enc("zstd"))])),
                      (enc("coords"), cbor_map([(enc("offset"), enc(64 + pad)),
                                                (enc("length"), enc(8 * nnz * len(shape)))]))])
    tensor = cbor_map([(enc("dtype"), enc("float32")), (enc("shape"), enc(shape)), (enc("format"), enc("sparse_coo")),
                       (enc("components"), comps)])
    blobs = values_frame + bytes(pad - len(values_frame)) + bytes(8 * nnz * len(shape))
    return zt_file(V1, v10(cbor_map([(enc("s"), tensor)])), blobs)


def test_unsized_sparse_values_decode_exactly():
    tf = open_bytes(sparse_zstd_unsized(1000))
    dense = to_dense(tf, tf.tensors[0])
    assert np.array_equal(dense, np.ones(1000, np.float32))
    assert check_file(tf).ok


def test_unsized_bomb_stops_at_the_cap_holding_one_chunk(monkeypatch):
    monkeypatch.setenv("ZTVIEWER_MAX_DECODED", str(16 * MiB))
    tf = open_bytes(coo_unsized(zeros_frame(64 * MiB), [1 << 40], 4))
    tensor = tf.tensors[0]
    tracemalloc.start()
    try:
        with pytest.raises(DecodeLimitExceeded, match="decode limit of 16,777,216"):
            component_bytes(tf, tensor, tensor.components["values"])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * MiB  # a chunk or two (8 MiB), never the 16 MiB cap, never the 64 MiB stream
    report = check_file(tf)
    assert not report.ok and any("decode limit" in p.message and p.component == "values" for p in report.problems)


def distinct_zstd_tensors(count: int, nbytes: int) -> bytes:
    """v1.0 dense float32 tensors t0..t{count-1}, each its own zstd frame of ``nbytes`` decoded bytes."""
    blobs, pairs, offset = b"", [], 64
    for k in range(count):
        frame = zstandard.ZstdCompressor().compress(np.full(nbytes // 4, k, "<f4").tobytes())
        pad = -(-len(frame) // 64) * 64
        pairs.append((enc(f"t{k}"), cbor_map([
            (enc("dtype"), enc("float32")), (enc("shape"), enc([nbytes // 4])), (enc("format"), enc("dense")),
            (enc("components"), cbor_map([(enc("data"), cbor_map([(enc("offset"), enc(offset)),
                                                                  (enc("length"), enc(len(frame))),
                                                                  (enc("encoding"), enc("zstd"))]))]))])))
        blobs += frame + bytes(pad - len(frame))
        offset += pad
    return zt_file(V1, v10(cbor_map(pairs)), blobs)


def test_one_pass_over_a_file_shares_one_decode_budget(monkeypatch):
    monkeypatch.setenv("ZTVIEWER_MAX_DECODED", str(1 * MiB))
    tf = open_bytes(distinct_zstd_tensors(3, 512 << 10))
    report = check_file(tf)
    (warned,) = report.problems
    assert report.ok and report.tensors_decoded == 2
    assert warned.tensor == "t2" and warned.rule == "decoded bytes per file are capped"
    with per_file_budget():
        content_sha256(tf, tf.tensors[0])
        content_sha256(tf, tf.tensors[1])
        with pytest.raises(FileDecodeBudgetSpent):
            content_sha256(tf, tf.tensors[2])
    assert content_sha256(tf, tf.tensors[2])  # outside a pass, each tensor has its own cap only


def test_info_hash_of_a_file_past_its_budget_says_so(monkeypatch, tmp_path, capsys):
    import json

    from ztviewer.cli import main

    monkeypatch.setenv("ZTVIEWER_MAX_DECODED", str(1 * MiB))
    path = tmp_path / "three.zt"
    path.write_bytes(distinct_zstd_tensors(3, 512 << 10))
    assert main(["info", "--json", "--hash", str(path)]) == 0
    tensors = json.loads(capsys.readouterr().out)["tensors"]
    assert [t["sha256"] is not None for t in tensors] == [True, True, False]
    assert "per-file decode limit" in tensors[2]["hash_error"]


def test_a_thousand_aliases_of_one_frame_decode_once(monkeypatch):
    frame = zeros_frame(8 * MiB)
    entry = cbor_map([(enc("name"), enc("same")), (enc("offset"), enc(64)), (enc("size"), enc(len(frame))),
                      (enc("dtype"), enc("float32")), (enc("layout"), enc("dense")), (enc("shape"), enc([2 * MiB])),
                      (enc("encoding"), enc("zstd"))])
    tf = open_bytes(zt_file(V01, cbor_array([entry] * 1000), frame))
    calls = []
    real = check_module._decode_tensor
    monkeypatch.setattr(check_module, "_decode_tensor", lambda *a: calls.append(a[1].index) or real(*a))
    report = check_file(tf)
    assert report.ok and report.tensors_decoded == 1000 and calls == [0]


def test_out_of_memory_while_decoding_is_a_problem(monkeypatch):
    tf = open_bytes(distinct_zstd_tensors(2, 4096))

    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(check_module, "_decode_tensor", no_memory)
    report = check_file(tf)
    assert [p.message for p in report.problems] == ["not enough memory to decode this tensor"] * 2
    assert not report.ok


_REAL_CAP = """
import sys
from ztviewer.codec.check import check_file
from ztviewer.codec.multifile import open_path
report = check_file(open_path(sys.argv[1]))
hwm = next(int(l.split()[1]) for l in open("/proc/self/status") if l.startswith("VmHWM:"))
print("RESULT", report.ok, hwm, [p.message for p in report.problems])
"""


@pytest.mark.slow
@pytest.mark.timeout(120)
@pytest.mark.skipif(not __import__("os").path.exists("/proc/self/status"), reason="needs /proc for the peak")
def test_the_real_default_cap_stops_an_unsized_sparse_bomb(tmp_path):
    """The default 4 GiB cap itself, once: 5 GiB of zeros behind a 160 KB frame, no size recorded anywhere."""
    cctx = zstandard.ZstdCompressor(level=1)
    chunk = bytes(64 * MiB)
    frame = b"".join(cctx.compress(chunk) for _ in range(80))  # 80 frames × 64 MiB = 5 GiB decoded
    path = tmp_path / "bomb.zt"
    path.write_bytes(coo_unsized(frame, [1 << 40], 4))
    proc = subprocess.run([sys.executable, "-c", _REAL_CAP, str(path)], capture_output=True, text=True,
                          timeout=110, check=False)
    assert "Traceback" not in proc.stderr, proc.stderr
    line = next(line for line in proc.stdout.splitlines() if line.startswith("RESULT"))
    assert line.startswith("RESULT False") and "decode limit of 4,294,967,296 bytes" in line
    assert int(line.split()[2]) < 256 * 1024  # KiB: streamed, never held
