"""The window's menus are a typed registry (window_actions.WindowMenus): editing puts its actions in by reference."""
from __future__ import annotations


def texts(actions):
    return [a.text() if not a.isSeparator() else "|" for a in actions]


def test_edit_actions_sit_where_the_registry_says(window):
    menus, editing, actions = window.actions_.menus, window.editing, window.actions_
    bar_menus = [a.menu() for a in window.menuBar().actions()]
    assert bar_menus == [menus.file, menus.edit, menus.view, menus.tools, menus.help]
    file_actions = menus.file.actions()
    save = file_actions.index(editing.save_action)
    assert file_actions[save + 1] is editing.save_as_action and file_actions[save + 2].isSeparator()
    assert file_actions[save + 3] is actions.reload
    assert menus.recent.menuAction() in file_actions
    assert menus.edit.actions()[:3] == [editing.undo_action, editing.redo_action, menus.edit.actions()[2]]
    assert menus.edit.actions()[2].isSeparator() and menus.edit.actions()[3] is actions.find
    assert menus.edit.actions()[-2:] == [editing.rename_action, editing.delete_action]
    view_actions = menus.view.actions()
    toolbar_toggle = view_actions.index(menus.toolbar.toggleViewAction())
    assert view_actions[toolbar_toggle - 2:toolbar_toggle] == [editing.attributes_dock.toggleViewAction(),
                                                               editing.history_dock.toggleViewAction()]
    shown = menus.toolbar.actions()
    assert shown[shown.index(actions.reload) - 1] is editing.save_action
    assert texts(menus.tools.actions()) == ["C&heck File", "&Verify All Digests", "Verify &Selected",
                                            "&Cancel Verification"]
