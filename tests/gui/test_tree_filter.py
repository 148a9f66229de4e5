"""Filtering the tensor tree: the view shows the tree model itself until a filter is typed, then the filter
proxy (issue 4: laying out 10,000 rows through the proxy costs several Python calls a row)."""
from __future__ import annotations

from PySide6.QtCore import QItemSelectionModel


def set_filter(view, text: str) -> None:
    view.filter_edit.setText(text)
    view._apply_filter()


def view_index(view, tensor, role=None):
    return view.filter_switch.to_view(view.tree_model.index_of(tensor, role))


def test_the_proxy_stands_between_only_while_filtering(file_view):
    assert file_view.tree.model() is file_view.tree_model
    set_filter(file_view, "layers")
    assert file_view.tree.model() is file_view.proxy
    assert file_view.match_label.text() == "3 of 6 tensors"
    set_filter(file_view, "   ")
    assert file_view.tree.model() is file_view.tree_model


def test_current_row_and_expanded_rows_survive_filtering(file_view, sample_file):
    tree = file_view.tree
    csr, embed = sample_file.tensor("sparse.csr"), sample_file.tensor("model.embed.weight")
    tree.expand(view_index(file_view, embed))
    assert file_view.select_item(csr, "indices")
    set_filter(file_view, "csr")
    assert file_view.current_item() is csr.components["indices"]
    assert tree.isExpanded(view_index(file_view, csr))
    assert not view_index(file_view, embed).isValid()
    set_filter(file_view, "")
    assert file_view.current_item() is csr.components["indices"]
    assert tree.isExpanded(view_index(file_view, embed))      # hidden while filtered, expanded again after


def test_selected_rows_survive_filtering(file_view, sample_file):
    csr, bias = sample_file.tensor("sparse.csr"), sample_file.tensor("bias")
    assert file_view.select_item(csr)
    file_view.tree.selectionModel().select(
        view_index(file_view, bias), QItemSelectionModel.SelectionFlag.Select | QItemSelectionModel.SelectionFlag.Rows)
    for pattern in ("s", ""):
        set_filter(file_view, pattern)
        assert {id(item) for item in file_view.selected_items()} == {id(csr), id(bias)}
        assert file_view.current_item() is csr


def test_selection_follows_the_tree_after_a_switch(file_view, sample_file):
    embed, bias = sample_file.tensor("model.embed.weight"), sample_file.tensor("bias")
    chosen = []
    file_view.selection_changed.connect(chosen.append)
    set_filter(file_view, "embed")
    assert file_view.select_item(embed)
    data = embed.components["data"]
    assert file_view.hex_view.selection() == (data.offset, data.length)
    set_filter(file_view, "")
    assert file_view.select_item(bias)
    assert chosen[-1] is bias and file_view.hex_view.selection()[0] == bias.components["data"].offset


def test_selecting_a_filtered_out_tensor_clears_the_filter(file_view, sample_file):
    set_filter(file_view, "embed")
    assert file_view.select_item(sample_file.tensor("bias"))
    assert file_view.filter_edit.text() == "" and file_view.tree.model() is file_view.tree_model


def test_a_selection_made_elsewhere_clears_the_filter_hiding_it_as_the_tree_does(file_view, sample_file):
    """The session selects a filtered-out part (the Problems panel, the file map, a script): the view clears the
    filter, makes the row current and keeps the hex view on the selection, as select_item does."""
    set_filter(file_view, "embed")
    csr = sample_file.tensor("sparse.csr")
    indices = csr.components["indices"]
    file_view.session.select(indices, csr)
    assert file_view.filter_edit.text() == "" and file_view.tree.model() is file_view.tree_model
    assert file_view.current_item() is indices
    assert file_view.hex_view.selection() == (indices.offset, indices.length)
    set_filter(file_view, "embed")
    assert file_view.select_item(None) and file_view.current_item() is sample_file      # the file row: never hidden
    assert file_view.filter_edit.text() == "embed"


def test_grouped_filter_expands_matching_groups(file_view, sample_file):
    file_view.set_grouped(True)
    set_filter(file_view, "q_proj")
    tensor = sample_file.tensor("model.layers.1.attn.q_proj.weight")
    index = view_index(file_view, tensor)
    assert index.isValid() and file_view.tree.isExpanded(index.parent())
    set_filter(file_view, "")
    assert file_view.tree.isExpanded(view_index(file_view, tensor).parent())



def test_the_view_follows_the_filter_and_grouping_set_on_its_session(file_view, sample_file):
    """The session's tree state decides; the view only renders it (a script or a notebook drives the same tab)."""
    tree = file_view.session.tree
    tree.set_pattern("q_proj")
    assert file_view.filter_edit.text() == "q_proj" and file_view.match_label.text() == "3 of 6 tensors"
    assert file_view.tree.model() is file_view.proxy
    tree.set_grouped(True)                                 # few matches in a grouped tree: their groups open
    assert file_view.group_button.isChecked()
    index = view_index(file_view, sample_file.tensor("model.layers.2.attn.q_proj.weight"))
    assert index.isValid() and file_view.tree.isExpanded(index.parent())
    tree.set_pattern("")
    assert file_view.filter_edit.text() == "" and file_view.match_label.text() == ""
    assert file_view.tree.model() is file_view.tree_model
    tree.set_grouped(False)
    assert not file_view.group_button.isChecked()


def test_a_group_row_under_a_filter_totals_its_matches(file_view, sample_file):
    """The group rows shown under a filter count and size the tensors shown below them, not all their members."""
    from PySide6.QtCore import Qt

    from ztviewer.gui.models.tree_roles import Column
    from ztviewer.session.formatting import human_bytes

    file_view.set_grouped(True)
    set_filter(file_view, "q_proj")
    matches = [t for t in sample_file.tensors if "q_proj" in t.name]

    def model_row():        # the group "model": model.embed.weight and model.layers.*
        index = view_index(file_view, matches[0])
        while index.data() != "model":
            index = index.parent()
        return index

    group = model_row()
    members = [t for t in sample_file.tensors if t.name.startswith("model.")]
    assert len(members) > len(matches) == 3
    assert group.siblingAtColumn(Column.SHAPE).data() == f"3 of {len(members)} tensors"
    shown_bytes = sum(t.stored_nbytes for t in matches)
    assert group.siblingAtColumn(Column.STORED).data() == human_bytes(shown_bytes)
    tip = group.siblingAtColumn(Column.STORED).data(Qt.ItemDataRole.ToolTipRole)
    assert tip.startswith(f"{shown_bytes:,} bytes") and f"({len(members)} tensors)" in tip
    file_row = file_view.tree.model().index(0, Column.SHAPE)
    assert file_row.data() == file_view.match_label.text() == f"3 of {len(sample_file.tensors)} tensors"
    set_filter(file_view, "")
    group = model_row()
    assert group.siblingAtColumn(Column.SHAPE).data() == f"{len(members)} tensors"
    assert group.siblingAtColumn(Column.STORED).data() == human_bytes(sum(t.stored_nbytes for t in members))


def test_a_selected_group_s_properties_total_its_matches_and_follow_the_filter(qtbot, window, sample_file):
    """The properties panel of a selected group says what its row says (``3 of 4 tensors``, the matches' bytes)
    and is filled again when the filter changes while the group stays selected."""
    from ztviewer.session.formatting import exact_bytes
    from ztviewer.workers.tasks import OpenedFile

    view = window.opener.show_file(OpenedFile(sample_file))
    tensors = view.tensor_file.tensors
    members = [t for t in tensors if t.name.startswith("model.")]
    matches = [t for t in members if "q_proj" in t.name]
    assert len(members) > len(matches) == 3
    view.set_grouped(True)
    set_filter(view, "q_proj")
    group = view_index(view, matches[0])
    while group.data() != "model":
        group = group.parent()
    view.tree.setCurrentIndex(group)
    panel = window.properties_panel

    def says(count: str, shown: list) -> None:
        assert panel.value_of("Group", "prefix") == "model"
        assert panel.value_of("Group", "tensors") == count
        assert panel.value_of("Group", "stored bytes") == exact_bytes(sum(t.stored_nbytes for t in shown))

    says(f"3 of {len(members)} tensors", matches)
    assert panel.value_of("Group", "stored bytes, whole group") == exact_bytes(sum(t.stored_nbytes for t in members))
    set_filter(view, "model")                      # the group stays selected; its properties follow the filter
    assert view.current_item().prefix == "model"
    says(f"{len(members)} of {len(members)} tensors", members)
    set_filter(view, "")
    says(f"{len(members)} tensors", members)
    assert panel.value_of("Group", "stored bytes, whole group") is None
