"""`python -m integration_blueprint <command>`: the same as the `blueprint` command (cli.py)."""

from integration_blueprint.cli import entry

# Guarded: the drill's worker processes (spawned) import this module without running it.
if __name__ == "__main__":
    entry()
