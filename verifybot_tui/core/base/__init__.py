"""The vocabulary every room shares: ports, errors, outcomes, safe text, TOML reading."""
