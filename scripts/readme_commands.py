"""Write README's "## Command line" block from what ``ztviewer --help`` prints (tests/test_cli.py holds them equal).

Run ``python scripts/readme_commands.py`` after changing a command or an option; ``--check`` only says whether the
README is up to date (exit status 1 when it is not).
"""
from __future__ import annotations

import contextlib
import io
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: the first ```text block after the "## Command line" heading
_BLOCK = re.compile(r"(## Command line\n\n```text\n)(.*?)(\n```\n)", re.S)


def live_help() -> str:
    """What ``ztviewer --help`` prints, without its final newline."""
    sys.path.insert(0, str(ROOT))
    from ztviewer.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(["--help"])
    if code != 0:
        raise SystemExit(f"ztviewer --help exited with {code}")
    return out.getvalue().rstrip("\n")


def command_block(readme: str) -> str:
    """The README's copy of ``ztviewer --help``."""
    found = _BLOCK.search(readme)
    if found is None:
        raise ValueError('README has no "## Command line" heading followed by a ```text block')
    return found.group(2)


def with_block(readme: str, text: str) -> str:
    command_block(readme)  # the block must be there
    return _BLOCK.sub(lambda m: m.group(1) + text + m.group(3), readme, count=1)


def main(argv: list[str]) -> int:
    readme, text = README.read_text(encoding="utf-8"), live_help()
    if "--check" in argv:
        same = command_block(readme) == text
        print("README's command block is ztviewer --help" if same else
              "README's command block differs from ztviewer --help: run python scripts/readme_commands.py")
        return 0 if same else 1
    README.write_text(with_block(readme, text), encoding="utf-8")
    print(f"wrote the command block of {README}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
