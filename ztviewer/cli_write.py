"""``convert`` and ``edit`` subcommands (wired to the codec writers)."""
from __future__ import annotations

import argparse


def add_write_commands(sub: argparse._SubParsersAction) -> None:
    convert = sub.add_parser("convert", help="write a file in another format")
    convert.add_argument("input")
    convert.add_argument("output")
    convert.set_defaults(handler=_not_ready)
    edit = sub.add_parser("edit", help="edit attributes / names and save")
    edit.add_argument("file")
    edit.set_defaults(handler=_not_ready)


def _not_ready(args: argparse.Namespace) -> int:
    from .cli import UsageError

    raise UsageError(f"'{args.command}' is not available in this build yet")
