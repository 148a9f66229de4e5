"""The controls' flow layout: wraps its widgets, remembers its height per width until they change."""
from PySide6.QtWidgets import QPushButton, QWidget

from ztviewer.gui.views.inspect.flow_layout import FlowLayout


def _holder(qtbot, texts):
    holder = QWidget()
    qtbot.addWidget(holder)
    layout = FlowLayout(holder, spacing=4)
    buttons = [QPushButton(text) for text in texts]
    for button in buttons:
        layout.addWidget(button)
    return holder, layout, buttons


def test_height_per_width_is_laid_out_once_and_again_when_a_widget_changes(qtbot, monkeypatch):
    holder, layout, buttons = _holder(qtbot, ["one", "two", "three", "four", "five"])
    holder.show()
    one_line = layout.heightForWidth(2000)
    narrow = sum(b.sizeHint().width() for b in buttons[:2]) + 10
    wrapped = layout.heightForWidth(narrow)
    assert wrapped > one_line   # wraps onto more lines

    calls = []
    real = FlowLayout._do_layout
    monkeypatch.setattr(FlowLayout, "_do_layout", lambda self, rect, test: calls.append(test) or real(self, rect, test))
    assert layout.heightForWidth(narrow) == wrapped and calls == []   # asked again: remembered

    for button in buttons[1:]:
        button.hide()                          # what is left fits one line: the height follows
    assert layout.heightForWidth(narrow) == one_line and calls == [True]
    for button in buttons[1:]:
        button.show()
    assert layout.heightForWidth(narrow) == wrapped   # shown again: wraps again
    wide = sum(b.sizeHint().width() for b in buttons) + 40
    assert layout.heightForWidth(wide) == one_line
    buttons[0].setText("a much longer label " * 4)   # one widget grows: laid out afresh, now on two lines
    assert buttons[0].sizeHint().width() > 100
    assert layout.heightForWidth(wide) > one_line
