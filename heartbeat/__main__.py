"""``python -m heartbeat``: the same as the ``heartbeat`` command."""

import sys

from .cli.main import main

sys.exit(main())
