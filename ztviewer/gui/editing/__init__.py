"""Editing an open file: undoable edits (QUndoStack over the codec's edit commands), the attributes editor,
renaming / deleting tensors in the tree, and saving (Save / Save As) on a worker."""
