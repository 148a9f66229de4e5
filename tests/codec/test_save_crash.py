"""Crash safety: a saving process killed with SIGKILL at random moments never damages the original and never
leaves a partial file under the target name. What it may leave is a temporary file named
``.<target name>.ztviewer-tmp-<hex>`` beside the target (found by ``save.stale_temporaries``)."""
from __future__ import annotations

import hashlib
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from ztviewer.codec import open_file
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.content_hash import content_sha256
from ztviewer.codec.save import TMP_MARKER, stale_temporaries

SIZE = int(os.environ.get("ZTVIEWER_CRASH_TEST_MB", "200")) << 20
ITERATIONS = 6
REPO = Path(__file__).resolve().parents[2]

CHILD = textwrap.dedent("""
    import sys
    from ztviewer.codec import open_file
    from ztviewer.codec.edit import EditableDocument, SetEncoding, SetFileAttribute
    from ztviewer.codec.save import save
    source, target = sys.argv[1], sys.argv[2]
    with open_file(source) as tf:
        doc = EditableDocument(tf)
        SetFileAttribute("saved_by", "crash-test").apply(doc)
        SetEncoding("zstd", 1, tensor="packed").apply(doc)
        print("saving", flush=True)
        save(doc, target)
    print("done", flush=True)
""")


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(8 << 20):
            h.update(chunk)
    return h.hexdigest()


@pytest.fixture(scope="module")
def big_source(tmp_path_factory) -> tuple[Path, str, dict[str, str]]:
    path = tmp_path_factory.mktemp("crash") / "big.zt"
    rng = np.random.default_rng(7)
    half = SIZE // 2 // 4
    arrays = {"copied": rng.standard_normal(half, dtype=np.float32),
              "packed": rng.integers(0, 16, half, dtype=np.int32).astype(np.float32)}
    save_arrays(path, arrays, attributes={"license": "MIT"})
    with open_file(path) as tf:
        hashes = {t.name: content_sha256(tf, t) for t in tf.tensors}
    return path, sha256(path), hashes


def run_child(source: Path, target: Path) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-c", CHILD, str(source), str(target)], stdout=subprocess.PIPE,
                            env=env, text=True)


def assert_valid_result(path: Path, hashes: dict[str, str]) -> None:
    with open_file(path) as tf:
        assert tf.readable and not tf.has_errors
        assert tf.attributes == {"license": "MIT", "saved_by": "crash-test"}
        assert {t.name: content_sha256(tf, t) for t in tf.tensors} == hashes


def _kill_at_random(source: Path, target: Path, duration: float, seed: int) -> bool:
    proc = run_child(source, target)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "saving"
    time.sleep(random.Random(seed).uniform(0.0, duration * 1.1))
    finished = proc.poll() is not None
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    return finished


@pytest.mark.slow
@pytest.mark.parametrize("in_place", [False, True], ids=["save-as", "in-place"])
def test_sigkill_during_save(big_source, tmp_path, in_place):
    original, source_sha, hashes = big_source
    work = tmp_path / "model.zt"
    work.write_bytes(original.read_bytes())
    target = work if in_place else tmp_path / "out.zt"
    start = time.perf_counter()  # calibrate the kill window with one complete save
    proc = run_child(work, tmp_path / "calibration.zt")
    assert proc.communicate()[0].split() == ["saving", "done"]
    duration = time.perf_counter() - start
    assert_valid_result(tmp_path / "calibration.zt", hashes)
    (tmp_path / "calibration.zt").unlink()

    interrupted = 0
    for i in range(ITERATIONS):
        if sha256(work) != source_sha:  # an in-place save completed: start again from the original
            work.write_bytes(original.read_bytes())
        if not in_place and target.exists():
            target.unlink()
        _kill_at_random(work, target, duration, seed=i)
        if in_place:
            renamed = sha256(work) != source_sha
        else:
            assert sha256(work) == source_sha, "the source is never modified"
            renamed = target.exists()
        if renamed:  # the rename happened: the new file is complete
            assert_valid_result(target, hashes)
        interrupted += not renamed
        names = sorted(set(os.listdir(tmp_path)) - {"out.zt", "model.zt"})
        assert all(n.startswith(f".{target.name}{TMP_MARKER}") for n in names), names
        for leftover in stale_temporaries(target):
            os.unlink(leftover)
    assert interrupted, "no kill landed before the rename; the test did not exercise a crash"
    assert sha256(original) == source_sha
