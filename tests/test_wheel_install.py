"""Issue 14: a normal install works. The wheel and sdist are built (``python -m build``), the wheel is installed
into a fresh venv, and the installed ``ztviewer`` opens every demo file (smoke mode) and installs/uninstalls the
desktop integration into a temporary XDG tree.

The fresh venv gets only the wheel; its dependencies come from this interpreter's site-packages through a
``.pth`` line (no download, no build of numpy or Qt), and ztviewer itself is imported from the venv, which the
test checks.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

from ztviewer.file_types import MIME_TYPES

ROOT = Path(__file__).resolve().parents[1]
RESOURCES = sorted(str(p.relative_to(ROOT)).replace(os.sep, "/")
                   for p in (ROOT / "ztviewer" / "resources").rglob("*") if p.is_file())


def _run(argv, **kwargs) -> subprocess.CompletedProcess:
    return subprocess.run(argv, capture_output=True, text=True, timeout=600, check=False, **kwargs)


@pytest.fixture(scope="module")
def dist(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    source = tmp_path_factory.mktemp("src") / "ztviewer"
    # build from a clean copy of the tracked files: no egg-info or build folders of the checkout leak in
    tracked = _run(["git", "ls-files", "-z"], cwd=ROOT)
    if tracked.returncode != 0:
        pytest.skip("not a git checkout: cannot tell which files make the sdist")
    for name in filter(None, tracked.stdout.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    built = _run([sys.executable, "-m", "build", "--outdir", str(out), str(source)])
    if built.returncode != 0 and "No matching distribution" in built.stdout + built.stderr:
        pytest.skip("the build backend (setuptools>=77) cannot be fetched here: " + built.stderr[-300:])
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def installed(dist, tmp_path_factory) -> Path:
    """A fresh venv holding the wheel; returns its ``bin`` folder."""
    venv = tmp_path_factory.mktemp("venv") / "v"
    assert _run([sys.executable, "-m", "venv", "--without-pip", str(venv)]).returncode == 0
    python = venv / "bin" / "python"
    purelib = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                        ).stdout.strip())
    (purelib / "shared-dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    wheel = next(dist.glob("ztviewer-*.whl"))
    done = _run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                 str(wheel)])
    assert done.returncode == 0, done.stdout + done.stderr
    return venv / "bin"


def _env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "ZTVIEWER_NEW_INSTANCE")}
    env.update(QT_QPA_PLATFORM="offscreen", XDG_DATA_HOME=str(home / "data"), XDG_CONFIG_HOME=str(home / "config"),
               XDG_DATA_DIRS=str(home / "data") + ":/usr/share", HOME=str(home), **extra)
    return env


@pytest.mark.slow
def test_wheel_and_sdist_carry_the_resources_and_the_license(dist):
    wheel = zipfile.ZipFile(next(dist.glob("ztviewer-*.whl")))
    names = set(wheel.namelist())
    assert set(RESOURCES) <= names, sorted(set(RESOURCES) - names)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    metadata = next(wheel.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: Apache-2.0" in metadata
    with tarfile.open(next(dist.glob("ztviewer-*.tar.gz"))) as sdist:
        members = {m.name.split("/", 1)[1] for m in sdist.getmembers() if "/" in m.name}
    assert set(RESOURCES) <= members and "LICENSE" in members


@pytest.mark.slow
def test_wheel_is_typed_and_described_without_relative_images_and_the_sdist_carries_no_partial_tests(dist):
    wheel = zipfile.ZipFile(next(dist.glob("ztviewer-*.whl")))
    names = set(wheel.namelist())
    assert "ztviewer/py.typed" in names
    metadata = next(wheel.read(n).decode() for n in names if n.endswith(".dist-info/METADATA"))
    description = metadata.split("\n\n", 1)[1]
    assert "ztviewer" in description and not re.findall(r"\]\((?!https?://)", description), description[:500]
    assert "Classifier: Typing :: Typed" in metadata and "Author: ztviewer maintainers" in metadata
    with tarfile.open(next(dist.glob("ztviewer-*.tar.gz"))) as sdist:
        tests = [m.name for m in sdist.getmembers() if "/tests/" in m.name]
    assert tests == []      # all of them need the checkout (corpus, scripts, .ci): none rather than 15 of 200


@pytest.mark.slow
def test_installed_wheel_opens_every_demo_file(installed, tmp_path):
    where = _run([str(installed / "python"), "-c", "import ztviewer; print(ztviewer.__file__)"], cwd=tmp_path)
    assert where.stdout.startswith(str(installed.parent)), where.stdout + where.stderr  # the wheel, not the checkout
    done = _run([str(installed / "ztviewer"), "--demo"], cwd=tmp_path, env=_env(tmp_path, ZTVIEWER_SMOKE_TEST="1"))
    assert done.returncode == 0, done.stdout + done.stderr
    opened = [line for line in done.stdout.splitlines() if line.startswith("ztviewer-smoke: opened")]
    assert len(opened) == 4 and all(line.endswith("errors=0") for line in opened), done.stdout
    assert "tabs=4" in done.stdout


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which("xdg-mime"), reason="xdg-utils not installed (.ci/run installs it)")
def test_installed_wheel_installs_and_uninstalls_the_desktop_integration(installed, tmp_path):
    env = _env(tmp_path)
    (tmp_path / "config").mkdir()
    done = _run([str(installed / "ztviewer"), "--install-desktop"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    entry = (tmp_path / "data" / "applications" / "ztviewer.desktop").read_text()
    assert f"Exec={installed / 'ztviewer'} %F" in entry
    assert (tmp_path / "data" / "icons" / "hicolor" / "256x256" / "apps" / "ztviewer.png").is_file()
    mimeapps = (tmp_path / "config" / "mimeapps.list").read_text()
    assert all(f"{mime}=ztviewer.desktop" in mimeapps for mime in MIME_TYPES), mimeapps
    sample = next((installed.parent / "lib").rglob("resources/samples/tiny-llama.zt"))
    opened = _run([str(installed / "ztviewer"), str(sample)], cwd=tmp_path,
                  env={**env, "ZTVIEWER_SMOKE_TEST": "1", "ZTVIEWER_NEW_INSTANCE": "1"})
    assert "title='tiny-llama.zt — ztviewer'" in opened.stdout, opened.stdout + opened.stderr
    done = _run([str(installed / "ztviewer"), "--uninstall-desktop"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    left = [p for p in (tmp_path / "data").rglob("*") if p.is_file() and "ztviewer" in p.name]
    assert left == []
    mimeapps = tmp_path / "config" / "mimeapps.list"     # xdg-mime wrote only ztviewer's entries: removed
    assert not mimeapps.exists() or "ztviewer.desktop" not in mimeapps.read_text()
