"""``ztviewer [FILE…]``: parse the GUI's own options, check the system can show a window, then import Qt lazily
and start it."""
from __future__ import annotations

import argparse
import gc
import sys
from collections.abc import Sequence

from .file_types import EXTENSIONS
from .paths import SAMPLES as SAMPLES_DIR
from .paths import demo_files

#: the window's options (flag, help), shared with ``ztviewer --help``
WINDOW_OPTIONS: tuple[tuple[str, str], ...] = (
    ("--demo", "open the bundled sample files"),
    ("--new-instance", "open a new window even when ztviewer is already running"),
    ("--install-desktop", "register file types, icon and menu entry for this user (Linux), then exit"),
    ("--uninstall-desktop", "undo --install-desktop (and its default-application entries), then exit"),
)
WINDOW_USAGE = ("ztviewer [FILE…] [--demo] [--new-instance]     open files, sharded checkpoints or dataset folders "
                "in the window\n"
                "       ztviewer --compare A B                        compare two files or sets in the window\n"
                "       ztviewer --install-desktop | --uninstall-desktop")



def launch_gui(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="ztviewer", usage=WINDOW_USAGE, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Open tensor files in the ztviewer window. "
        "Commands: info, check, export, convert, edit, diff (ztviewer COMMAND --help).")
    parser.add_argument("files", nargs="*", metavar="FILE",
                        help=", ".join("." + e for e in EXTENSIONS) + " files, or a folder / index of a tensor set")
    for flag, text in WINDOW_OPTIONS:
        parser.add_argument(flag, action="store_true", help=text)
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"),
                        help="open a Compare tab: A (the reference) against B, files or sets in any format")
    args = parser.parse_args(list(argv))
    if args.install_desktop or args.uninstall_desktop:
        from . import desktop

        return desktop.main(["install" if args.install_desktop else "uninstall"])
    files = list(args.files)
    if args.demo:
        demos = demo_files()
        if not demos:
            print(f"ztviewer: the demo files are missing from this installation (looked in {SAMPLES_DIR}); "
                  "reinstall ztviewer from your checkout (pip install --force-reinstall .)", file=sys.stderr)
            return 1
        files += demos
    from .gui_requirements import problem

    # Start-up makes some 300,000 objects that live as long as the window (modules, Qt types, the window): the
    # collections their allocations trigger find no garbage (~30 ms of a ~550 ms start). gui.app.main freezes them
    # and turns collection back on once the event loop runs.
    gc.disable()
    missing = problem()
    if missing:
        print(missing, file=sys.stderr)
        return 1
    from .gui.app import main as gui_main

    return gui_main(files, new_instance=args.new_instance, compare=args.compare)


def gui_main() -> int:
    """The ``ztviewer-gui`` entry point (no console on Windows): the window's command line, read from ``sys.argv``."""
    return launch_gui(sys.argv[1:])
