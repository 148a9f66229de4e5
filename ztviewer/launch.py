"""``ztviewer [FILE…]``: parse the GUI's own options, then import Qt lazily and start the window."""
from __future__ import annotations

import argparse
from pathlib import Path
from typing import Sequence

SAMPLES_DIR = Path(__file__).resolve().parent / "resources" / "samples"


def demo_files() -> list[str]:
    return sorted(str(p) for p in SAMPLES_DIR.glob("*") if p.suffix in (".zt", ".safetensors", ".blz"))


def launch_gui(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ztviewer", description="Open tensor files in the ztviewer window. "
        "Commands: info, check, export, convert, edit (ztviewer COMMAND --help).")
    parser.add_argument("files", nargs="*", help=".zt, .safetensors or .blz files to open")
    parser.add_argument("--demo", action="store_true", help="open the bundled sample files")
    args = parser.parse_args(list(argv))
    files = list(args.files) + (demo_files() if args.demo else [])
    from .gui.app import main as gui_main

    return gui_main(files)
