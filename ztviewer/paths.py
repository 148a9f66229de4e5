"""Where ztviewer's resources are: package data in ``ztviewer/resources`` (source tree, wheel, sdist), or the
same folder inside a PyInstaller bundle."""
from __future__ import annotations

import sys
from pathlib import Path

_FROZEN = getattr(sys, "_MEIPASS", None)
PACKAGE = Path(_FROZEN) / "ztviewer" if _FROZEN else Path(__file__).resolve().parent

RESOURCES = PACKAGE / "resources"
ICONS = RESOURCES / "icons"
SAMPLES = RESOURCES / "samples"
LINUX_DESKTOP = RESOURCES / "linux"
APP_ICON_SVG = ICONS / "ztviewer.svg"


def demo_files() -> list[str]:
    """The bundled sample files ``--demo`` and Help ▸ Open Demo Files open."""
    from .file_types import EXTENSIONS

    suffixes = {"." + e for e in EXTENSIONS}
    return sorted(str(p) for p in SAMPLES.glob("*") if p.suffix in suffixes)
