"""``python -m generator`` runs the ``carnet`` command line."""

import sys

from generator.cli import main

sys.exit(main())
