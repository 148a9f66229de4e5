#!/usr/bin/env bash
# Build the one-folder app with PyInstaller, then open a file with the built binary (headless) and check
# it reports the file's window title and exits cleanly.   Usage: packaging/pyinstaller/build_and_smoke.sh [FILE]
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
python -m pip install -q "pyinstaller>=6.10"
start=$(date +%s)
python -m PyInstaller --noconfirm --log-level WARN --distpath build/dist --workpath build/pyinstaller \
    packaging/pyinstaller/ztviewer.spec
built=$(( $(date +%s) - start ))
file=${1:-ztviewer/resources/samples/tiny-llama.zt}
out=$(QT_QPA_PLATFORM=offscreen ZTVIEWER_SMOKE_TEST=1 ZTVIEWER_NEW_INSTANCE=1 build/dist/ztviewer/ztviewer "$file" 2>/dev/null)
echo "$out"
expected="title='$(basename "$file") — ztviewer'"
case "$out" in
    *"$expected"*) echo "PyInstaller build OK in ${built}s: $(du -sh build/dist/ztviewer | cut -f1) in build/dist/ztviewer" ;;
    *) echo "the built app did not open $file" >&2; exit 1 ;;
esac
build/dist/ztviewer/ztviewer check "$file" | tail -1
