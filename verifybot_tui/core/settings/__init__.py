"""The user's settings: the config file, its export and import, UI state, secrets."""
