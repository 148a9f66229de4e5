"""Issue 16 §10 in every view: a file truncated by another program while the app shows it. Each view is shown,
the file truncated, then the view repainted, re-read, scrolled, zoomed and copied from — in a child process
(:mod:`tests.gui.truncation_child`), since a SIGBUS kills it. The app must survive, say what happened (the
changed-on-disk warning with Reload) and keep the unsaved edit."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.gui.truncation_child import VIEWS
from ztviewer.codec.arrays import SparseArray, TensorTrainArray, save_arrays

ROOT = Path(__file__).resolve().parents[2]


def build(path: Path, bump: float = 0.0) -> None:
    """A dense 3-D tensor (1.5 MiB), a second one, a CSR matrix and a tensor train, all stored raw."""
    rng = np.random.default_rng(0)
    dense = rng.standard_normal((3, 256, 512)).astype(np.float32)
    dense[0, 10, 10] += bump
    cube = rng.standard_normal((4, 64, 64)).astype(np.float32)
    mask = rng.random((200, 300)) < 0.05
    rows, cols = np.nonzero(mask)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=200))]).astype(np.uint64)
    sparse = SparseArray("sparse_csr", (200, 300), rng.standard_normal(rows.size).astype(np.float32),
                         indptr=indptr, indices=cols.astype(np.uint64))
    cores = [rng.standard_normal((1, 20, 4)), rng.standard_normal((4, 30, 5)), rng.standard_normal((5, 40, 1))]
    save_arrays(path, {"dense": dense, "cube": cube, "sparse": sparse, "train": TensorTrainArray(cores)}, "zt")


@pytest.mark.skipif(sys.platform == "win32", reason="Windows refuses to truncate a mapped file")
@pytest.mark.parametrize("view", VIEWS)
def test_a_view_survives_its_file_being_truncated(tmp_path, view):
    a, b = tmp_path / "a.zt", tmp_path / "b.zt"
    build(a)
    build(b, bump=1.0)
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen")
    proc = subprocess.run([sys.executable, "-m", "tests.gui.truncation_child", str(a), view, str(b)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=180, check=False)
    out = proc.stdout
    assert proc.returncode != -signal.SIGBUS, f"killed by SIGBUS after: {out[-2000:]}"
    assert proc.returncode == 0, out[-3000:] + proc.stderr[-3000:]
    assert "TRUNCATED" in out and "SURVIVED" in out
    assert "UNCAUGHT COUNT 0" in out, out            # nothing escaped into Qt: every failure was handled
    assert "TOLD a.zt changed on disk: its size changed from" in out and "to 300 bytes" in out
    assert "applies your unsaved edits" in out and "EDITS KEPT" in out
    if view == "heatmap":
        assert "READOUT [0, 5, 6]: " in out and "changed on disk since it was opened" in out
    if view in ("values", "hex"):
        assert "COPIED \n" in out                     # nothing copied rather than bytes or cells that are gone
    if view == "hex":
        assert "INSPECTOR ''" in out                  # the data inspector shows no value past the new end
