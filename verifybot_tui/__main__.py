"""``python -m verifybot_tui`` is the same as the ``verifybot`` command."""

from verifybot_tui.cli.entry import main

raise SystemExit(main())
