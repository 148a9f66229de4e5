"""Qt-free state and decisions behind the views of an open file (no Qt here): what a view shows is decided here
and only rendered by :mod:`ztviewer.gui`, so it can be driven from a test or a notebook.

Where an open file's state lives — one :class:`~.file_session.FileSession` per tab:

- ``file_session``  the file, the selection, the shown bytes (a shard of a multi-file set), digest states, and
                    the parts below; every change is an :class:`~.events.Event` (``events``)
- ``selection``     what is selected (tree item, owning tensor, byte range)
- ``dims``          the plane of the inspect view (displayed axes, slice indices)
- ``edit_session``  unsaved edits and their undo history
- ``tree_state``    the tensor tree: row order (``tree_columns``), grouping (``tree_nodes``), name filter
                    (``tree_filter``), marks for problems found later and pending renames (``tree_marks``)
- ``decode_cache``  decoded tensor data (one byte budget for all files)
- ``view_registry`` which inspect view fits a tensor (priorities)

and the plain logic the views use: ``file_layout`` / ``layout_padding`` (byte map), ``properties`` (panel rows),
``digest_states``, ``inspect_data`` (tensor values for the views),
``formatting``, ``value_text`` (typed attribute values), ``conversion`` (Save As checks).

This package imports no submodule itself (importing one costs only what that one needs).
"""
