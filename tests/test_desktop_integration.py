"""Issue 7: the .desktop entry validates; installing into a temporary XDG_DATA_HOME makes the corpus files
resolve to our MIME types by content (also renamed) and ztviewer the default handler."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests._corpus import CORPUS, corpus_available
from ztviewer import desktop
from ztviewer.paths import LINUX_DESKTOP

needs_tools = pytest.mark.skipif(
    not all(shutil.which(t) for t in ("xdg-mime", "update-mime-database")),
    reason="xdg-utils / shared-mime-info not installed (.ci/run installs them)")


@pytest.mark.skipif(not shutil.which("desktop-file-validate"), reason="desktop-file-utils not installed")
def test_desktop_entry_validates():
    proc = subprocess.run(["desktop-file-validate", str(LINUX_DESKTOP / "ztviewer.desktop")],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "error" not in proc.stdout


@pytest.fixture
def xdg_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_DATA_DIRS", str(tmp_path / "data") + ":/usr/share")
    (tmp_path / "config").mkdir()
    return tmp_path / "data"


def _filetype(path: Path) -> str:
    return subprocess.run(["xdg-mime", "query", "filetype", str(path)], capture_output=True,
                          text=True).stdout.strip()


@needs_tools
@pytest.mark.skipif(not corpus_available(), reason=f"shared corpus not found at {CORPUS}")
def test_install_registers_types_by_content(xdg_home, tmp_path):
    installed = desktop.install(xdg_home)
    assert xdg_home / "applications" / "ztviewer.desktop" in installed.files and installed.not_default is None
    samples = {
        "zt_v0.1/ztensor-0.1.4/shapes.zt": "application/x-ztensor",
        "zt_v1.0/ztensor-1.0.1/shapes.zt": "application/x-ztensor",
        "zt_v1.x/ztensor-1.2.3/shapes.zt": "application/x-ztensor",
        "zt_v2/ztensor-2.1.2/shapes_zstd.zt": "application/x-ztensor",
        "safetensors/safetensors-0.8.0/shapes.safetensors": "application/x-safetensors",
        "blz/mat_6x8_exact.blz": "application/x-blz-tensor-train",
    }
    for relative, mime in samples.items():
        assert _filetype(CORPUS / relative) == mime, relative
        renamed = tmp_path / (Path(relative).stem + ".data")
        shutil.copyfile(CORPUS / relative, renamed)
        assert _filetype(renamed) == mime, f"{relative} renamed"
    for mime in desktop.MIME_TYPES:
        default = subprocess.run(["xdg-mime", "query", "default", mime], capture_output=True, text=True)
        assert default.stdout.strip() == "ztviewer.desktop"


@needs_tools
def test_uninstall_removes_everything(xdg_home):
    desktop.install(xdg_home)
    removed = desktop.uninstall(xdg_home).files
    assert removed
    assert not (xdg_home / "applications" / "ztviewer.desktop").exists()
    assert not (xdg_home / "mime" / "packages" / desktop.MIME_XML).exists()
    # the tools' caches of nothing and the folders install made go too; xdg-mime's mimeapps.list held only ours
    assert sorted(xdg_home.parent.rglob("*")) == [xdg_home.parent / "config", xdg_home], \
        sorted(xdg_home.parent.rglob("*"))


@needs_tools
def test_cli_install_desktop_flag(xdg_home):
    env = dict(os.environ, XDG_DATA_HOME=str(xdg_home))
    proc = subprocess.run([sys.executable, "-m", "ztviewer", "--install-desktop"], capture_output=True,
                          text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    entry = (xdg_home / "applications" / "ztviewer.desktop").read_text()
    assert "MimeType=application/x-ztensor;application/x-safetensors;application/x-blz-tensor-train;" in entry
    assert "%F" in entry
