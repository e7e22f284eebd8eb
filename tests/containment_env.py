"""Helpers for the tests of code under test in its sandbox (integration_blueprint.containment)."""

import textwrap
from pathlib import Path
from typing import Any, Callable, Optional, Union


def processes_with_argument(marker: str) -> list[int]:
    """The host's processes whose command line holds `marker` (a daemon meant to outlive its sandbox)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker in (entry / "cmdline").read_bytes().decode(errors="replace"):
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def team_function(staging: Path, code: Union[str, dict[str, str]], *, handler: str = "app.handler",
                  name: str = "team-fn", answer: Optional[Callable] = None, **spec: Any) -> tuple[Any, list]:
    """(functions, incidents): a team's function whose archive holds `code` (app.py's text, or the
    files by path) with the Powertools layer, as the sandbox runs it; `spec` sets FunctionSpec's
    other fields (timeout, memory_mb, environment, contained, ...); `answer` serves its AWS calls
    (default: none)."""
    from integration_blueprint.sandbox.execution_environment import (
        POWERTOOLS_PACKAGES,
        RUNTIME_PACKAGES,
        Environments,
        FunctionSpec,
        lay_out,
    )

    root = staging / "code"
    for path, text in ({"app.py": code} if isinstance(code, str) else code).items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text))
    incidents: list = []
    settings = {"environment": {}, "timeout": 300, "memory_mb": 128, **spec}
    function = FunctionSpec(name=name, arn=f"arn:aws:lambda:eu-west-1:123456789012:function:{name}",
                            handler=handler, code_root=root, archive="FileArchive ./app",
                            layers=[lay_out(staging / "powertools", POWERTOOLS_PACKAGES)], staging=staging,
                            time_scale=0.002, **settings)
    return Environments(function, "eu-west-1", lay_out(staging / "runtime", RUNTIME_PACKAGES),
                        answer=answer or (lambda call: {"failure": "no AWS here"}), on_incident=incidents.append), incidents
