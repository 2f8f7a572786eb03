"""``python -m heartbeat``: the same as the ``heartbeat`` command."""

import sys

from .cli import main

sys.exit(main())
