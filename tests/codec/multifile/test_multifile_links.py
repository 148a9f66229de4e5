"""Issue 16 §9: multi-file sets resolve real paths (a link out of the folder is named), open only regular files
(a FIFO as a file, index or shard never hangs), and a shard name with a NUL is a problem, not a crash."""
from __future__ import annotations

import json
import os
import shutil

import numpy as np
import pytest

from tests.codec.multifile.test_multifile_builders import hf_arrays, hf_checkpoint, spark_dataset
from ztviewer.cli import main
from ztviewer.codec.check import check_file
from ztviewer.codec.dense import to_dense
from ztviewer.codec.multifile import open_path
from ztviewer.codec.portable import NotARegularFile, open_regular

needs_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="the system has no FIFOs")
needs_links = pytest.mark.skipif(not hasattr(os, "symlink"), reason="the system has no symbolic links")
SHARD1, SHARD2 = "model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors"


def messages(tf, severity: str) -> list[str]:
    return [p.describe() for p in tf.all_problems() if p.severity.value == severity]


def shard1_linked_out(tmp_path):
    """(arrays, index) of a checkpoint whose first shard is a link to ``blobs/abc123`` beside its folder."""
    arrays = hf_arrays()
    folder = tmp_path / "snapshot"
    folder.mkdir()
    index = hf_checkpoint(folder, arrays)
    blobs = tmp_path / "blobs"
    blobs.mkdir()
    shutil.move(folder / SHARD1, blobs / "abc123")
    (folder / SHARD1).symlink_to(os.path.relpath(blobs / "abc123", folder))  # as a Hugging Face cache links
    return arrays, index


@needs_links
def test_shard_linked_outside_the_folder_is_read_and_named(tmp_path, capsys):
    arrays, index = shard1_linked_out(tmp_path)
    blobs = tmp_path / "blobs"
    with open_path(index) as tf:
        warned = messages(tf, "warning")
        assert any(str(blobs / "abc123") in m and "outside the set's folder" in m and SHARD1 in m for m in warned)
        assert not messages(tf, "error")
        for t in tf.tensors:
            np.testing.assert_array_equal(to_dense(tf, t), arrays[t.shard][t.name])
        assert check_file(tf).ok


@needs_links
def test_link_inside_the_folder_is_not_reported(tmp_path):
    folder = tmp_path / "set"
    folder.mkdir()
    index = hf_checkpoint(folder)
    (folder / "data").mkdir()
    shutil.move(folder / SHARD2, folder / "data" / SHARD2)
    (folder / SHARD2).symlink_to(folder / "data" / SHARD2)
    with open_path(index) as tf:
        assert not messages(tf, "warning") and not messages(tf, "error")


@needs_fifo
@pytest.mark.timeout(20)
def test_fifo_as_a_shard_is_an_error_not_a_hang(tmp_path, capsys):
    index = hf_checkpoint(tmp_path)
    (tmp_path / SHARD2).unlink()
    os.mkfifo(tmp_path / SHARD2)
    with open_path(index) as tf:
        (error,) = [m for m in messages(tf, "error") if SHARD2 in m]
        assert "FIFO" in error and "not a regular file" in error
        sound = {t.shard for t in tf.tensors if not t.has_errors}
        assert sound == {SHARD1, "model-00003-of-00003.safetensors"}
    assert main(["check", str(index)]) == 1


@needs_fifo
@pytest.mark.timeout(20)
def test_fifo_in_a_spark_dataset_is_an_error_not_a_hang(tmp_path):
    manifest = spark_dataset(tmp_path, n_shards=2)
    doc = json.loads(manifest.read_text())
    first = tmp_path / doc["shards"][0]["path"] if "path" in doc["shards"][0] else None
    victim = first if first is not None and first.exists() else next(tmp_path.rglob("part-*.safetensors"))
    victim.unlink()
    os.mkfifo(victim)
    with open_path(manifest) as tf:
        assert any("FIFO" in m for m in messages(tf, "error"))


@needs_fifo
@pytest.mark.timeout(20)
@pytest.mark.parametrize("name", ["model.zt", "model.safetensors.index.json", "dataset_manifest.json"])
def test_fifo_as_the_file_or_index_is_an_error_not_a_hang(tmp_path, capsys, name):
    os.mkfifo(tmp_path / name)
    assert main(["info", str(tmp_path / name)]) == 2     # an input that cannot be read
    err = capsys.readouterr().err
    assert "FIFO" in err and "Traceback" not in err


@needs_fifo
def test_open_regular_refuses_before_blocking(tmp_path):
    os.mkfifo(tmp_path / "p")
    with pytest.raises(NotARegularFile, match="FIFO"):
        open_regular(str(tmp_path / "p"))
    with pytest.raises(NotARegularFile, match="folder"):
        open_regular(str(tmp_path))
    (tmp_path / "f").write_bytes(b"abc")
    with open_regular(str(tmp_path / "f")) as f:
        assert f.read() == b"abc"


def test_nul_in_a_shard_name_is_a_problem(tmp_path, capsys):
    index = hf_checkpoint(tmp_path)
    doc = json.loads(index.read_text())
    doc["weight_map"]["extra"] = "bad\u0000name.safetensors"
    index.write_text(json.dumps(doc))
    with open_path(index) as tf:
        assert any("NUL" in m for m in messages(tf, "error"))
    main(["info", str(index)])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "internal error" not in err and "\x00" not in out + err


@needs_links
@needs_fifo
@pytest.mark.timeout(20)
def test_shards_open_the_same_without_the_one_call_open(tmp_path, monkeypatch):
    """Where the system lacks ``O_NOFOLLOW`` / ``O_NONBLOCK`` (Windows) every shard takes the portable open; a
    link out of the folder, a FIFO, a folder and a missing file are reported the same on both paths."""
    folder = tmp_path / "set"
    folder.mkdir()
    shards = {f"model-0000{i}-of-00005.safetensors": {f"t{i}": np.full(3, i, np.float32)} for i in range(1, 6)}
    index = hf_checkpoint(folder, shards)
    names = sorted(shards)
    outside = tmp_path / "blob"
    shutil.move(folder / names[0], outside)
    (folder / names[0]).symlink_to(outside)
    (folder / names[1]).unlink()
    os.mkfifo(folder / names[1])
    (folder / names[2]).unlink()
    (folder / names[2]).mkdir()
    (folder / names[3]).unlink()

    def seen() -> tuple[list[str], list[tuple[str | None, str, str]]]:
        with open_path(index) as tf:
            values = [(t.shard, t.name, to_dense(tf, t).tobytes().hex()) for t in tf.tensors if not t.has_errors]
            return sorted(p.describe() for p in tf.all_problems()), values

    from ztviewer.codec.multifile import shards as shards_module

    one_call = seen()
    monkeypatch.setattr(shards_module, "NO_LINK_FLAGS", 0)
    assert seen() == one_call
    problems, values = one_call
    assert values == [(names[0], "t1", np.full(3, 1, np.float32).tobytes().hex()),
                      (names[4], "t5", np.full(3, 5, np.float32).tobytes().hex())]
    assert any(str(outside) in p and "outside the set's folder" in p for p in problems)
    assert any(names[1] in p and "FIFO" in p for p in problems)
    assert any(names[2] in p and "folder, not a regular file" in p for p in problems)
    assert any(names[3] in p and "missing" in p for p in problems)


@needs_links
def test_export_says_its_shard_is_a_link_out_of_the_folder_as_info_does(tmp_path, capsys):
    arrays, index = shard1_linked_out(tmp_path)
    linked = next(iter(arrays[SHARD1]))
    other = next(iter(arrays[SHARD2]))
    assert main(["info", str(index)]) == 0
    said = [line for line in capsys.readouterr().out.splitlines() if "outside the set's folder" in line]
    assert len(said) == 1 and SHARD1 in said[0]
    assert main(["export", str(index), linked, "-o", str(tmp_path / "a.npy")]) == 0
    err = capsys.readouterr().err
    assert said[0].strip() in err
    np.testing.assert_array_equal(np.load(tmp_path / "a.npy"), arrays[SHARD1][linked])
    assert main(["export", str(index), other, "-o", str(tmp_path / "b.npy")]) == 0
    assert "outside" not in capsys.readouterr().err  # a shard in the folder: nothing to say
