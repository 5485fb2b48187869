"""Deciding what a run showed.

Criteria, sanity signs, verdicts, judges, recipes and their reports.
"""
