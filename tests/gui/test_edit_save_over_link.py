"""Save As onto a file that another tab opened through a symbolic link: that tab is recognised as showing it."""
import os

from tests.gui.test_edit_attributes import discard_on_teardown, make_file, opened  # noqa: F401
from tests.gui.test_edit_save_over_open import answering, save_as
from ztviewer.codec.edit import RenameTensor


def test_save_as_onto_a_file_open_through_a_symlink(qtbot, window, tmp_path):
    source, target = make_file(tmp_path, name="src.zt"), make_file(tmp_path, name="target.zt")
    link = tmp_path / "link.zt"
    os.symlink(target, link)
    source_view, _ = opened(qtbot, window, source)
    target_view, target_session = opened(qtbot, window, link)
    target_session.push(RenameTensor("b", "from_target"))
    window.tabs.setCurrentWidget(source_view)
    source_view.edit_session.push(RenameTensor("a", "from_src"))
    asked = answering(window, False)
    save_as(window, source_view, target)
    assert asked == [target_view]
