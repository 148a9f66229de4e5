"""Issue 31 through the command line: ``info``, ``check``, ``export`` and ``diff`` never change a file, whatever
lies beside it as an append journal (compared by hash before and after), and ``ztviewer repair`` rolls back an
interrupted append to the exact bytes before it (exit 0), says there is nothing to do (exit 0), refuses with the
reason (exit 1) or names a usage error (exit 2)."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from tests._corpus import CORPUS, corpus_available
from ztviewer.cli import main
from ztviewer.codec.append_journal import footer_hash, journal_path
from ztviewer.codec.arrays import save_arrays
from ztviewer.codec.edit import SetFileAttribute
from ztviewer.codec.save import edit_file

REPO = Path(__file__).resolve().parents[1]
needs_corpus = pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
ARRAYS = {"w": np.arange(1000, dtype=np.float32), "b": np.ones(7, np.int8)}


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _journal_text(old_length: object, old_footer: bytes = b"") -> str:
    return json.dumps({"old_length": old_length, "old_footer": footer_hash(old_footer[-40:]),
                       "new_length": 10, "new_footer": "0" * 16})


def _copy(sample: str) -> Callable[[Path], tuple[Path, bytes]]:
    def make(folder: Path) -> tuple[Path, bytes]:
        if not corpus_available():
            pytest.skip(f"shared corpus not found at {CORPUS}")
        path = folder / Path(sample).name
        path.write_bytes((CORPUS / sample).read_bytes())
        return path, b""
    return make


def _interrupted_v2(folder: Path) -> tuple[Path, bytes]:
    """A sound v2 file with the start of an append that never finished after it; returns it and the sound bytes."""
    path = folder / "m.zt"
    save_arrays(path, ARRAYS, to="zt-v2")
    sound = path.read_bytes()
    with open(path, "ab") as out:
        out.write(bytes(3000) + b"\x01partial")
    return path, sound


FILES = {"zt v1.0": _copy("zt_v1.0/ztensor-1.0.1/dtypes_2d.zt"),
         "safetensors": _copy("safetensors/safetensors-0.8.0/dtypes_2d.safetensors"),
         "interrupted v2": _interrupted_v2}


def _folder(journal: Path) -> None:
    journal.mkdir()


def _fifo(journal: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    os.mkfifo(journal)


JOURNALS: dict[str, Callable[[Path, bytes], None]] = {
    "the issue's (old_length 0)": lambda j, sound: j.write_text(_journal_text(0)),
    "old_length -5": lambda j, sound: j.write_text(_journal_text(-5, sound)),
    "old_length Infinity": lambda j, sound: j.write_text(_journal_text(0, sound).replace("0,", "Infinity,", 1)),
    "huge old_length": lambda j, sound: j.write_text(_journal_text(1 << 70, sound)),
    "not JSON": lambda j, sound: j.write_text("not json"),
    "a folder": lambda j, sound: _folder(j),
}


def _run_every_reader(path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    """info, check, export and diff on ``path``; returns what they printed (no traceback, no internal error)."""
    from ztviewer.codec.registry import open_file

    tf = open_file(path)
    name = tf.tensors[0].name if tf.tensors else "w"  # an unreadable file: export says so
    tf.close()
    reference = tmp_path / "reference" / path.name
    reference.parent.mkdir()
    reference.write_bytes(path.read_bytes())
    codes = [main(["info", str(path)]), main(["check", str(path)]),
             main(["export", str(path), name, "-o", str(tmp_path / "out.npy")]),
             main(["diff", str(reference), str(path)])]
    printed = capsys.readouterr()
    text = printed.out + printed.err
    assert "Traceback" not in text and "internal error" not in text, text
    assert all(code in (0, 1, 2) for code in codes), (codes, text)  # 2: diff of an unreadable file
    return text


@pytest.mark.parametrize("journal_kind", sorted(JOURNALS))
@pytest.mark.parametrize("file_kind", sorted(FILES))
def test_reading_commands_never_change_a_file_beside_a_bad_journal(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                                   file_kind: str, journal_kind: str) -> None:
    path, sound = FILES[file_kind](tmp_path)
    journal = Path(journal_path(path))
    JOURNALS[journal_kind](journal, sound)
    before = _sha(path)
    text = _run_every_reader(path, tmp_path, capsys)
    assert _sha(path) == before and os.path.lexists(journal)
    assert "the append journal" in text and "is ignored" in text
    assert main(["repair", str(path)]) == 1
    assert "refused" in capsys.readouterr().err and _sha(path) == before


def test_a_stale_journal_keeps_both_generations_byte_for_byte(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "m.zt"
    save_arrays(path, ARRAYS, to="zt-v2", attributes={"note": "first"})
    first = path.read_bytes()
    edit_file(path, [SetFileAttribute("note", "second")])  # appended: a second generation
    both = path.read_bytes()
    assert len(both) > len(first) and both[:len(first)] == first
    Path(journal_path(path)).write_text(_journal_text(len(first), first))
    text = _run_every_reader(path, tmp_path, capsys)
    assert path.read_bytes() == both and "stale and ignored" in text and 'note: "second"' in text
    assert main(["repair", str(path)]) == 0
    assert "stale journal" in capsys.readouterr().out
    assert path.read_bytes() == both and not os.path.lexists(journal_path(path))


def test_repair_rolls_an_interrupted_append_back_to_the_exact_bytes(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    import ztensor

    path, sound = _interrupted_v2(tmp_path)
    damaged = path.read_bytes()
    Path(journal_path(path)).write_text(_journal_text(len(sound), sound))
    text = _run_every_reader(path, tmp_path, capsys)
    assert path.read_bytes() == damaged
    assert "an interrupted append was found" in text and "ztviewer repair FILE" in text
    assert main(["check", str(path)]) == 1  # the file stays invalid until repaired
    capsys.readouterr()
    assert main(["repair", str(path)]) == 0
    out = capsys.readouterr().out
    assert f"removed the {len(damaged) - len(sound):,} bytes after byte {len(sound):,}" in out
    assert path.read_bytes() == sound and not os.path.lexists(journal_path(path))
    ztensor.verify(str(path), deep=True)
    assert main(["check", str(path)]) == 0
    assert main(["repair", str(path)]) == 0 and "nothing to repair" in capsys.readouterr().out


def test_repair_usage_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["repair"]) == 2
    assert main(["repair", str(tmp_path / "missing.zt")]) == 2
    assert "no such file" in capsys.readouterr().err
    assert main(["repair", str(tmp_path)]) == 2
    assert "not a regular file" in capsys.readouterr().err


def test_repair_is_in_the_help_and_the_readme_with_the_same_words(capsys: pytest.CaptureFixture[str]) -> None:
    from ztviewer.cli_repair import HELP

    assert main(["--help"]) == 0
    assert "repair" in capsys.readouterr().out
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    assert f"repair {HELP}" in readme      # the command block is --help itself (scripts/readme_commands.py)


@needs_corpus
def test_a_fifo_journal_hangs_no_command(tmp_path: Path) -> None:
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs on this system")
    path = tmp_path / "v.zt"
    path.write_bytes((CORPUS / "zt_v1.0/ztensor-1.0.1/dtypes_2d.zt").read_bytes())
    os.mkfifo(journal_path(path))
    before = _sha(path)
    commands = [["info", str(path)], ["check", str(path)], ["export", str(path), "t_float32", "-o",
                str(tmp_path / "x.npy")], ["diff", str(CORPUS / "zt_v1.0/ztensor-1.0.1/dtypes_2d.zt"), str(path)],
                ["repair", str(path)]]
    for command in commands:
        done = subprocess.run([sys.executable, "-m", "ztviewer", *command], capture_output=True, text=True,
                              timeout=120, cwd=REPO, check=False)  # the timeout is the hang guard
        assert done.returncode in (0, 1), (command, done.stderr)
        assert "FIFO (named pipe), not a regular file" in done.stdout + done.stderr, command
    assert _sha(path) == before
