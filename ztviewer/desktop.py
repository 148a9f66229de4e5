"""User-level desktop integration on Linux: MIME types, .desktop entry, icons, default handler.

``ztviewer --install-desktop`` / ``--uninstall-desktop`` and ``packaging/linux/install.sh`` all land here.
Files go under ``$XDG_DATA_HOME`` (default ``~/.local/share``), default handlers in ``$XDG_CONFIG_HOME/mimeapps.list``;
nothing needs root. The entry runs the interpreter running this, which has ztviewer; an install that would leave
an entry that cannot start (ztviewer reached only through ``PYTHONPATH``, resources missing) is refused before
anything is written, and a failure half-way removes what was written.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from .file_types import MIME_TYPES
from .paths import ICONS, LINUX_DESKTOP

DESKTOP_ID = "ztviewer.desktop"
MIME_XML = "ztviewer-mime.xml"
PNG_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
MIMEAPPS_SECTIONS = ("[Default Applications]", "[Added Associations]")
_RUNNABLE = ("import importlib.util as u, sys; "
             "sys.exit(0 if all(u.find_spec(m) for m in ('ztviewer', 'PySide6', 'pyqtgraph')) else 1)")


class DesktopError(Exception):
    """The desktop integration cannot be installed as asked; the message says why and what to do."""


@dataclass
class Changes:
    """What :func:`install` or :func:`uninstall` did."""

    files: list[Path] = field(default_factory=list)     # written (install) or removed (uninstall)
    edited: list[Path] = field(default_factory=list)    # mimeapps.list files that still hold other entries
    folders: list[Path] = field(default_factory=list)   # removed once empty (uninstall)
    not_default: str | None = None                      # why ztviewer was not made the default application


def data_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")


def config_home() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")


def exec_command() -> tuple[str, str]:
    """The command line the entry runs and the program it starts: this interpreter's own ``ztviewer`` script (a
    venv or pipx install), else ``<this python> -m ztviewer``; a frozen app runs itself. Paths with spaces are
    quoted in the command line (Desktop Entry spec)."""
    if getattr(sys, "frozen", False):
        return _quoted(sys.executable), sys.executable
    if not _has_ztviewer(sys.executable):
        raise DesktopError(
            f"{sys.executable} cannot start ztviewer on its own (it reaches ztviewer only through PYTHONPATH, or "
            "lacks PySide6/pyqtgraph): the menu entry would not start. Install ztviewer for that interpreter "
            "(pipx install . from a checkout, or pip install into a venv), then run: ztviewer --install-desktop")
    script = Path(sys.executable).with_name("ztviewer")
    if script.is_file() and os.access(script, os.X_OK):
        return _quoted(str(script)), str(script)
    return f"{_quoted(sys.executable)} -m ztviewer", sys.executable


def _has_ztviewer(python: str) -> bool:
    """Whether ``python`` imports ztviewer and its GUI libraries without this process's PYTHONPATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    try:
        done = subprocess.run([python, "-c", _RUNNABLE], env=env, cwd=Path.home() if Path.home().is_dir() else "/",
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def _quoted(path: str) -> str:
    if not any(c in path for c in ' \t\n"\'\\><~|&;$*?#()`'):
        return path
    return '"' + path.replace("\\", "\\\\").replace('"', '\\"').replace("`", "\\`").replace("$", "\\$") + '"'


def _run(*cmd: str) -> bool | None:
    """Run a freedesktop tool: whether it succeeded, None when it is not installed."""
    if not shutil.which(cmd[0]):
        return None
    done = subprocess.run(cmd, check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return done.returncode == 0


def _sources() -> dict[str, Path]:
    """What install copies, by relative destination; raises :class:`DesktopError` naming anything missing."""
    sources = {f"mime/packages/{MIME_XML}": LINUX_DESKTOP / MIME_XML,
               f"applications/{DESKTOP_ID}": LINUX_DESKTOP / DESKTOP_ID,
               "icons/hicolor/scalable/apps/ztviewer.svg": ICONS / "ztviewer.svg"}
    for size in PNG_SIZES:
        sources[f"icons/hicolor/{size}x{size}/apps/ztviewer.png"] = ICONS / f"ztviewer-{size}.png"
    missing = [str(p) for p in sources.values() if not p.is_file()]
    if missing:
        raise DesktopError(f"this ztviewer installation lacks its desktop files ({', '.join(missing)}); "
                           "reinstall it from your checkout (pip install --force-reinstall .)")
    return sources


def _installed_paths(home: Path) -> list[Path]:
    return [home / relative for relative in _destinations()]


def _destinations() -> list[str]:
    return ([f"mime/packages/{MIME_XML}", f"applications/{DESKTOP_ID}", "icons/hicolor/scalable/apps/ztviewer.svg"]
            + [f"icons/hicolor/{s}x{s}/apps/ztviewer.png" for s in PNG_SIZES])


def install(home: Path | None = None) -> Changes:
    """Install MIME types, the desktop entry and icons; make ztviewer the default for its types (with
    ``xdg-mime``: :attr:`Changes.not_default` says why not when it could not)."""
    home = home or data_home()
    sources = _sources()
    command, program = exec_command()
    entry = sources.pop(f"applications/{DESKTOP_ID}").read_text()
    entry = entry.replace("Exec=ztviewer %F", f"Exec={command} %F").replace("TryExec=ztviewer", f"TryExec={program}")
    created_dirs: list[Path] = []
    written: list[Path] = []
    try:
        for relative, source in [*sources.items(), (f"applications/{DESKTOP_ID}", None)]:
            target = home / relative
            _make_dirs(target.parent, created_dirs)
            if source is None:
                target.write_text(entry)
            else:
                shutil.copyfile(source, target)
            written.append(target)
    except BaseException:
        for path in written:
            path.unlink(missing_ok=True)
        for folder in reversed(created_dirs):
            try:
                folder.rmdir()
            except OSError:
                pass
        raise
    _refresh(home)
    return Changes(files=written, not_default=_make_default())


def _make_default() -> str | None:
    made = [_run("xdg-mime", "default", DESKTOP_ID, mime) for mime in MIME_TYPES]
    if None in made:
        return "xdg-mime (xdg-utils) is not installed"
    failed = [mime for mime, ok in zip(MIME_TYPES, made) if not ok]
    return f"xdg-mime default failed for {', '.join(failed)}" if failed else None


def _make_dirs(folder: Path, created: list[Path]) -> None:
    missing = []
    while not folder.exists():
        missing.append(folder)
        folder = folder.parent
    for path in reversed(missing):
        path.mkdir()
        created.append(path)


def uninstall(home: Path | None = None) -> Changes:
    """Remove what :func:`install` wrote, every default-application entry naming the removed desktop file (a
    ``mimeapps.list`` left with nothing else is removed), and the folders that leaves empty."""
    home = home or data_home()
    changes = Changes()
    for path in _installed_paths(home):
        if path.exists():
            path.unlink()
            changes.files.append(path)
    for mimeapps in (config_home() / "mimeapps.list", home / "applications" / "mimeapps.list"):
        outcome = forget_default_handler(mimeapps)
        if outcome == "removed":
            changes.files.append(mimeapps)
        elif outcome == "edited":
            changes.edited.append(mimeapps)
    _refresh(home)
    if changes.files:
        changes.folders = _remove_emptied(home)
    return changes


def _remove_emptied(home: Path) -> list[Path]:
    """The folders under ``home`` that install made and uninstall emptied; a MIME database or a cache that
    describes nothing any more (no package, icon or entry left) goes with them, as they were generated."""
    mime = home / "mime"
    if (mime / "packages").is_dir() and not any((mime / "packages").iterdir()):
        shutil.rmtree(mime)     # update-mime-database's output, every file of it derived from packages/
    for cache in (home / "icons" / "hicolor" / "icon-theme.cache", home / "applications" / "mimeinfo.cache"):
        if cache.is_file() and not any(p.is_file() for p in cache.parent.rglob("*") if p != cache):
            cache.unlink()     # gtk-update-icon-cache's / update-desktop-database's index of nothing
    removed = []
    for relative in _destinations():
        folder = (home / relative).parent
        while folder != home and folder.is_dir() and not any(folder.iterdir()):
            folder.rmdir()
            removed.append(folder)
            folder = folder.parent
    return removed


def forget_default_handler(mimeapps: Path) -> str | None:
    """Drop ``ztviewer.desktop`` from the association sections of ``mimeapps``: ``"edited"``, or ``"removed"``
    when nothing but section headers would be left; None when it named ztviewer nowhere."""
    try:
        text = mimeapps.read_text()
    except (FileNotFoundError, UnicodeDecodeError):
        return None
    lines, section, changed = [], "", False
    for line in text.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("["):
            section = stripped
        elif section in MIMEAPPS_SECTIONS and "=" in stripped and DESKTOP_ID in stripped:
            key, _, value = stripped.partition("=")
            kept = [d for d in value.split(";") if d and d.strip() != DESKTOP_ID]
            changed = True
            if not kept:
                continue
            line = f"{key}={';'.join(kept)};\n"
        lines.append(line)
    if not changed:
        return None
    if all(not line.strip() or line.strip().startswith("[") for line in lines):
        mimeapps.unlink()
        return "removed"
    mimeapps.write_text("".join(lines))
    return "edited"


def _refresh(home: Path) -> None:
    if (home / "mime").is_dir():
        _run("update-mime-database", str(home / "mime"))
    if (home / "applications").is_dir():
        _run("update-desktop-database", str(home / "applications"))
    if (home / "icons" / "hicolor").is_dir():
        _run("gtk-update-icon-cache", "-q", "-t", str(home / "icons" / "hicolor"))


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    action = argv[0] if argv else "install"
    if action not in ("install", "uninstall"):
        print("usage: python -m ztviewer.desktop [install|uninstall]", file=sys.stderr)
        return 2
    try:
        changes = install() if action == "install" else uninstall()
    except (DesktopError, OSError) as exc:
        print(f"ztviewer: cannot {action} the desktop integration: {exc}", file=sys.stderr)
        return 1
    verb = "installed" if action == "install" else "removed"
    for path in changes.files:
        print(f"{verb} {path}")
    for path in changes.edited:
        print(f"removed ztviewer's default-application entries from {path}")
    if changes.folders:
        print(f"removed {len(changes.folders)} folders left empty")
    if action == "install" and changes.not_default:
        print(f"ztviewer was not made the default application: {changes.not_default}; double-clicking a file "
              "opens what opened it before (install xdg-utils and run ztviewer --install-desktop again, or "
              "choose ztviewer under Open With)")
    elif action == "install":
        print("ztviewer is now the default application for .zt, .safetensors and .blz files and tensor sets")
    return 0

if __name__ == "__main__":
    sys.exit(main())
