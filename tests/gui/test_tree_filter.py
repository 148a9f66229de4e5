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
    assert file_view.match_label.text() == "3 / 6"
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
    assert file_view.filter_edit.text() == "q_proj" and file_view.match_label.text() == "3 / 6"
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
