"""One widget per pane: conversation, code, output, history, and the bars."""
