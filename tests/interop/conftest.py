"""Reference readers for the interop tests.

ztensor 0.1.4, 1.0.1, 1.0.2 and 1.2.3 cannot share one environment, so each gets its own venv under
``$ZTVIEWER_INTEROP_VENVS`` (default ``~/.cache/ztviewer-interop``), named ``ztensor-<version>`` and created
on first use with ``python -m venv`` + ``pip install ztensor==<version> numpy ml-dtypes``. When pip cannot
get the package the tests skip, with pip's error as the reason. HF safetensors runs in the test process.
"""
from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
READER_SCRIPT = HERE / "zt_reader_script.py"


def venv_root() -> Path:
    return Path(os.environ.get("ZTVIEWER_INTEROP_VENVS", Path.home() / ".cache" / "ztviewer-interop"))


def ztensor_python(version: str) -> Path:
    """The python of a venv holding ztensor==version (created once); skips the test when pip fails."""
    root = venv_root()
    root.mkdir(parents=True, exist_ok=True)
    venv = root / f"ztensor-{version}"
    python = venv / "bin" / "python"
    marker = venv / ".ztviewer-ready"
    with open(root / f".ztensor-{version}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if marker.exists() and python.exists():
            return python
        steps = [[sys.executable, "-m", "venv", str(venv)],
                 [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check",
                  f"ztensor=={version}", "numpy", "ml-dtypes"]]
        for step in steps:
            try:
                done = subprocess.run(step, capture_output=True, text=True, timeout=900, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                pytest.skip(f"cannot prepare ztensor {version}: {exc}")
            if done.returncode != 0:
                reason = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["unknown error"]
                pytest.skip(f"pip could not install ztensor=={version}: {reason[0]}")
        marker.write_text(version)
    return python


def run_reference(version: str, paths: list[Path]) -> dict[str, dict]:
    """What ztensor==version reads from each file (see zt_reader_script.py)."""
    python = ztensor_python(version)
    done = subprocess.run([str(python), str(READER_SCRIPT), *map(str, paths)], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="session")
def reference():
    return run_reference
