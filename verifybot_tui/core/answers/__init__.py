"""An LLM's answer turned into program files.

Extraction, languages, dependencies, versions and the user's edits.
"""
