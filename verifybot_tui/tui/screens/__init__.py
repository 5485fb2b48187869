"""Screens, each with its stylesheet beside it (``name.py`` + ``name.tcss``)."""
