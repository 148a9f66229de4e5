"""Appended generations of zTensor v2 files (spec §2.5) and the journal that keeps a crashed append from
costing the previous generation: appending, a partial append reported on opening and rolled back only by a
repair or the next append, a complete one kept, and a real kill."""
from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import cbor2
import numpy as np
import pytest

from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.interrupted_append import repair
from ztviewer.codec.registry import open_file
from ztviewer.codec.writers.cbor import dumps_deterministic
from ztviewer.codec.writers.zt_v2_append import append_manifest, journal_path

REPO = Path(__file__).resolve().parents[3]
ztensor = pytest.importorskip("ztensor")
ARRAYS = {"w": np.arange(1000, dtype=np.float32), "b": np.ones(7, np.int8)}


def _v2(path: Path) -> Path:
    save_arrays(path, ARRAYS, to="zt-v2", attributes={"note": "first"})
    return path


def _manifest(data: bytes) -> dict[str, Any]:
    offset, length = struct.unpack("<QQ", data[-40:-24])
    return cbor2.loads(data[offset:offset + length])


def _edited(path: Path, **attributes: str) -> bytes:
    root = _manifest(path.read_bytes())
    root["attributes"] = dict(attributes)
    root["objects"]["weights"] = root["objects"].pop("w")
    return dumps_deterministic(root)


def test_append_adds_a_generation_and_leaves_every_old_byte(tmp_path: Path) -> None:
    path = _v2(tmp_path / "m.zt")
    before = path.read_bytes()
    size = append_manifest(path, _edited(path, note="second"), 65536)
    after = path.read_bytes()
    assert size == len(after) and after[:len(before)] == before
    offset = struct.unpack("<Q", after[-40:-32])[0]
    assert offset % 65536 == 0 and offset >= len(before) and not any(after[len(before):offset])
    assert not os.path.exists(journal_path(path))
    source = ztensor.open(str(path))
    assert sorted(source.keys()) == ["b", "weights"]
    assert source["weights"].tobytes() == ARRAYS["w"].tobytes()
    ztensor.verify(str(path), deep=True)
    assert _manifest(after)["attributes"] == {"note": "second"}


def _journal(path: Path, old: bytes, new: bytes) -> None:
    import xxhash

    Path(journal_path(path)).write_text(json.dumps({
        "old_length": len(old), "old_footer": f"{xxhash.xxh3_64_intdigest(old[-40:]):016x}",
        "new_length": len(new), "new_footer": f"{xxhash.xxh3_64_intdigest(new[-40:]):016x}"}))


def _two_generations(tmp_path: Path) -> tuple[Path, bytes, bytes]:
    path = _v2(tmp_path / "m.zt")
    old = path.read_bytes()
    append_manifest(path, _edited(path, note="second"), 65536)
    new = path.read_bytes()
    return path, old, new


@pytest.mark.parametrize("cut", [1, 100, 65536, -40, -1])
def test_a_partial_append_is_reported_on_open_and_rolled_back_by_repair(tmp_path: Path, cut: int) -> None:
    path, old, new = _two_generations(tmp_path)
    partial = new[:len(old) + cut] if cut > 0 else new[:cut]
    path.write_bytes(partial)
    _journal(path, old, new)
    tf = open_file(path)
    assert path.read_bytes() == partial and os.path.exists(journal_path(path))  # opening never writes
    first = tf.problems[0]
    assert not first.is_error and "interrupted append" in first.message and first.offset == len(old)
    assert "ztviewer repair" in first.message and "spec §2.5" in first.rule
    assert tf.readable and tf.attributes == {"note": "first"} and sorted(t.name for t in tf.tensors) == ["b", "w"]
    tf.close()
    outcome = repair(path)
    assert not outcome.refused and outcome.removed == len(partial) - len(old)
    assert path.read_bytes() == old and not os.path.exists(journal_path(path))
    ztensor.verify(str(path), deep=True)


def test_the_next_append_rolls_a_partial_one_back_first(tmp_path: Path) -> None:
    path, old, new = _two_generations(tmp_path)
    path.write_bytes(old)
    manifest = _edited(path, note="third")
    path.write_bytes(new[:len(old) + 100])
    _journal(path, old, new)
    size = append_manifest(path, manifest, 65536)
    after = path.read_bytes()
    assert size == len(after) and after[:len(old)] == old and _manifest(after)["attributes"] == {"note": "third"}
    assert not os.path.exists(journal_path(path))
    ztensor.verify(str(path), deep=True)


def test_a_complete_append_with_its_journal_left_behind_is_kept(tmp_path: Path) -> None:
    path, old, new = _two_generations(tmp_path)
    _journal(path, old, new)
    tf = open_file(path)
    assert "stale" in tf.problems[0].message and tf.attributes == {"note": "second"}
    tf.close()
    assert path.read_bytes() == new
    assert "stale journal" in repair(path).message
    assert path.read_bytes() == new and not os.path.exists(journal_path(path))


def test_nothing_written_yet_and_foreign_journals(tmp_path: Path) -> None:
    path, old, new = _two_generations(tmp_path)
    path.write_bytes(old)
    _journal(path, old, new)
    assert "stale journal" in repair(path).message
    assert path.read_bytes() == old
    path.write_bytes(old + b"partial")
    _journal(path, b"x" * 100, new)  # a journal about some other file: never truncate on a guess
    outcome = repair(path)
    assert outcome.refused and "no sound zTensor v2 footer ends at byte 100" in outcome.message
    assert path.read_bytes() == old + b"partial"
    Path(journal_path(path)).write_text("{garbage")
    outcome = repair(path)
    assert outcome.refused and "not JSON" in outcome.message
    assert path.read_bytes() == old + b"partial" and os.path.exists(journal_path(path))


def test_a_failed_write_removes_its_own_bytes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _v2(tmp_path / "m.zt")
    old = path.read_bytes()
    manifest = _edited(path, note="x")
    real_write = os.write

    def failing(fd: int, data: Any) -> int:
        if len(data) > 1000:
            real_write(fd, bytes(data[:500]))
            raise OSError(28, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", failing)
    with pytest.raises(OSError, match="No space"):
        append_manifest(path, manifest, 4096)
    monkeypatch.undo()
    assert path.read_bytes() == old and not os.path.exists(journal_path(path))


def test_a_process_killed_mid_append_loses_only_the_new_generation(tmp_path: Path) -> None:
    path = _v2(tmp_path / "m.zt")
    old = path.read_bytes()
    script = textwrap.dedent(f"""
        import os
        from pathlib import Path
        from ztviewer.codec.writers.zt_v2_append import append_manifest
        from tests.codec.writers.test_zt_v2_append import _edited
        path = Path({str(path)!r})
        manifest = _edited(path, note="killed")
        real_write = os.write
        def dying(fd, data):
            if len(data) > 1000:
                real_write(fd, bytes(data[:700]))
                os._exit(9)
            return real_write(fd, data)
        os.write = dying
        append_manifest(path, manifest, 65536)
    """)
    done = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120,
                          cwd=REPO)  # ``python -c`` imports from its working folder: this checkout's packages
    assert done.returncode == 9, done.stderr
    assert os.path.exists(journal_path(path)) and len(path.read_bytes()) == len(old) + 700
    tf = open_file(path)
    assert len(path.read_bytes()) == len(old) + 700 and "interrupted append" in tf.problems[0].message
    tf.close()
    assert "rolled back" in repair(path).message and path.read_bytes() == old
    ztensor.verify(str(path), deep=True)
