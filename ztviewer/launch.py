"""``ztviewer [FILE…]``: parse the GUI's own options, then import Qt lazily and start the window."""
from __future__ import annotations

import argparse
from typing import Sequence

from .paths import SAMPLES as SAMPLES_DIR


def demo_files() -> list[str]:
    return sorted(str(p) for p in SAMPLES_DIR.glob("*") if p.suffix in (".zt", ".safetensors", ".blz"))


def launch_gui(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ztviewer", description="Open tensor files in the ztviewer window. "
        "Commands: info, check, export, convert, edit (ztviewer COMMAND --help).")
    parser.add_argument("files", nargs="*", help=".zt, .safetensors or .blz files to open")
    parser.add_argument("--demo", action="store_true", help="open the bundled sample files")
    parser.add_argument("--install-desktop", action="store_true",
                        help="register file types, icon and menu entry for this user (Linux), then exit")
    parser.add_argument("--uninstall-desktop", action="store_true", help="undo --install-desktop, then exit")
    parser.add_argument("--new-instance", action="store_true",
                        help="open a new window even when ztviewer is already running")
    args = parser.parse_args(list(argv))
    if args.install_desktop or args.uninstall_desktop:
        from . import desktop

        return desktop.main(["install" if args.install_desktop else "uninstall"])
    files = list(args.files) + (demo_files() if args.demo else [])
    from .gui.app import main as gui_main

    return gui_main(files, new_instance=args.new_instance)
