"""`python -m blueprint <command>`: see blueprint/cli.py."""

import sys

from blueprint.cli import main

# Guarded: the drill's worker processes (spawned) import this module without running it.
if __name__ == "__main__":
    sys.exit(main())
