"""The verify loop and what it needs; imports nothing from Textual (a test keeps it so)."""
