#!/usr/bin/env sh
# User-level desktop integration for ztviewer (no root): MIME types, .desktop entry, icons.
# Usage: packaging/linux/install.sh            (XDG_DATA_HOME defaults to ~/.local/share)
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m ztviewer.desktop install
