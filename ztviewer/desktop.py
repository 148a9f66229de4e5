"""User-level desktop integration on Linux: MIME types, .desktop entry, icons, default handler.

``ztviewer --install-desktop`` / ``--uninstall-desktop`` and ``packaging/linux/install.sh`` all land here.
Everything goes under ``$XDG_DATA_HOME`` (default ``~/.local/share``); nothing needs root.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from .paths import ICONS, LINUX_PACKAGING

DESKTOP_ID = "ztviewer.desktop"
MIME_XML = "ztviewer-mime.xml"
MIME_TYPES = ("application/x-ztensor", "application/x-safetensors", "application/x-blz-tensor-train")
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def _exec_command() -> str:
    """The command the .desktop entry runs: the installed console script if there is one, else this Python."""
    script = shutil.which("ztviewer")
    if script:
        return script
    return f"{sys.executable} -m ztviewer"


def _run(*cmd: str) -> None:
    if shutil.which(cmd[0]):
        subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _installed_paths(home: Path) -> list[Path]:
    paths = [home / "mime" / "packages" / MIME_XML, home / "applications" / DESKTOP_ID,
             home / "icons" / "hicolor" / "scalable" / "apps" / "ztviewer.svg"]
    paths += [home / "icons" / "hicolor" / f"{s}x{s}" / "apps" / "ztviewer.png" for s in PNG_SIZES]
    return paths


def install(home: Path | None = None) -> list[Path]:
    """Install MIME types, the desktop entry and icons; make ztviewer the default for its types."""
    home = home or data_home()
    mime_dir, apps_dir = home / "mime" / "packages", home / "applications"
    for folder in (mime_dir, apps_dir):
        folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(LINUX_PACKAGING / MIME_XML, mime_dir / MIME_XML)
    entry = (LINUX_PACKAGING / DESKTOP_ID).read_text()
    command = _exec_command()
    entry = entry.replace("Exec=ztviewer %F", f"Exec={command} %F")
    entry = entry.replace("TryExec=ztviewer", f"TryExec={command.split()[0]}")
    (apps_dir / DESKTOP_ID).write_text(entry)
    svg_dir = home / "icons" / "hicolor" / "scalable" / "apps"
    svg_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ICONS / "ztviewer.svg", svg_dir / "ztviewer.svg")
    for size in PNG_SIZES:
        png = ICONS / f"ztviewer-{size}.png"
        if png.exists():
            target = home / "icons" / "hicolor" / f"{size}x{size}" / "apps"
            target.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(png, target / "ztviewer.png")
    _refresh(home)
    for mime in MIME_TYPES:
        _run("xdg-mime", "default", DESKTOP_ID, mime)
    return [p for p in _installed_paths(home) if p.exists()]


def uninstall(home: Path | None = None) -> list[Path]:
    home = home or data_home()
    removed = []
    for path in _installed_paths(home):
        if path.exists():
            path.unlink()
            removed.append(path)
    _refresh(home)
    return removed


def _refresh(home: Path) -> None:
    _run("update-mime-database", str(home / "mime"))
    _run("update-desktop-database", str(home / "applications"))
    _run("gtk-update-icon-cache", "-q", "-t", str(home / "icons" / "hicolor"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    action = argv[0] if argv else "install"
    if action not in ("install", "uninstall"):
        print("usage: python -m ztviewer.desktop [install|uninstall]", file=sys.stderr)
        return 2
    paths = install() if action == "install" else uninstall()
    verb = "installed" if action == "install" else "removed"
    for path in paths:
        print(f"{verb} {path}")
    if action == "install":
        print("ztviewer is now the default application for .zt, .safetensors and .blz files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
