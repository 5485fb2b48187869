"""`verifybot mcp`: VerifyBot's targets, verdicts and chat bridge for other agents (MCP).

A front end beside cli/ and tui/: it drives the same loop (batch, llm, targets, core)
for a client that speaks the Model Context Protocol, over stdio or streamable HTTP.
What a client sends is a file from others: the sandbox applies, targets without one
and package installs are reachable only where the user's own config says so.
"""
