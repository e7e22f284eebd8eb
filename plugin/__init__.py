"""The multi-language component package: this folder is a Pulumi plugin (PulumiPlugin.yaml, runtime
python) that serves the four components to programs in any Pulumi language, and it ships inside
the wheel, so an installed `blueprint` constructs a TypeScript program's components offline and
writes SDKs without the Pulumi CLI.

    provider        the component provider: the documented schema, refusals as input-property errors
    schema          prints the schema the provider serves (run in a process of its own)
    typescript_sdk  the TypeScript SDK as an npm package (package.json, index.js, index.d.ts)

Public: `PLUGIN_DIR` (this folder, as `pulumi package add` and the offline engine start it),
`package_schema()`.
"""

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["PLUGIN_DIR", "SchemaError", "package_schema"]

PLUGIN_DIR = Path(__file__).resolve().parent
SCHEMA_TIMEOUT_SECONDS = 120


class SchemaError(Exception):
    """The plugin could not describe itself (a broken installation)."""


def package_schema() -> dict[str, Any]:
    """The package schema the plugin serves, from a process of its own (see schema.py)."""
    done = subprocess.run([sys.executable, "-m", "integration_blueprint.plugin.schema"], capture_output=True,
                          text=True, timeout=SCHEMA_TIMEOUT_SECONDS)
    if done.returncode != 0:
        raise SchemaError(f"the component plugin could not print its schema: {done.stderr.strip()[-2000:]}")
    return json.loads(done.stdout)
