"""What the window needs from the system, checked before Qt is loaded, so a missing display or library is
reported as a sentence with the package to install instead of Qt's abort ("could not load the Qt platform
plugin…").

Checked by feature, not by platform name: Qt's GUI modules must import (their error names the missing shared
library); where the X11/Wayland platform plugins would be used (a Linux-like system, ``QT_QPA_PLATFORM`` not a
headless one) a display must be set, and the X11 plugin's own libraries must be found (when the system can
look libraries up at all).
"""
from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Mapping

#: shared library → (Debian/Ubuntu, Fedora, Arch) package
PACKAGES: dict[str, tuple[str, str, str]] = {
    "EGL": ("libegl1", "libglvnd-egl", "libglvnd"),
    "GL": ("libgl1", "libglvnd-glx", "libglvnd"),
    "OpenGL": ("libopengl0", "libglvnd-opengl", "libglvnd"),
    "xkbcommon": ("libxkbcommon0", "libxkbcommon", "libxkbcommon"),
    "xkbcommon-x11": ("libxkbcommon-x11-0", "libxkbcommon-x11", "libxkbcommon-x11"),
    "fontconfig": ("libfontconfig1", "fontconfig", "fontconfig"),
    "freetype": ("libfreetype6", "freetype", "freetype2"),
    "dbus-1": ("libdbus-1-3", "dbus-libs", "dbus"),
    "glib-2.0": ("libglib2.0-0", "glib2", "glib2"),
    "X11-xcb": ("libx11-xcb1", "libX11-xcb", "libx11"),
    "xcb": ("libxcb1", "libxcb", "libxcb"),
    "xcb-cursor": ("libxcb-cursor0", "xcb-util-cursor", "xcb-util-cursor"),
    "xcb-icccm": ("libxcb-icccm4", "xcb-util-wm", "xcb-util-wm"),
    "xcb-keysyms": ("libxcb-keysyms1", "xcb-util-keysyms", "xcb-util-keysyms"),
    "xcb-image": ("libxcb-image0", "xcb-util-image", "xcb-util-image"),
    "xcb-render-util": ("libxcb-render-util0", "xcb-util-renderutil", "xcb-util-renderutil"),
    "xcb-shape": ("libxcb-shape0", "libxcb", "libxcb"),
    "xcb-randr": ("libxcb-randr0", "libxcb", "libxcb"),
    "xcb-xinerama": ("libxcb-xinerama0", "libxcb", "libxcb"),
    "xcb-xkb": ("libxcb-xkb1", "libxcb", "libxcb"),
    "xcb-util": ("libxcb-util1", "xcb-util", "xcb-util"),
    "xcb-render": ("libxcb-render0", "libxcb", "libxcb"),
    "xcb-shm": ("libxcb-shm0", "libxcb", "libxcb"),
    "xcb-sync": ("libxcb-sync1", "libxcb", "libxcb"),
    "xcb-xfixes": ("libxcb-xfixes0", "libxcb", "libxcb"),
    "wayland-client": ("libwayland-client0", "libwayland-client", "wayland"),
    "wayland-cursor": ("libwayland-cursor0", "libwayland-cursor", "wayland"),
}
#: what Qt's X11 platform plugin loads besides Qt itself
XCB_PLUGIN_LIBRARIES = ("xcb-cursor", "xcb-icccm", "xcb-keysyms", "xcb-image", "xcb-render-util", "xkbcommon-x11",
                        "X11-xcb", "xcb-shape", "xcb-randr", "xcb-xkb", "xcb-util", "xcb-render", "xcb-shm",
                        "xcb-sync", "xcb-xfixes")
#: what a minimal Linux needs for the window (README lists the same)
BASE_LIBRARIES = ("EGL", "GL", "xkbcommon", "fontconfig", "dbus-1", "glib-2.0")
HEADLESS_PLATFORMS = ("offscreen", "minimal", "vnc", "eglfs", "linuxfb", "vkkhrdisplay", "cocoa", "windows",
                      "direct2d")
_SONAME = re.compile(r"lib([A-Za-z0-9_.+-]+?)\.so(?:\.[0-9]+)*")


def install_hint(libraries: list[str]) -> str:
    """The install commands for ``libraries`` on Debian/Ubuntu, Fedora and Arch."""
    known = [PACKAGES[name] for name in libraries if name in PACKAGES]
    if not known:
        return ""
    debian, fedora, arch = (sorted({p[i] for p in known}) for i in range(3))
    return ("install it with:\n"
            f"  Debian/Ubuntu: sudo apt install {' '.join(debian)}\n"
            f"  Fedora:        sudo dnf install {' '.join(fedora)}\n"
            f"  Arch:          sudo pacman -S {' '.join(arch)}")


def library_in(message: str) -> str | None:
    """The library an import error names ("libEGL.so.1: cannot open shared object file" → "EGL")."""
    match = _SONAME.search(message)
    return match.group(1) if match else None


#: what ``ldconfig -p`` writes after a library of this machine's word size (ctypes.util's own table)
_ABI = {"x86_64-64": "libc6,x86-64", "ppc64-64": "libc6,64bit", "sparc64-64": "libc6,64bit",
        "s390x-64": "libc6,64bit", "ia64-64": "libc6,IA-64"}


def cached_library_finder() -> Callable[[str], str | None]:
    """``ctypes.util.find_library`` answered from one ``ldconfig -p`` of the dynamic linker's cache (glibc):
    ``find_library`` runs it again on every call (~3 ms each, 16 names on an X11 desktop). Where ``ldconfig``
    cannot be run, ``find_library`` itself. (Imported here: only an X11 start looks libraries up.)"""
    import ctypes.util
    import platform
    import struct
    import subprocess

    bits = "-64" if struct.calcsize("l") == 8 else "-32"
    machine = platform.machine()
    abi = "(" + _ABI.get(machine + bits, "libc6")
    try:
        listing = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, check=True, timeout=10,
                                 env=dict(os.environ, LC_ALL="C", LANG="C")).stdout
    except (OSError, subprocess.SubprocessError):
        return ctypes.util.find_library
    sonames = [fields[0] for fields in (line.split() for line in os.fsdecode(listing).splitlines()[1:])
               if len(fields) >= 2 and fields[1].startswith(abi)]

    def find(name: str) -> str | None:
        prefix = f"lib{name}."
        return next((soname for soname in sonames if soname.startswith(prefix)), None)
    return find


def _import_qt() -> None:
    from PySide6 import QtGui, QtWidgets  # noqa: F401


def _connects(family: int, address: str | tuple[str, int]) -> bool:
    import socket

    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.settimeout(2.0)
            probe.connect(address)
        return True
    except OSError:
        return False


def x11_unreachable(display: str) -> str | None:
    """Why nothing answers at X11 ``DISPLAY`` (``[host]:number[.screen]``), or ``None`` (also when it cannot be
    told): a local display is a socket in ``/tmp/.X11-unix`` (or its Linux abstract twin), a remote one a TCP port
    from 6000 on (``ssh -X`` forwards ``localhost:10``)."""
    host, _, rest = display.rpartition(":")
    number = rest.split(".")[0]
    if not number.isdigit() or host.startswith("/"):  # a launchd socket path (macOS XQuartz) or unknown form
        return None
    if sys.platform == "win32":
        return None
    import socket

    if host in ("", "unix"):
        path = f"/tmp/.X11-unix/X{number}"
        if _connects(socket.AF_UNIX, path) or (sys.platform == "linux" and _connects(socket.AF_UNIX, "\0" + path)):
            return None
        return f"DISPLAY={display} names an X server that is not running here (nothing answers at {path})"
    port = 6000 + int(number)
    if _connects(socket.AF_INET6 if ":" in host.strip("[]") else socket.AF_INET, (host.strip("[]"), port)):
        return None
    return f"DISPLAY={display} names an X server that does not answer (nothing listens at {host}:{port})"


def wayland_unreachable(environ: Mapping[str, str]) -> str | None:
    """Why nothing answers at ``WAYLAND_DISPLAY`` (a socket name in ``XDG_RUNTIME_DIR``, or a path), or ``None``."""
    name = environ.get("WAYLAND_DISPLAY", "")
    if sys.platform == "win32" or not name:
        return None
    import socket

    runtime = environ.get("XDG_RUNTIME_DIR", "")
    path = name if os.path.isabs(name) else os.path.join(runtime, name)
    if not os.path.isabs(path):
        return None  # no runtime folder: cannot tell
    if _connects(socket.AF_UNIX, path):
        return None
    return f"WAYLAND_DISPLAY={name} names a Wayland compositor that is not running here (nothing answers at {path})"


def display_unreachable(environ: Mapping[str, str], platform: str) -> str | None:
    """Why the display the window would use does not answer, or ``None`` when one does (or it cannot be told)."""
    x11 = x11_unreachable(environ["DISPLAY"]) if environ.get("DISPLAY") and platform != "wayland" else None
    wayland = wayland_unreachable(environ) if environ.get("WAYLAND_DISPLAY") and platform != "xcb" else None
    tried = [reason for reason, set_ in ((x11, environ.get("DISPLAY") and platform != "wayland"),
                                         (wayland, environ.get("WAYLAND_DISPLAY") and platform != "xcb")) if set_]
    if not tried or any(reason is None for reason in tried):
        return None  # one of the displays the window may use answers
    return "; ".join(reason for reason in tried if reason)


def problem(environ: Mapping[str, str] | None = None, import_qt: Callable[[], None] = _import_qt,
            find_library: Callable[[str], str | None] | None = None,
            unreachable: Callable[[Mapping[str, str], str], str | None] = display_unreachable) -> str | None:
    """Why the window cannot start here, with what to install; ``None`` when nothing is missing."""
    environ = os.environ if environ is None else environ
    platform = environ.get("QT_QPA_PLATFORM", "").split(":")[0].strip().lower()
    unix_desktop = hasattr(os, "uname") and sys.platform not in ("darwin", "win32", "cygwin")
    if unix_desktop and platform not in HEADLESS_PLATFORMS:
        wants = "X11 (DISPLAY)" if platform == "xcb" else "Wayland (WAYLAND_DISPLAY)" if platform == "wayland" \
            else "X11 or Wayland (DISPLAY or WAYLAND_DISPLAY)"
        has_display = bool(environ.get("DISPLAY")) if platform == "xcb" else \
            bool(environ.get("WAYLAND_DISPLAY")) if platform == "wayland" else \
            bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))
        if not has_display:
            return (f"ztviewer's window needs a display, and no {wants} display is set here.\n"
                    "Run it from a desktop session (or with ssh -X), or use the command-line tools: "
                    "ztviewer info|check|convert|diff FILE (ztviewer --help).")
        reason = unreachable(environ, platform)
        if reason:
            return (f"ztviewer's window needs a display: {reason}.\n"
                    "Start the window from a desktop session (or with ssh -X), set DISPLAY / WAYLAND_DISPLAY to "
                    "the one in use, or use the command-line tools: ztviewer info|check|convert|diff FILE.")
    try:
        import_qt()
    except ImportError as exc:
        library = library_in(str(exc))
        what = f"the system library lib{library}" if library else "a system library"
        hint = install_hint([library] if library else list(BASE_LIBRARIES)) or install_hint(list(BASE_LIBRARIES))
        return (f"ztviewer's window cannot start: Qt needs {what}, which is not installed ({exc}).\n{hint}\n"
                "A minimal Linux needs: " + ", ".join(PACKAGES[n][0] for n in BASE_LIBRARIES) + " (Debian names).")
    uses_xcb = platform == "xcb" or (not platform and bool(environ.get("DISPLAY"))
                                     and not environ.get("WAYLAND_DISPLAY"))
    if not (unix_desktop and uses_xcb):
        return None
    find_library = find_library or cached_library_finder()
    # find_library finds nothing at all where ldconfig and a compiler are both missing: then do not guess
    if find_library("xcb"):
        missing = [name for name in XCB_PLUGIN_LIBRARIES if not find_library(name)]
        if missing:
            return ("ztviewer's window cannot start: Qt's X11 plugin needs "
                    + ", ".join(f"lib{m}" for m in missing) + f", not installed here.\n{install_hint(missing)}")
    return None
