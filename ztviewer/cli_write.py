"""``convert`` and ``edit`` subcommands, on top of the codec writers."""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

from .cli_common import EXIT_PROBLEMS, UsageError, require_existing, say
from .codec.registry import default_targets, target_extensions

#: ``--to`` values (writer targets of the format registry), each naming one generation; the codec calls zTensor
#: v1.0 plain ``zt``
FORMATS = tuple(target_extensions())
_CODEC_NAMES = {"zt-v1.0": "zt"}
_BY_EXTENSION = default_targets()
DEFAULT_FORMAT = _BY_EXTENSION[".zt"]


SKIP_HELP = ("leave damaged tensors out and list them; without it a damaged tensor (recorded digest that does not "
             "match, bool byte other than 0/1, part that does not decode) refuses the write, naming it")


def add_write_commands(sub: argparse._SubParsersAction) -> None:
    convert = sub.add_parser("convert", help="write a file in another format (atomically)")
    convert.add_argument("input")
    convert.add_argument("output")
    convert.add_argument("--to", choices=FORMATS, help="output format (default: from the output's extension: "
                         f".safetensors, .blz, anything else {DEFAULT_FORMAT})")
    convert.add_argument("--compress", metavar="zstd[:LEVEL]|raw",
                         help="compress every component with zstd (default level 3), or store everything raw")
    convert.add_argument("--digest", choices=("crc32c", "sha256", "xxh3", "none"),
                         help="record this digest for every component, or drop digests (zt-v2: xxh3 by default)")
    convert.add_argument("--align", type=_alignment, metavar="N",
                         help="zt-v2 blob placement, a multiple of 4096 (default 65536, canonical form)")
    convert.add_argument("--densify", action="store_true",
                         help="turn sparse tensors and tensor trains into dense ones (needed for safetensors)")
    convert.add_argument("--skip-damaged", action="store_true", help=SKIP_HELP)
    convert.set_defaults(handler=cmd_convert)

    edit = sub.add_parser("edit", help="edit attributes and tensor names, then save")
    edit.add_argument("file")
    edit.add_argument("--set-attr", action="append", default=[], metavar="K=V", help="set a file attribute (text)")
    edit.add_argument("--set-attr-json", action="append", default=[], metavar="K=JSON",
                      help="set a file attribute to a JSON value (formats with typed attributes)")
    edit.add_argument("--del-attr", action="append", default=[], metavar="K", help="delete a file attribute")
    edit.add_argument("--rename", action="append", default=[], metavar="OLD=NEW", help="rename a tensor")
    edit.add_argument("--delete", action="append", default=[], metavar="NAME", help="delete a tensor")
    edit.add_argument("--compact", action="store_true",
                      help="zTensor v2 in place: rewrite the whole file instead of appending a generation (earlier "
                      "generations go, blobs move to canonical 64 KiB placement; every part keeps its encoding and "
                      "digest: zstd parts stay zstd)")
    edit.add_argument("--skip-damaged", action="store_true", help=SKIP_HELP)
    where = edit.add_mutually_exclusive_group(required=True)
    where.add_argument("-o", "--output", help="write the edited file here")
    where.add_argument("--in-place", action="store_true", help="replace FILE (atomically)")
    edit.set_defaults(handler=cmd_edit)


def _split(pair: str, option: str) -> tuple[str, str]:
    key, sep, value = pair.partition("=")
    if not sep or not key:
        raise UsageError(f"{option} expects KEY=VALUE, got {pair!r}")
    return key, value


def _alignment(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 4096 or value % 4096:
        raise argparse.ArgumentTypeError(f"{value} is not a positive multiple of 4096")
    return value


def _compression(text: str | None) -> Any:
    if text is None:
        return None
    if text in ("raw", "none"):
        return "raw"
    name, _, level = text.partition(":")
    if name != "zstd":
        raise UsageError(f"--compress takes zstd[:LEVEL] or raw, got {text!r}")
    try:
        value = int(level) if level else 3
    except ValueError:
        raise UsageError(f"zstd level must be an integer, got {level!r}") from None
    if not 1 <= value <= 22:
        raise UsageError(f"zstd level must be 1..22, got {value}")
    return ("zstd", value)


class _Progress:
    """A one-line progress report on stderr when it is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self.last = 0.0

    def __call__(self, done: int, total: int) -> None:
        now = time.monotonic()
        if self.enabled and (now - self.last > 0.1 or done == total):
            self.last = now
            percent = 100 * done / total if total else 100
            print(f"\r{percent:5.1f}%  {done / 2**20:,.1f} / {total / 2**20:,.1f} MiB", end="", file=sys.stderr)

    def close(self) -> None:
        if self.enabled:
            print(file=sys.stderr)


def cmd_convert(args: argparse.Namespace) -> int:
    from .codec.convert import convert

    require_existing(args.input)
    to = args.to or _BY_EXTENSION.get(os.path.splitext(args.output)[1].lower(), DEFAULT_FORMAT)
    to = _CODEC_NAMES.get(to, to)
    from .codec.errors import DamagedTensor

    progress = _Progress()
    try:
        result = convert(args.input, args.output, to=to, compress=_compression(args.compress),
                         digest=args.digest, densify=args.densify, align=args.align, progress=progress,
                         skip_damaged=args.skip_damaged)
    except DamagedTensor as exc:
        return _refused_damaged("convert", exc)
    finally:
        progress.close()
    print(f"wrote {result.path} ({result.format}, {result.size:,} bytes)")
    report_skipped(result.skipped)
    report_cleaned(result.cleaned)
    report_warnings(result.warnings)
    return 0


def report_warnings(warnings: tuple[str, ...]) -> None:
    """What the output could not hold (the file was written without it)."""
    for text in warnings:
        say(f"warning: {text}", sys.stderr)


def _refused_damaged(command: str, exc: Exception) -> int:
    """The refusal of a damaged tensor, and how to write the rest."""
    say(f"error: {exc}", sys.stderr)
    say(f"hint: ztviewer {command} … --skip-damaged writes the other tensors and lists the damaged ones", sys.stderr)
    return EXIT_PROBLEMS


def report_skipped(skipped: tuple[tuple[str, str], ...]) -> None:
    """List the damaged tensors a save left out (--skip-damaged), each with what is wrong with it."""
    if skipped:
        print(f"skipped {len(skipped)} damaged tensor{'s' if len(skipped) != 1 else ''} (not written):")
        for _, why in skipped:
            say(f"  {why}")


def report_cleaned(paths: tuple[str, ...]) -> None:
    """Tell the user which temporaries of interrupted saves were removed from the output's folder."""
    for path in paths:
        say(f"removed {path}: a temporary file an interrupted save left behind", sys.stderr)


def _edit_commands(args: argparse.Namespace) -> list:
    from .codec import edit

    commands: list = []
    for pair in args.set_attr:
        key, value = _split(pair, "--set-attr")
        commands.append(edit.SetFileAttribute(key, value))
    for pair in args.set_attr_json:
        key, text = _split(pair, "--set-attr-json")
        try:
            commands.append(edit.SetFileAttribute(key, json.loads(text)))
        except json.JSONDecodeError as exc:
            raise UsageError(f"--set-attr-json {key}: not valid JSON ({exc.msg})") from None
    commands += [edit.DeleteFileAttribute(key) for key in args.del_attr]
    for pair in args.rename:
        old, new = _split(pair, "--rename")
        commands.append(edit.RenameTensor(old, new))
    commands += [edit.DeleteTensor(name) for name in args.delete]
    if not commands:
        raise UsageError("nothing to do: give --set-attr, --del-attr, --rename or --delete")
    return commands


def cmd_edit(args: argparse.Namespace) -> int:
    from .codec.errors import DamagedTensor
    from .codec.save import edit_file
    from .session.formatting import plural

    require_existing(args.file)
    commands = _edit_commands(args)
    progress = _Progress()
    try:
        result = edit_file(args.file, commands, None if args.in_place else args.output, progress=progress,
                           compact=args.compact, skip_damaged=args.skip_damaged)
    except DamagedTensor as exc:
        return _refused_damaged("edit", exc)
    finally:
        progress.close()
    print(f"wrote {result.path} ({result.format}, {result.size:,} bytes): {plural(len(commands), 'edit')}")
    report_skipped(result.skipped)
    report_cleaned(result.cleaned)
    report_warnings(result.warnings)
    return 0
