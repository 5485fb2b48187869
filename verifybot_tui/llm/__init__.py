"""LLM backends: a chat site driven in a browser, or answers replayed from a transcript."""
