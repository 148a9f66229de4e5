"""Where ztviewer's resources and packaging files are: the source tree, or a PyInstaller bundle."""
from __future__ import annotations

import sys
from pathlib import Path

_BASE = Path(getattr(sys, "_MEIPASS", Path(__file__).resolve().parent.parent))

RESOURCES = _BASE / "resources"
ICONS = RESOURCES / "icons"
SAMPLES = RESOURCES / "samples"
LINUX_PACKAGING = _BASE / "packaging" / "linux"
APP_ICON_SVG = ICONS / "ztviewer.svg"
