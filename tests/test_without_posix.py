"""The corpus, convert, edit and save tests again, in a process where the POSIX-only calls do not exist
(``os.pread``, ``os.copy_file_range``, ``os.sendfile``, ``os.splice``, ``fcntl``…: see ``tests/_no_posix.py``),
as on Windows: every read and copy must take its portable fallback."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests._no_posix import ENV

ROOT = Path(__file__).resolve().parents[1]
RERUN = [
    "tests/codec/test_source.py", "tests/codec/test_portable.py", "tests/codec/test_convert.py",
    "tests/codec/test_edit.py", "tests/codec/test_save.py", "tests/codec/test_save_crash.py",
    "tests/codec/writers/test_write_corpus.py", "tests/codec/multifile/test_multifile_open.py",
    "tests/test_corpus_acceptance.py",
    "tests/gui/test_edit_save.py",
]
PROBE = ("import os, sys\n"
         "assert not hasattr(os, 'pread') and sys.modules['fcntl'] is None, 'the calls were not removed'\n")


@pytest.mark.slow
def test_corpus_convert_edit_and_save_run_without_posix_only_calls(tmp_path):
    if os.environ.get(ENV) == "1":
        pytest.skip("already running without them")
    probe = tmp_path / "test_probe.py"
    probe.write_text(PROBE + "def test_removed():\n    import ztviewer.codec.portable\n")
    env = {**os.environ, ENV: "1", "QT_QPA_PLATFORM": "offscreen"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-x", "--rootdir", str(ROOT),
         "-c", str(ROOT / "pyproject.toml"), "--confcutdir", str(ROOT), *RERUN, str(probe)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )
    summary = result.stdout.strip().splitlines()[-1] if result.stdout.strip() else ""
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in summary and "failed" not in summary, summary
