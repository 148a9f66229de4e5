"""Command line: ``ztviewer info|check|export|convert|edit|diff …``; ``ztviewer [FILE…]`` starts the GUI."""
from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, Sequence

from . import __version__

COMMANDS = ("info", "check", "export", "convert", "edit", "diff")
EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE: what a shell reports for a tool stopped by a closed pipe


class UsageError(Exception):
    """Bad arguments or a missing path: exit status 2."""


def _parser() -> argparse.ArgumentParser:
    from .launch import WINDOW_OPTIONS, WINDOW_USAGE

    window = "\n".join(f"  {flag:<22}{text}" for flag, text in WINDOW_OPTIONS)
    parser = argparse.ArgumentParser(
        prog="ztviewer", formatter_class=argparse.RawDescriptionHelpFormatter,
        usage=f"{WINDOW_USAGE}\n       ztviewer COMMAND [ARGS…]   (info, check, export, convert, edit, diff)",
        description="Inspect, check, convert and edit tensor files: in a window (ztviewer FILE…) or with commands.",
        epilog=f"window options (ztviewer [FILE…] …):\n{window}\n\n"
               "ztviewer COMMAND --help describes each command.")
    parser.add_argument("--version", action="version", version=f"ztviewer {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    info = sub.add_parser("info", help="describe a file: tensors, components, attributes, problems")
    info.add_argument("file")
    info.add_argument("--json", action="store_true", help="machine-readable output")
    info.add_argument("--hash", action="store_true", help="add each tensor's logical-content SHA-256")

    check = sub.add_parser("check", help="verify structure, decoding and digests (exit 0 sound, 1 problems)")
    check.add_argument("file")

    export = sub.add_parser("export", help="write one tensor as a dense .npy")
    export.add_argument("file")
    export.add_argument("tensor")
    export.add_argument("-o", "--output", required=True, help="output .npy path")
    export.add_argument("--raw", action="store_true", help="keep bfloat16/float8 bits as uint16/uint8")

    from .cli_write import add_write_commands

    add_write_commands(sub)
    from .cli_diff import add_diff_command

    add_diff_command(sub)
    return parser


def _open(path: str):
    from .codec.multifile import open_path

    if not os.path.exists(path):
        raise UsageError(f"no such file: {path}")
    return open_path(path)  # a file, or a multi-file set: its folder, index / manifest JSON, or one shard


def _jsonable(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return {"bytes_hex": bytes(value).hex()}
    if isinstance(value, float) and (value != value or value in (float("inf"), float("-inf"))):
        return repr(value)
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def _problem_json(problem) -> dict[str, Any]:
    return {"severity": problem.severity.value, "message": problem.message, "rule": problem.rule,
            "tensor": problem.tensor, "component": problem.component, "offset": problem.offset}


def describe(tf, with_hash: bool = False) -> dict[str, Any]:
    """The JSON document printed by ``info --json``."""
    from .codec.content_hash import content_sha256
    from .codec.errors import CodecError
    from .codec.formats.zt_v2 import content_digest, object_content_digest

    tensors = []
    for t in tf.tensors:
        entry: dict[str, Any] = {
            "name": t.name, "dtype": t.dtype, "shape": list(t.shape), "layout": t.layout,
            "layout_spelling": t.layout_spelling, "index": t.index, "attributes": _jsonable(t.attributes),
            "components": [
                {"role": c.role, "offset": c.offset, "length": c.length, "encoding": c.encoding,
                 "digest": c.digest, "dtype": c.dtype, "byte_order": c.byte_order,
                 "uncompressed_length": c.uncompressed_length}
                for c in t.components.values()
            ],
            "problems": [_problem_json(p) for p in t.problems],
        }
        if "shard" in t.extra:
            entry["shard"] = t.extra["shard"]
        if tf.format == "zt-v2":
            entry["content_digest"] = object_content_digest(t)
        if with_hash:
            entry["sha256"] = None
            if not t.has_errors:
                try:
                    entry["sha256"] = content_sha256(tf, t)
                except CodecError as exc:
                    entry["hash_error"] = str(exc)
        tensors.append(entry)
    doc: dict[str, Any] = {
        "path": tf.path, "format": tf.format, "variant": tf.variant, "readable": tf.readable, "size": tf.size,
        "attributes": _jsonable(tf.attributes), "extra": _jsonable({k: v for k, v in tf.extra.items() if not k.startswith("_")}), "tensors": tensors,
        "problems": [_problem_json(p) for p in tf.problems],
    }
    if tf.format == "zt-v2":
        doc["content_digest"] = content_digest(tf)
    return doc


def _format_size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024 or unit == "TiB":
            return f"{n} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _print_info_text(doc: dict[str, Any]) -> None:
    kind = doc["format"] if doc["variant"] in ("", doc["format"]) else f"{doc['format']} {doc['variant']}"
    print(f"{doc['path']}: {kind}, {_format_size(doc['size'])}")
    if "content_digest" in doc:
        print(f"  content id: {doc['content_digest'] or 'undefined (a part has no digest)'}")
    for key, value in doc["extra"].items():
        if key == "shards" and isinstance(value, list):
            print(f"  shards: {len(value)}")
            for s in value:
                print(f"    {s['name']}: " + ", ".join(f"{k} {v}" for k, v in s.items() if k not in ("name", "path")))
            continue
        print(f"  {key}: {value}")
    if doc["attributes"]:
        print("attributes:")
        for key, value in doc["attributes"].items():
            print(f"  {key}: {json.dumps(value, ensure_ascii=False)}")
    print(f"tensors: {len(doc['tensors'])}")
    for t in doc["tensors"]:
        shape = "×".join(map(str, t["shape"])) or "scalar"
        layout = "" if t["layout"] == "dense" else f" {t['layout']}"
        print(f"  {t['name']}  {t['dtype']} [{shape}]{layout}" + (f"  sha256={t['sha256']}" if "sha256" in t else "")
              + (f"  (shard {t['shard']})" if "shard" in t else ""))
        if t.get("content_digest"):
            print(f"    content id: {t['content_digest']}")
        for c in t["components"]:
            extras = [c["encoding"]] + ([c["digest"]] if c["digest"] else [])
            print(f"    {c['role']}: @{c['offset']} +{c['length']} ({', '.join(extras)})")
        for key, value in t["attributes"].items():
            print(f"    attr {key} = {json.dumps(value, ensure_ascii=False)}")
    problems = doc["problems"] + [p for t in doc["tensors"] for p in t["problems"]]
    for p in problems:
        print(f"{p['severity']}: {_problem_text(p)}")


def _problem_text(p: dict[str, Any]) -> str:
    from .codec.model import Problem, Severity

    return Problem(Severity(p["severity"]), p["message"], p["rule"], p["tensor"], p["component"],
                   p["offset"]).describe()


def _kind(tf) -> str:
    return tf.format if tf.variant in ("", tf.format) else f"{tf.format} {tf.variant}"


def cmd_info(args: argparse.Namespace) -> int:
    tf = _open(args.file)
    doc = describe(tf, with_hash=args.hash)
    if args.json:
        json.dump(doc, sys.stdout, indent=1, ensure_ascii=False)
        print()
    else:
        _print_info_text(doc)
    return EXIT_OK if tf.readable else EXIT_PROBLEMS


def cmd_check(args: argparse.Namespace) -> int:
    from .codec.check import check_file

    tf = _open(args.file)
    report = check_file(tf)
    for p in sorted(report.problems, key=lambda p: not p.is_error):
        print(str(p))
    errors = sum(p.is_error for p in report.problems)
    warnings = len(report.problems) - errors
    verdict = "OK" if report.ok else "FAILED"
    print(f"{verdict}: {tf.path} ({_kind(tf)}): {len(tf.tensors)} tensors, "
          f"{report.tensors_decoded} decoded, {report.digests_verified} digests verified, "
          f"{errors} errors, {warnings} warnings".replace(" )", ")"))
    return EXIT_OK if report.ok else EXIT_PROBLEMS


def cmd_export(args: argparse.Namespace) -> int:
    import numpy as np

    from .codec.decode import to_dense

    tf = _open(args.file)
    if not tf.readable:
        for p in tf.problems:
            print(str(p), file=sys.stderr)
        return EXIT_PROBLEMS
    try:
        tensor = tf.tensor(args.tensor)
    except KeyError:
        names = ", ".join(t.name for t in tf.tensors[:10])
        raise UsageError(f"no tensor named {args.tensor!r} (tensors: {names}{', …' if len(tf.tensors) > 10 else ''})")
    if tensor.has_errors:
        for p in tensor.problems:
            print(str(p), file=sys.stderr)
        return EXIT_PROBLEMS
    array = to_dense(tf, tensor, raw_bits=args.raw)
    np.save(args.output, np.ascontiguousarray(array), allow_pickle=False)
    print(f"wrote {args.output}: {tensor.name} {array.dtype} {list(array.shape)}")
    return EXIT_OK


def run_command(argv: Sequence[str]) -> int:
    from .codec.errors import CodecError
    from .codec.formats.zt_v2 import content_digest, object_content_digest

    try:
        args = _parser().parse_args(argv)
    except SystemExit as exc:  # argparse already printed usage / help
        return EXIT_OK if exc.code == 0 else EXIT_USAGE
    handler = {"info": cmd_info, "check": cmd_check, "export": cmd_export}.get(args.command)
    if handler is None:
        handler = args.handler
    try:
        code: int = handler(args)
        sys.stdout.flush()  # a reader that stopped early (… | head) fails here, not at interpreter exit
        return code
    except BrokenPipeError:
        return _stdout_closed()
    except UsageError as exc:
        print(f"ztviewer {args.command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except CodecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_PROBLEMS
    except OSError as exc:
        print(f"error: {exc.strerror or exc}: {exc.filename or ''}".rstrip(": "), file=sys.stderr)
        return EXIT_PROBLEMS
    except Exception as exc:  # a bug: say so plainly; ZTVIEWER_DEBUG=1 shows the traceback
        if os.environ.get("ZTVIEWER_DEBUG"):
            raise
        print(f"internal error (please report): {type(exc).__name__}: {exc}", file=sys.stderr)
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


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and (argv[0] in COMMANDS or argv[0] in ("-h", "--help", "--version")):
        return run_command(argv)
    from .launch import launch_gui

    return launch_gui(argv)


if __name__ == "__main__":
    sys.exit(main())
