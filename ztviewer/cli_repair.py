"""``repair``: roll back a zTensor v2 append a crash interrupted (opening a file never does)."""
from __future__ import annotations

import argparse
import os
import sys

from .cli_common import EXIT_OK, EXIT_PROBLEMS, UsageError, say

HELP = "roll back an interrupted zTensor v2 save (exit 0 repaired or nothing to do, 1 refused, 2 usage)"


def add_repair_command(sub: argparse._SubParsersAction) -> None:
    repair = sub.add_parser("repair", help=HELP, description=(
        "Roll back a zTensor v2 append that a crash interrupted: the file is cut back to its previous generation "
        "when the journal beside it (.FILE.ztviewer-append) ends exactly at a sound footer and the footer at the "
        "end of the file does not verify. A stale journal is removed; any other journal is refused with the "
        "reason, and nothing is changed. Opening a file (info, check, export, diff, the window) never repairs."))
    repair.add_argument("file")
    repair.set_defaults(handler=cmd_repair)


def cmd_repair(args: argparse.Namespace) -> int:
    from .codec.interrupted_append import repair

    if not os.path.isfile(args.file):
        raise UsageError(f"no such file: {args.file}" if not os.path.lexists(args.file)
                         else f"not a regular file: {args.file}")
    try:
        outcome = repair(args.file)
    except OSError as exc:
        raise UsageError(f"{args.file}: {exc.strerror or exc}") from None
    say(f"{args.file}: {outcome.message}", sys.stderr if outcome.refused else sys.stdout)
    return EXIT_PROBLEMS if outcome.refused else EXIT_OK
