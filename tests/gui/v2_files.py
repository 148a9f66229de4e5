"""zTensor v2 files for the GUI tests, written by the real ztensor 2.1.2 (a test extra) where it can."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests._corpus import SHARED

CONFORMANCE = SHARED / "ref" / "ztensor-v2-conformance" / "valid"
CORPUS_V2 = SHARED / "corpus" / "zt_v2" / "ztensor-2.1.2"
SEEKABLE = "zt.zstd-seekable/1"


def ztensor():
    return pytest.importorskip("ztensor")


def conformance(name: str) -> Path:
    """A vector of the shared ztensor v2 conformance set; the test is skipped where the shared folder is absent
    (a fresh clone without ZTVIEWER_SHARED), as the corpus tests are."""
    path = CONFORMANCE / name
    if not path.is_file():
        pytest.skip(f"ztensor v2 conformance vectors not found at {CONFORMANCE}")
    return path


def conformance_files() -> list[Path]:
    return sorted(CONFORMANCE.glob("*.zt"))


def corpus_files() -> list[Path]:
    return sorted(CORPUS_V2.glob("*.zt"))


def tied_and_seekable(path: Path, rows: int = 300) -> Path:
    """A canonical-free file with a tied pair (one blob, two owners), a multi-frame zstd-seekable part
    (``big``: ``rows`` × 4096 float32, 4 MiB+ decoded, one frame per MiB) and a small raw one, with digests."""
    zt = ztensor()
    big = (np.arange(rows * 4096, dtype=np.float32) % 251).reshape(rows, 4096)
    tied = np.linspace(-1, 1, 64, dtype=np.float32).reshape(8, 8)
    with zt.Writer(str(path), canonical=False) as w:
        w.add("bias", np.arange(5, dtype=np.float32).tobytes(), [5], "f32")
        w.add("big", big.tobytes(), list(big.shape), "f32", encoding=SEEKABLE)
        w.add("embed.weight", tied.tobytes(), [8, 8], "f32")
        w.add("lm_head.weight", tied.tobytes(), [8, 8], "f32")
    return path


def with_generations(path: Path) -> Path:
    """Three generations written by ztensor's own append: ``a``; then ``b`` added; then an attribute."""
    zt = ztensor()
    with zt.Writer(str(path), canonical=False) as w:
        w.add("a", np.arange(4, dtype=np.float32).tobytes(), [4], "f32")
    with zt.Writer(str(path), canonical=False, append=True) as w:
        w.add("b", np.arange(8, dtype=np.int16).tobytes(), [8], "i16")
    with zt.Writer(str(path), canonical=False, append=True) as w:
        w.set_attributes({"note": "third"})
    return path


F8_CODES = np.array([0x00, 0x38, 0x40, 0xB8, 0x7E, 0x01, 0x44, 0x30], np.uint8)   # 0, 1, 2, -1, … as e4m3fn


def every_type(path: Path) -> Path:
    """One dense object per storage dtype and logical type (bool, the five f8 kinds, packed f4_e2m1 with an odd
    count, complex64/128), a CSR and a COO object and a zt.quant_group/1 object, written by ztensor."""
    zt = ztensor()
    with zt.Writer(str(path), canonical=False) as w:
        for dtype, np_dtype in (("f64", np.float64), ("f32", np.float32), ("f16", np.float16), ("i64", np.int64),
                                ("i32", np.int32), ("i16", np.int16), ("i8", np.int8), ("u64", np.uint64),
                                ("u32", np.uint32), ("u16", np.uint16), ("u8", np.uint8)):
            w.add(f"dense_{dtype}", (np.arange(12) - 3).astype(np_dtype).tobytes(), [3, 4], dtype)
        w.add("dense_bf16", (np.arange(12, dtype=np.float32).view(np.uint32) >> 16).astype(np.uint16).tobytes(),
              [3, 4], "bf16")
        w.add("bool", np.array([1, 0, 1, 1, 0, 0], np.uint8).tobytes(), [2, 3], "u8", logical="bool")
        for kind in ("f8_e4m3fn", "f8_e5m2", "f8_e4m3fnuz", "f8_e5m2fnuz", "f8_e8m0"):
            w.add(kind, F8_CODES.tobytes(), [2, 4], "u8", logical=kind)
        w.add("f4_e2m1", bytes([0x21, 0x43, 0x05]), [5], "u8", logical="f4_e2m1")
        w.add("complex64", np.array([1 + 2j, -3j, 0.5], np.complex64).tobytes(), [3], "f32", logical="complex64")
        w.add("complex128", np.array([[1 + 1j, 2], [3j, -4]], np.complex128).tobytes(), [2, 2], "f64",
              logical="complex128")
        w.add_object("csr", [3, 4], {
            "indices": {"dtype": "u64", "data": np.array([0, 3, 1], np.uint64).tobytes()},
            "indptr": {"dtype": "u64", "data": np.array([0, 2, 2, 3], np.uint64).tobytes()},
            "values": {"dtype": "f32", "data": np.array([1, 2, 3], np.float32).tobytes()}}, layout="zt.sparse_csr/1")
        w.add_object("coo", [2, 3], {
            "coords": {"dtype": "u64", "data": np.array([[0, 1], [1, 2]], np.uint64).tobytes()},   # (0, 1), (1, 2)
            "values": {"dtype": "f64", "data": np.array([5, 6], np.float64).tobytes()}}, layout="zt.sparse_coo/1")
        w.add_object("quant", [4, 64], {
            "data": {"dtype": "u8", "data": bytes(range(128))},
            "scales": {"dtype": "f16", "data": np.ones(8, np.float16).tobytes()}},
            layout="zt.quant_group/1", attributes={
                "bits": 4, "group_size": 32, "axis": 1, "packing": {"word": "u8", "order": "lsb_first", "per_word": 2},
                "scale_form": "f32_factors", "zero_point": {"form": "implied", "value": 8}})
    return path
