"""Issue 16 §11: saves leave nothing behind. ``export`` writes its .npy atomically, a read-only file is not
replaced, and temporaries of killed saves are removed (and reported) on the next save to their folder — never
the temporary of a save that is still running."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from ztviewer.cli import main
from ztviewer.codec import save as save_module
from ztviewer.codec.errors import EditRefused
from ztviewer.codec.save import (
    TMP_MARKER,
    atomic_write,
    clean_stale_temporaries,
    edit_file,
    stale_temporaries,
)


def small_safetensors(path) -> None:
    import safetensors.numpy

    safetensors.numpy.save_file({"a": np.arange(6, dtype=np.float32)}, str(path), metadata={"k": "v"})


def test_export_writes_atomically_and_leaves_no_temporary_on_failure(tmp_path, capsys, monkeypatch):
    source = tmp_path / "m.safetensors"
    small_safetensors(source)
    out = tmp_path / "a.npy"
    out.write_bytes(b"previous")
    assert main(["export", str(source), "a", "-o", str(out)]) == 0
    assert np.array_equal(np.load(out), np.arange(6, dtype=np.float32))

    import ztviewer.codec.npy_export as npy_export

    def full_disk(tf, tensor, out, **kwargs):  # the header and some data reach the file, then the disk is full
        out.write(b"\x93NUMPY partial")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(npy_export, "write_npy", full_disk)
    assert main(["export", str(source), "a", "-o", str(out)]) == 2     # an output that cannot be written
    assert "No space left on device" in capsys.readouterr().err
    assert np.array_equal(np.load(out), np.arange(6, dtype=np.float32))  # the old file is intact
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.npy", "m.safetensors"]  # no temporary left


def test_export_adds_the_npy_suffix_as_numpy_does(tmp_path, capsys):
    source = tmp_path / "m.safetensors"
    small_safetensors(source)
    assert main(["export", str(source), "a", "-o", str(tmp_path / "plain")]) == 0
    assert np.array_equal(np.load(tmp_path / "plain.npy"), np.arange(6, dtype=np.float32))


def test_in_place_edit_refuses_a_file_the_user_cannot_write(tmp_path, capsys, monkeypatch):
    path = tmp_path / "m.safetensors"
    small_safetensors(path)
    path.chmod(0o444)
    before = path.read_bytes()
    real_access = os.access
    # root may write anything, so the user's view is what os.access says; emulate an ordinary user
    monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if mode & os.W_OK else real_access(p, mode, **kw))
    assert main(["edit", str(path), "--set-attr", "x=1", "--in-place"]) == 1
    err = capsys.readouterr().err
    assert "read-only" in err and "[replace only writable files]" in err
    assert path.read_bytes() == before and oct(path.stat().st_mode & 0o777) == "0o444"
    assert not stale_temporaries(str(path))
    with pytest.raises(EditRefused):
        atomic_write(str(path), lambda out: out.write(b"x"))


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root may write a 0444 file")
def test_in_place_edit_of_a_read_only_file_as_an_ordinary_user(tmp_path, capsys):
    path = tmp_path / "m.safetensors"
    small_safetensors(path)
    path.chmod(0o444)
    assert main(["edit", str(path), "--set-attr", "x=1", "--in-place"]) == 1


def test_writable_file_is_still_replaced_in_place(tmp_path, capsys):
    path = tmp_path / "m.safetensors"
    small_safetensors(path)
    assert main(["edit", str(path), "--set-attr", "x=1", "--in-place"]) == 0
    edit_file(path, [], None)  # the codec call too


def test_stale_temporaries_are_removed_on_the_next_save_and_reported(tmp_path, capsys):
    path = tmp_path / "m.safetensors"
    small_safetensors(path)
    stale = [tmp_path / f".m.safetensors{TMP_MARKER}dead0001", tmp_path / f".other.zt{TMP_MARKER}dead0002"]
    for leftover in stale:
        leftover.write_bytes(b"\0" * 1000)
    foreign = tmp_path / ".m.safetensors.tmp-not-ours"
    foreign.write_bytes(b"keep")
    assert main(["edit", str(path), "--set-attr", "x=1", "--in-place"]) == 0
    err = capsys.readouterr().err
    assert all(not p.exists() for p in stale) and foreign.exists()
    assert err.count("an interrupted save left behind") == 2 and str(stale[0]) in err


def test_a_running_save_keeps_its_temporary(tmp_path):
    """A temporary whose writer is alive (it holds the lock) is not touched by another save's cleanup."""
    pytest.importorskip("fcntl")
    target = tmp_path / "big.bin"
    started = tmp_path / "started"
    script = f"""
import os, sys, time
from ztviewer.codec.save import atomic_write
def produce(out):
    out.write(b"x" * 1000)
    open({str(started)!r}, "w").close()
    time.sleep(60)
atomic_write({str(target)!r}, produce)
"""
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 30
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        (running,) = stale_temporaries(str(target))
        assert clean_stale_temporaries(str(tmp_path)) == () and os.path.exists(running)
        os.kill(proc.pid, signal.SIGKILL)  # now it is a leftover of a killed save
        proc.wait(timeout=30)
        assert clean_stale_temporaries(str(tmp_path)) == (running,) and not os.path.exists(running)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_cleanup_skips_links_and_folders(tmp_path):
    folder = tmp_path / f".x{TMP_MARKER}folder"
    folder.mkdir()
    link = tmp_path / f".y{TMP_MARKER}link"
    link.symlink_to(tmp_path / "elsewhere")
    assert clean_stale_temporaries(str(tmp_path)) == ()
    assert folder.is_dir() and link.is_symlink()
    assert save_module.TMP_MARKER == ".ztviewer-tmp-"


def test_a_replaced_file_is_unlinked_in_the_background_and_nothing_is_left(tmp_path, monkeypatch):
    import threading


    monkeypatch.setattr(save_module, "ASIDE_FROM", 0)
    target = tmp_path / "out.bin"
    target.write_bytes(b"old" * 1000)
    old_inode = target.stat().st_ino
    names: list[str] = []
    real_link = os.link
    monkeypatch.setattr(os, "link", lambda a, b: (names.append(b), real_link(a, b))[1])
    save_module.atomic_write(target, lambda out: out.write(b"new contents"))
    for thread in threading.enumerate():
        if thread.name == "ztviewer-unlink-replaced":
            thread.join()
    assert target.read_bytes() == b"new contents" and target.stat().st_ino != old_inode
    assert len(names) == 1 and TMP_MARKER in names[0]  # the old file had a second name until unlinked
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]


def test_a_failed_replace_keeps_the_old_file_and_removes_its_second_name(tmp_path, monkeypatch):
    from ztviewer.codec import portable

    monkeypatch.setattr(save_module, "ASIDE_FROM", 0)
    target = tmp_path / "out.bin"
    target.write_bytes(b"old")

    def refuse(*args, **kwargs):
        raise PermissionError("refused")

    monkeypatch.setattr(portable, "replace", refuse)
    with pytest.raises(PermissionError):
        save_module.atomic_write(target, lambda out: out.write(b"new"))
    assert target.read_bytes() == b"old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.bin"]
