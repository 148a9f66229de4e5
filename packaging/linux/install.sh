#!/usr/bin/env sh
# User-level desktop integration for ztviewer (no root): MIME types, .desktop entry, icons, default handler.
# Usage: packaging/linux/install.sh            (XDG_DATA_HOME defaults to ~/.local/share)
# The entry must start an interpreter that has ztviewer installed: $PYTHON if set, else the `ztviewer` command on
# PATH, else this checkout's .venv; if none has it, nothing is written (install ztviewer first: pipx install . here).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
has_ztviewer='import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in ("ztviewer", "PySide6", "pyqtgraph")) else 1)'
for candidate in "${PYTHON:-}" ztviewer "$here/.venv/bin/python"; do
    [ -n "$candidate" ] || continue
    if [ "$candidate" = ztviewer ]; then
        command -v ztviewer >/dev/null 2>&1 && exec ztviewer --install-desktop
        continue
    fi
    if command -v "$candidate" >/dev/null 2>&1 && (cd / && env -u PYTHONPATH "$candidate" -c "$has_ztviewer") 2>/dev/null; then
        exec "$candidate" -m ztviewer --install-desktop
    fi
done
echo "install.sh: no Python with ztviewer installed was found (tried \$PYTHON, ztviewer on PATH, $here/.venv)." >&2
echo "Install it first from this checkout, e.g.  pipx install .   (or: python3 -m venv .venv && .venv/bin/pip install -e .)" >&2
echo "then run this again, or simply: ztviewer --install-desktop" >&2
exit 1
