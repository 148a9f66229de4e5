#!/usr/bin/env sh
# Removes what install.sh put under $XDG_DATA_HOME (default ~/.local/share), and ztviewer's default-application
# entries in $XDG_CONFIG_HOME/mimeapps.list. Needs only the files of this checkout (no installed ztviewer).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
PYTHON=${PYTHON:-python3}
PYTHONPATH="$here${PYTHONPATH:+:$PYTHONPATH}" exec "$PYTHON" -m ztviewer.desktop uninstall
