"""`python -m blueprint <command>`: see blueprint/cli.py."""

import sys

from blueprint.cli import main

sys.exit(main())
