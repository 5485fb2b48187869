"""Targets: the machines programs run on (this one, or a Pi over SSH)."""
