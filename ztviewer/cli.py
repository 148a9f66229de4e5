"""Command line: ``ztviewer info|check|export|convert|edit|diff …``; ``ztviewer [FILE…]`` starts the GUI."""
from __future__ import annotations

import argparse
import difflib
import os
import sys
from collections.abc import Sequence
from typing import Any

from . import __version__
from .cli_common import (
    EXIT_OK,
    EXIT_PROBLEMS,
    EXIT_STATUSES,
    EXIT_USAGE,
    ProblemsFound,
    UsageError,
    open_input,
    say,
    say_journal_warnings,
)

COMMANDS = ("info", "check", "export", "convert", "edit", "diff", "repair")
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by a closed pipe
#: ``--help`` is laid out at this width whatever the terminal, so README's copy of it (scripts/readme_commands.py)
#: is the same everywhere
HELP_WIDTH = 100


class _Formatter(argparse.RawDescriptionHelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, width=HELP_WIDTH, max_help_position=26)


def _parser() -> argparse.ArgumentParser:
    from .cli_diff import add_diff_command
    from .cli_write import DEFAULT_FORMAT, add_write_commands
    from .launch import WINDOW_OPTIONS, WINDOW_USAGE

    parser = argparse.ArgumentParser(
        prog="ztviewer", formatter_class=_Formatter,
        usage=f"{WINDOW_USAGE}\n       ztviewer COMMAND [ARGS…]{' ' * 22}{', '.join(COMMANDS)}",
        description="Inspect, check, convert and edit tensor files (zTensor .zt, safetensors, BLZ1 .blz): in a "
                    "window or with commands.")
    parser.add_argument("--version", action="version", version=f"ztviewer {__version__}")
    sub = parser.add_subparsers(dest="command", required=True, title="commands", metavar="COMMAND",
                                prog="ztviewer")

    info = sub.add_parser("info", help="describe a file: tensors, components, attributes, problems")
    info.add_argument("file")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.add_argument("--hash", action="store_true", help="add each tensor's logical-content SHA-256")

    check = sub.add_parser("check", help="verify structure, decoding and every digest")
    check.add_argument("file")

    export = sub.add_parser("export", help="write one tensor as a dense .npy")
    export.add_argument("file")
    export.add_argument("tensor")
    export.add_argument("-o", "--output", required=True, help="output .npy path")
    export.add_argument("--raw", action="store_true", help="keep bfloat16/float8 bits as uint16/uint8")

    add_write_commands(sub)
    add_diff_command(sub)
    from .cli_repair import add_repair_command

    add_repair_command(sub)
    window = "\n".join(f"  {flag:<24}{text}" for flag, text in WINDOW_OPTIONS)
    usages = "".join(_usage(command) for command in sub.choices.values())
    parser.epilog = (f"window options (ztviewer [FILE…] …):\n{window}\n\n"
                     f"command usage (ztviewer COMMAND --help explains each option):\n{usages}\n"
                     + _wrapped(f"convert writes .zt output as {DEFAULT_FORMAT} (what ztensor 2.x reads): --to "
                                "zt-v1.0, zt-v0.1 or zt-objects write the older generations.") + "\n\n"
                     + _wrapped(EXIT_STATUSES))
    return parser


def _usage(command: argparse.ArgumentParser) -> str:
    """A subcommand's usage as ``ztviewer --help`` lists it: indented, continuation lines under the arguments."""
    command.formatter_class = _Formatter
    lines = command.format_usage().removeprefix("usage: ").rstrip("\n").split("\n")
    return "".join(f"  {line.removeprefix('       ')}\n" for line in lines)


def _wrapped(text: str) -> str:
    import textwrap

    return textwrap.fill(text, HELP_WIDTH - 2)


def describe(tf, with_hash: bool = False) -> dict[str, Any]:
    """The JSON document printed by ``info --json``."""
    from .cli_info import describe as describe_file

    return describe_file(tf, with_hash)


def cmd_info(args: argparse.Namespace) -> int:
    from .cli_info import write_json, write_text

    tf = open_input(args.file)
    (write_json if args.json else write_text)(tf, sys.stdout, args.hash)
    return EXIT_OK if tf.readable else EXIT_PROBLEMS


def cmd_check(args: argparse.Namespace) -> int:
    from .codec.check import check_file
    from .session.formatting import plural

    tf = open_input(args.file)
    report = check_file(tf)
    for p in sorted(report.problems, key=lambda p: not p.is_error):
        say(str(p))
    errors = sum(p.is_error for p in report.problems)
    warnings = len(report.problems) - errors
    verdict = "OK" if report.ok else "FAILED"
    say(f"{verdict}: {tf.path} ({tf.kind}): {plural(len(tf.tensors), 'tensor')}, "
        f"{report.tensors_decoded:,} decoded, {plural(report.digests_verified, 'digest')} verified, "
        f"{plural(errors, 'error')}, {plural(warnings, 'warning')}")
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def cmd_export(args: argparse.Namespace) -> int:
    from .cli_write import report_cleaned
    from .codec.npy_export import write_npy
    from .codec.save import atomic_write, clean_stale_temporaries

    tf = open_input(args.file)
    if not tf.readable:
        for p in tf.problems:
            say(str(p), sys.stderr)
        return EXIT_PROBLEMS
    say_journal_warnings(tf)
    try:
        tensor = tf.tensor(args.tensor)
    except KeyError:
        names = ", ".join(t.name for t in tf.tensors[:10])
        more = ", …" if len(tf.tensors) > 10 else ""
        raise UsageError(f"no tensor named {args.tensor!r} (tensors: {names}{more})") from None
    if tensor.has_errors:
        for p in tensor.problems:
            say(str(p), sys.stderr)
        return EXIT_PROBLEMS
    if tensor.shard is not None:  # what info and check say about the shard the bytes are read from
        from .codec.multifile.shards import shard_warnings

        for p in shard_warnings(tf.problems, tensor.shard):
            say(str(p), sys.stderr)
    output = args.output if args.output.endswith(".npy") else args.output + ".npy"  # as np.save names it
    cleaned = clean_stale_temporaries(os.path.dirname(os.path.realpath(output)))
    written: list[Any] = []
    atomic_write(output, lambda out: written.append(write_npy(tf, tensor, out, raw_bits=args.raw)))
    say(f"wrote {output}: {tensor.name} {written[0]} {list(tensor.shape)}")
    report_cleaned(cleaned)
    return EXIT_OK


def run_command(argv: Sequence[str]) -> int:
    from .codec.errors import CodecError, UnknownFormat

    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage / help
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    handler = {"info": cmd_info, "check": cmd_check, "export": cmd_export}.get(args.command)
    if handler is None:
        handler = args.handler
    for stream in (sys.stdout, sys.stderr):  # a terminal that cannot show a character gets an escape
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    try:
        code: int = handler(args)
        sys.stdout.flush()  # a reader that stopped early (… | head) fails here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except UsageError as exc:
        say(f"ztviewer {args.command}: {exc}", sys.stderr)
        return EXIT_USAGE
    except ProblemsFound as exc:
        say(f"ztviewer {args.command}: {exc}", sys.stderr)
        return EXIT_PROBLEMS
    except UnknownFormat as exc:   # raised, not reported: the path is a folder or JSON that holds no tensor set
        say(f"error: {exc}", sys.stderr)
        return EXIT_USAGE
    except CodecError as exc:
        say(f"error: {exc}", sys.stderr)
        return EXIT_PROBLEMS
    except OSError as exc:
        say(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), sys.stderr)
        return EXIT_USAGE
    except MemoryError:
        say(f"error: not enough memory for {args.command} (a value in the file is larger than this machine "
            "can hold)", sys.stderr)
        return EXIT_PROBLEMS
    except Exception as exc:  # a bug: say so plainly; ZTVIEWER_DEBUG=1 shows the traceback
        if os.environ.get("ZTVIEWER_DEBUG"):
            raise
        say(f"internal error (please report): {type(exc).__name__}: {exc}", sys.stderr)
        return 3


def _stdout_closed() -> int:
    """The reader of stdout went away (``ztviewer info big.zt | head``): stop quietly, as Unix tools do.

    Python's recipe: point stdout at devnull so the interpreter's last flush does not fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):
        pass
    return EXIT_BROKEN_PIPE


def unknown_command(argv: Sequence[str]) -> str | None:
    """The error for ``ztviewer inf x``: a first word that is neither a command nor a path (a FILE that exists opens
    the window, and so does a missing one that looks like a file name: the window says it is missing)."""
    if not argv or argv[0].startswith("-") or os.path.exists(argv[0]):
        return None
    word = argv[0]
    if "." in word or "/" in word or os.sep in word:
        return None
    close = difflib.get_close_matches(word, COMMANDS, n=1)
    if close:
        return f"ztviewer: unknown command {word!r} (did you mean {close[0]}?)"
    return f"ztviewer: {word!r} is neither a command ({', '.join(COMMANDS)}) nor a file"


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help", "--version")):
        return run_command(argv)
    error = unknown_command(argv)
    if error is not None:
        say(error, sys.stderr)
        say("ztviewer --help lists the commands", sys.stderr)
        return EXIT_USAGE
    from .launch import launch_gui

    return launch_gui(argv)


if __name__ == "__main__":
    sys.exit(main())
