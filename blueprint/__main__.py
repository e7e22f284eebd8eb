"""`python -m integration_blueprint <command>`: the same as the `blueprint` command (cli.py)."""

import sys

from integration_blueprint.cli import main

# Guarded: the drill's worker processes (spawned) import this module without running it.
if __name__ == "__main__":
    sys.exit(main())
