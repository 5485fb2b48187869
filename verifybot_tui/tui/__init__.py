"""The Textual front end: four panes around the verify loop (``VerifyBotApp``)."""
