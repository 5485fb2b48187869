"""VerifyBot TUI: the hands of the chat-LLM debugging loop.

The core (``verifybot_tui.core``) holds the loop and everything it needs and
imports nothing from Textual, so the headless CLI and the TUI drive the same
loop and tests can run it without a terminal.
"""

__version__ = "0.1.0"
