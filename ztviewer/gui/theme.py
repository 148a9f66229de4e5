"""Colours that follow the light/dark palette: digest states, problems, file-map and hex tints."""
from __future__ import annotations

from PySide6.QtGui import QColor, QGuiApplication, QPalette

_FIXED_KIND_HUES = {
    "magic": QColor(0x8E, 0x44, 0xAD), "header": QColor(0x5D, 0x6D, 0x7E), "header-length": QColor(0x7B, 0x5E, 0xA7),
    "shape": QColor(0x4A, 0x69, 0x8C), "ranks": QColor(0x6C, 0x7A, 0x89), "manifest": QColor(0x2E, 0x86, 0xC1),
    "footer": QColor(0x11, 0x7A, 0x65), "padding": QColor(0xC8, 0xCD, 0xD2), "gap": QColor(0xE6, 0x7E, 0x22),
    "overlap": QColor(0xE7, 0x4C, 0x3C), "unparsed": QColor(0x95, 0x9D, 0xA6),
    # zTensor v2: a blob several parts reference, the seek table inside a zstd-seekable part, and what earlier
    # append generations left behind (drawn paler than the current manifest and footer)
    "shared": QColor(0x16, 0xA0, 0x85), "seek-table": QColor(0x34, 0x49, 0x5E),
    "old-manifest": QColor(0x9C, 0xB8, 0xD4), "old-footer": QColor(0x8F, 0xBF, 0xB2),
    "old-blob": QColor(0xB9, 0xAE, 0xC8),
}
STRUCTURE_KINDS = ("magic", "header-length", "header", "shape", "ranks", "manifest", "footer", "old-manifest",
                   "old-footer")
_GOLDEN = 0.618033988749895


def is_dark(palette: QPalette | None = None) -> bool:
    palette = palette or QGuiApplication.palette()
    return palette.color(QPalette.ColorRole.Window).lightnessF() < 0.5


def ok_color() -> QColor:
    return QColor(0x5F, 0xD0, 0x7A) if is_dark() else QColor(0x1E, 0x84, 0x49)


def error_color() -> QColor:
    return QColor(0xFF, 0x6B, 0x6B) if is_dark() else QColor(0xC0, 0x39, 0x2B)


def warning_color() -> QColor:
    return QColor(0xF5, 0xB0, 0x41) if is_dark() else QColor(0xB9, 0x77, 0x0E)


def muted_color() -> QColor:
    return QGuiApplication.palette().color(QPalette.ColorGroup.Disabled, QPalette.ColorRole.Text)


def tensor_color(tensor_index: int) -> QColor:
    """A distinct, readable hue per tensor (golden-ratio hue steps)."""
    hue = (0.55 + tensor_index * _GOLDEN) % 1.0
    if is_dark():
        return QColor.fromHsvF(hue, 0.55, 0.80)
    return QColor.fromHsvF(hue, 0.50, 0.88)


def kind_color(kind: str, tensor_index: int | None = None) -> QColor:
    if kind == "blob" and tensor_index is not None:
        return tensor_color(tensor_index)
    color = _FIXED_KIND_HUES.get(kind, QColor(0x7F, 0x8C, 0x8D))
    return color.darker(170) if is_dark() and kind == "padding" else color


def quiet_text(palette: QPalette) -> QColor:
    """Text drawn quieter than the rest (zero bytes, dots for unprintable ones) yet readable over every tint the
    hex view paints, its selection included (the Disabled text colour was grey on light blue there): the text
    colour mixed 62 % with the base."""
    text, base = palette.color(QPalette.ColorRole.Text), palette.color(QPalette.ColorRole.Base)
    return QColor.fromRgbF(0.62 * text.redF() + 0.38 * base.redF(), 0.62 * text.greenF() + 0.38 * base.greenF(),
                           0.62 * text.blueF() + 0.38 * base.blueF())


def tint(color: QColor, alpha: float) -> QColor:
    tinted = QColor(color)
    tinted.setAlphaF(alpha)
    return tinted
