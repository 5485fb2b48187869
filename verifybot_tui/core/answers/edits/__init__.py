"""Edits an answer makes to a conversation's project tree: the readers of each form
(SEARCH/REPLACE, unified diffs, one function spliced, elisions, edits outside fences),
the sentences that remove and rename files, and their application (tree_edits).
``core.answers.tree_changes`` is the entry: ``plan_update``."""
