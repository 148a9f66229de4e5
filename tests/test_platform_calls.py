"""Issue 14: no call another platform lacks. ``mypy --platform win32 / darwin`` reports none (when mypy is
installed: the dev extra), and, without mypy, a scan of the source finds no direct use of the POSIX-only calls
outside ``ztviewer/codec/portable.py`` (which looks them up by feature test)."""
from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "ztviewer"
POSIX_ONLY_OS = {"pread", "pwrite", "copy_file_range", "sendfile", "splice", "posix_fadvise", "posix_fallocate",
                 "getuid", "geteuid", "getgid", "fork", "killpg", "setsid", "O_DIRECTORY", "O_CLOEXEC", "O_NOFOLLOW",
                 "statvfs", "sched_getaffinity", "getloadavg", "mkfifo", "uname"}
POSIX_ONLY_MODULES = {"fcntl", "pwd", "grp", "resource", "termios", "posix"}


def _direct_uses(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "os" \
                and node.attr in POSIX_ONLY_OS:
            found.append(f"{path.name}:{node.lineno} os.{node.attr}")
        if isinstance(node, ast.Import | ast.ImportFrom):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            found += [f"{path.name}:{node.lineno} import {n}" for n in names if n.split(".")[0] in POSIX_ONLY_MODULES]
    return found


def test_no_direct_posix_only_calls_outside_the_portability_module():
    uses = [use for path in sorted(PACKAGE.rglob("*.py")) if path.name != "portable.py"
            for use in _direct_uses(path)]
    assert uses == []


@pytest.mark.slow
@pytest.mark.parametrize("platform", ["win32", "darwin"])
def test_mypy_finds_no_attribute_the_platform_lacks(platform, tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed (pip install -e '.[dev]')")
    done = subprocess.run([sys.executable, "-m", "mypy", "--platform", platform, "--cache-dir", str(tmp_path),
                           "--no-error-summary", str(PACKAGE)], capture_output=True, text=True, timeout=900,
                          check=False)
    missing = [line for line in done.stdout.splitlines() if "Module has no attribute" in line]
    assert missing == [], "\n".join(missing)
    assert done.returncode in (0, 1) and "Traceback" not in done.stderr, done.stderr  # mypy itself ran
