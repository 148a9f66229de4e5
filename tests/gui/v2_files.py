"""zTensor v2 files for the GUI tests, written by the real ztensor 2.1.2 (a test extra) where it can."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

CONFORMANCE = Path(__file__).resolve().parents[3] / "shared" / "ref" / "ztensor-v2-conformance" / "valid"
CORPUS_V2 = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "zt_v2" / "ztensor-2.1.2"
SEEKABLE = "zt.zstd-seekable/1"


def ztensor():
    return pytest.importorskip("ztensor")


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
