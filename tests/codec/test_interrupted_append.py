"""Issue 31: opening a file never modifies it, whatever lies beside it as an append journal. Only a journal that
applies (a zTensor v2 file whose end footer does not verify, ``old_length`` on a sound footer it recorded) is
reported as an interrupted append, and only :func:`repair` (or the next append) rolls it back; any other is
ignored with a warning that names it and the reason. File bytes are compared exactly before and after."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_available
from ztviewer.codec.append_journal import MAX_JOURNAL_BYTES, footer_hash, journal_path
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.check import check_file
from ztviewer.codec.errors import EditRefused
from ztviewer.codec.interrupted_append import RULE, repair
from ztviewer.codec.registry import open_file
from ztviewer.codec.writers.cbor import dumps_deterministic
from ztviewer.codec.writers.zt_v2_append import append_manifest, drop_stale_journal

REPO = Path(__file__).resolve().parents[2]
ARRAYS = {"w": np.arange(1000, dtype=np.float32), "b": np.ones(7, np.int8)}
needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
no_fifo = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs on this system")


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _fields(old: bytes, old_length: object = None) -> dict[str, object]:
    """Journal fields recording ``old`` as the previous generation (``old_length`` overridden when given)."""
    return {"old_length": len(old) if old_length is None else old_length,
            "old_footer": footer_hash(old[-40:]), "new_length": len(old) + 70_000, "new_footer": "0" * 16}


def _put_journal(path: Path, text: str | bytes) -> Path:
    journal = Path(journal_path(path))
    journal.write_bytes(text.encode() if isinstance(text, str) else text)
    return journal


def _v2(path: Path) -> bytes:
    save_arrays(path, ARRAYS, to="zt-v2", attributes={"note": "first"})
    return path.read_bytes()


def _interrupted(path: Path) -> bytes:
    """A sound v2 file followed by the start of an append that never finished, with its journal; returns the
    sound bytes."""
    sound = _v2(path)
    with open(path, "ab") as out:
        out.write(bytes(4000) + b"\xa1partial manifest")
    _put_journal(path, json.dumps(_fields(sound)))
    return sound


def _opened_unchanged(path: Path) -> list[str]:
    """Open ``path``; assert neither it nor its journal changed; return the problems as text, the one about the
    journal first (an unreadable file lists first why it cannot be read)."""
    journal = Path(journal_path(path))
    before = _sha(path)
    journal_before = journal.read_bytes() if journal.is_file() and not journal.is_symlink() else None
    tf = open_file(path)
    try:
        about_journal = [str(p) for p in tf.problems if p.rule == RULE]
        assert len(about_journal) == 1 and (tf.readable or tf.problems[0].is_error), tf.problems
        problems = about_journal + [str(p) for p in tf.problems if p.rule != RULE]
    finally:
        tf.close()
    assert _sha(path) == before
    assert os.path.lexists(journal)
    if journal_before is not None:
        assert journal.read_bytes() == journal_before
    return problems


# -- journals that must be ignored --------------------------------------------------------------------------
@needs_corpus
@pytest.mark.parametrize("sample", ["zt_v1.0/ztensor-1.0.1/dtypes_2d.zt",
                                    "safetensors/safetensors-0.8.0/dtypes_2d.safetensors"])
def test_a_journal_beside_another_format_is_ignored(tmp_path: Path, sample: str) -> None:
    path = tmp_path / Path(sample).name
    path.write_bytes((CORPUS / sample).read_bytes())
    _put_journal(path, json.dumps(_fields(b"", 0)))  # the journal: it once cut the file to 0 bytes
    problems = _opened_unchanged(path)
    assert "ignored" in problems[0] and "not zTensor v2" in problems[0] and journal_path(path).endswith(
        problems[0].split("append journal ")[1].split(" ")[0])
    assert repair(path).refused and (CORPUS / sample).read_bytes() == path.read_bytes()


JOURNALS: dict[str, tuple[Callable[[bytes], str | bytes], str]] = {
    "negative": (lambda old: json.dumps(_fields(old, -5)), "old_length is -5, a negative length"),
    "Infinity": (lambda old: json.dumps(_fields(old)).replace(str(len(old)), "Infinity", 1), "Infinity"),
    "overflowing float": (lambda old: json.dumps(_fields(old)).replace(str(len(old)), "1e400", 1), "not an integer"),
    "huge": (lambda old: json.dumps(_fields(old, 10 ** 40)), "past the end of the file"),
    "text length": (lambda old: json.dumps(_fields(old, str(len(old)))), "not an integer"),
    "boolean length": (lambda old: json.dumps(_fields(old, True)), "not an integer"),
    "fractional length": (lambda old: json.dumps(_fields(old, len(old) + 0.5)), "not an integer"),
    "not JSON": (lambda old: "{garbage", "not JSON"),
    "not UTF-8": (lambda old: b"\xff\xfe{}", "not JSON"),
    "a list": (lambda old: "[1, 2]", "not a JSON object"),
    "a field missing": (lambda old: json.dumps({"old_length": len(old)}), "not a JSON object with the fields"),
    "deeply nested": (lambda old: "[" * 2000 + "]" * 2000, "not JSON"),
    "bad footer hash": (lambda old: json.dumps({**_fields(old), "old_footer": "xyz"}), "16 lowercase hex digits"),
    "too long": (lambda old: json.dumps({**_fields(old), "pad": "x" * MAX_JOURNAL_BYTES}), "longer than 4,096"),
    "empty": (lambda old: b"", "not JSON"),
    "not on a footer": (lambda old: json.dumps(_fields(old, len(old) - 8)), "no sound zTensor v2 footer ends"),
    "another footer": (lambda old: json.dumps({**_fields(old), "old_footer": "0123456789abcdef"}),
                       "not the one it recorded"),
}


@pytest.mark.parametrize("case", sorted(JOURNALS))
def test_an_unusable_journal_is_ignored_and_repair_refuses_it(tmp_path: Path, case: str) -> None:
    path = tmp_path / "m.zt"
    sound = _interrupted(path)
    make, reason = JOURNALS[case]
    journal = _put_journal(path, make(sound))
    problems = _opened_unchanged(path)
    assert problems[0].startswith("warning: the append journal") and "ignored" in problems[0], problems
    assert reason in problems[0], problems[0]
    before = _sha(path)
    outcome = repair(path)
    assert outcome.refused and reason in outcome.message
    assert _sha(path) == before and journal.exists()


def test_a_folder_or_a_link_as_journal_is_ignored(tmp_path: Path) -> None:
    path = tmp_path / "m.zt"
    sound = _interrupted(path)
    journal = Path(journal_path(path))
    journal.unlink()
    journal.mkdir()
    assert "it is a folder, not a regular file" in _opened_unchanged(path)[0]
    assert repair(path).refused and journal.is_dir()
    journal.rmdir()
    if not hasattr(os, "symlink"):
        return
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps(_fields(sound)))  # would apply, but a link is nobody's journal
    journal.symlink_to(target)
    assert "a symbolic link, not a regular file" in _opened_unchanged(path)[0]
    journal.unlink()
    journal.symlink_to(tmp_path / "missing")
    assert "a symbolic link" in _opened_unchanged(path)[0]


@no_fifo
def test_a_fifo_as_journal_neither_hangs_nor_changes_anything(tmp_path: Path) -> None:
    path = tmp_path / "m.zt"
    _interrupted(path)
    journal = Path(journal_path(path))
    journal.unlink()
    os.mkfifo(journal)
    before = _sha(path)
    script = textwrap.dedent(f"""
        from ztviewer.codec.interrupted_append import RULE, repair
        from ztviewer.codec.registry import open_file
        tf = open_file({str(path)!r})
        print(tf.problems[0])
        print(repair({str(path)!r}).message)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=REPO,
                          check=False)  # the timeout is the hang guard: opening a FIFO blocks until a writer comes
    assert done.returncode == 0, done.stderr
    assert "a FIFO (named pipe), not a regular file" in done.stdout and "refused" in done.stdout
    assert _sha(path) == before


def test_a_journal_a_running_save_holds_is_left_alone(tmp_path: Path) -> None:
    from ztviewer.codec.portable import held_by_nobody, lock_for_writing

    path = tmp_path / "m.zt"
    _interrupted(path)
    fd = os.open(journal_path(path), os.O_RDONLY)
    try:
        lock_for_writing(fd)
        if held_by_nobody(journal_path(path)) is None:
            pytest.skip("no advisory locks on this system")
        assert "appending to the file right now" in _opened_unchanged(path)[0]
        before = _sha(path)
        assert repair(path).refused and _sha(path) == before
    finally:
        os.close(fd)


# -- a stale journal -----------------------------------------------------------------------------------------
def test_a_stale_journal_beside_a_sound_two_generation_file_costs_nothing(tmp_path: Path) -> None:
    path = tmp_path / "m.zt"
    first = _v2(path)
    from ztviewer.codec.writers.zt_v2_append import manifest_range

    tf = open_file(path)
    offset, length = manifest_range(tf)
    tf.close()
    import cbor2

    root = cbor2.loads(first[offset:offset + length])
    root["attributes"] = {"note": "second"}
    append_manifest(path, dumps_deterministic(root), 65536)
    both = path.read_bytes()
    _put_journal(path, json.dumps(_fields(first)))  # what a crash after the append's last fsync leaves
    problems = _opened_unchanged(path)
    assert "stale and ignored" in problems[0] and path.read_bytes() == both
    tf = open_file(path)
    assert tf.attributes == {"note": "second"} and len(tf.extra["_generations"]) == 1
    tf.close()
    outcome = repair(path)
    assert not outcome.refused and "stale journal" in outcome.message
    assert path.read_bytes() == both and not os.path.lexists(journal_path(path))


# -- the interrupted append itself ---------------------------------------------------------------------------
def test_an_interrupted_append_opens_as_the_previous_generation_without_a_write(tmp_path: Path) -> None:
    path = tmp_path / "m.zt"
    sound = _interrupted(path)
    damaged = path.read_bytes()
    tf = open_file(path)
    try:
        first, second = tf.problems[:2]
        assert not first.is_error and "interrupted append" in first.message and first.offset == len(sound)
        assert f"{len(damaged) - len(sound):,} bytes after byte {len(sound):,}" in first.message
        assert "ztviewer repair FILE" in first.message
        assert second.is_error and "the end of the file is not a sound footer" in second.message
        assert tf.readable and tf.attributes == {"note": "first"}
        assert tf.tensor("w").components["data"].offset < len(sound)
        assert any(r.kind == "interrupted-append" and (r.offset, r.end) == (len(sound), len(damaged))
                   for r in tf.regions)
        report = check_file(tf)
        assert not report.ok and report.tensors_decoded == 2
        assert not any("padding" in p.message for p in report.problems)  # the partial bytes are named, not padding
    finally:
        tf.close()
    assert path.read_bytes() == damaged
    outcome = repair(path)
    assert not outcome.refused and outcome.removed == len(damaged) - len(sound) and "rolled back" in outcome.message
    assert path.read_bytes() == sound and not os.path.lexists(journal_path(path))
    assert not repair(path).refused and "nothing to repair" in repair(path).message
    tf = open_file(path)
    assert not tf.problems
    tf.close()


def test_repair_refuses_a_file_it_cannot_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.zt"
    _interrupted(path)
    before = _sha(path)
    real_open = os.open

    def read_only(name: str, flags: int, *args: int) -> int:  # a read-only file (root would write it anyway)
        if flags & os.O_RDWR and os.fspath(name) == str(path):
            raise PermissionError(13, "Permission denied", name)
        return real_open(name, flags, *args)

    monkeypatch.setattr(os, "open", read_only)
    outcome = repair(path)
    monkeypatch.undo()
    assert outcome.refused and "cannot be opened for writing (Permission denied)" in outcome.message
    assert _sha(path) == before and os.path.lexists(journal_path(path))


# -- what the writer does with what it finds ----------------------------------------------------------------
@pytest.mark.parametrize("kind", ["folder", "fifo"])
def test_an_append_refuses_a_journal_name_taken_by_something_else(tmp_path: Path, kind: str) -> None:
    if kind == "fifo" and not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = tmp_path / "m.zt"
    sound = _v2(path)
    journal = Path(journal_path(path))
    journal.mkdir() if kind == "folder" else os.mkfifo(journal)
    tf = open_file(path)
    from ztviewer.codec.writers.zt_v2_append import manifest_range

    offset, length = manifest_range(tf)
    tf.close()
    with pytest.raises(EditRefused, match="not an append journal"):
        append_manifest(path, sound[offset:offset + length], 65536)
    assert path.read_bytes() == sound and os.path.lexists(journal)
    drop_stale_journal(path)  # after a whole-file save: what this program did not write stays
    assert os.path.lexists(journal)


def test_saving_edits_over_an_interrupted_file_writes_it_whole_and_sound(tmp_path: Path) -> None:
    """The tab shows the previous generation; saving over the file rewrites it whole from that (never appending
    after the partial bytes), and the journal, no longer about anything, goes."""
    import ztensor

    from ztviewer.codec.edit import SetFileAttribute
    from ztviewer.codec.save import edit_file

    path = tmp_path / "m.zt"
    _interrupted(path)
    result = edit_file(path, [SetFileAttribute("note", "second")])
    assert result.appended is None and not os.path.lexists(journal_path(path))
    ztensor.verify(str(path), deep=True)
    assert ztensor.open(str(path))["w"].tobytes() == ARRAYS["w"].tobytes()
    tf = open_file(path)
    try:
        assert tf.attributes == {"note": "second"} and not tf.problems
    finally:
        tf.close()


def test_repair_releases_the_callers_maps_where_a_mapped_file_cannot_be_cut(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.zt"
    sound = _interrupted(path)
    real_truncate = os.ftruncate
    released: list[bool] = []

    def mapped_until_released(fd: int, length: int) -> None:  # what Windows does while a map is open
        if not released:
            raise PermissionError(13, "The requested operation cannot be performed on a mapped file")
        real_truncate(fd, length)

    monkeypatch.setattr(os, "ftruncate", mapped_until_released)
    assert not repair(path, release=lambda: released.append(True)).refused
    assert released == [True] and path.read_bytes() == sound
    released.clear()
    _interrupted(path)
    outcome = repair(path)  # nobody to release: refused, nothing changed
    assert outcome.refused and "could not be cut back" in outcome.message and len(path.read_bytes()) > len(sound)
