"""The `verifybot` commands: the entry (parser and dispatch), each command, and the run printer."""
