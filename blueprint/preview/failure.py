"""A run that could not judge the program, as every report tells it: what failed, where, how to fix.

A component that refused an argument, a program that raised, a stack or policy config the run
could not read, a policy pack that failed, and a failure of the tool itself all still leave a
report in the format asked for (SARIF `executionSuccessful: false` with the message and the
program's file:line, a markdown section, a JSON `error`), and the run exits 2.
"""

from __future__ import annotations

import traceback
from dataclasses import dataclass
from typing import Any

from integration_blueprint.preview.analyzer import AnalyzerError
from integration_blueprint.preview.policy_config import PolicyConfigError
from integration_blueprint.preview.project import ProgramError

# kind -> (what failed, how to fix it); the message itself says what exactly and, where it can, the fix.
KINDS = {
    "refused": ("A component refused one of its arguments",
                "Change the argument the message names, where the program passes it; the component refuses "
                "it the same way under `pulumi preview`."),
    "program": ("The program could not be run",
                "Fix what the message names (the program's code where it raised, or its project or stack "
                "config); it fails the same way under `pulumi preview`."),
    "policy-config": ("The policy config could not be used",
                      "Fix the policy config file the message names (its policies, levels and settings must be "
                      "the pack's: `blueprint policy ls` lists them)."),
    "policy-pack": ("A policy pack failed",
                    "Check that each --policy-pack names a policy pack folder whose dependencies are installed "
                    "(`npm install` in a Node.js pack, the virtualenv its PulumiPolicy.yaml names for a Python "
                    "one); the pack and its own error are named above."),
    "tool": ("The offline preview itself failed (a bug in blueprint, not in the program)",
             "Report it with this message; `pulumi preview --policy-pack` still judges the program."),
}


@dataclass(frozen=True)
class RunFailure:
    kind: str  # a key of KINDS
    message: str
    file: str = ""  # the program's file and line where it failed, when known
    line: int = 0
    secrets: tuple[Any, ...] = ()  # values the run knew to be secret (the reports mask them)

    @property
    def title(self) -> str:
        return KINDS[self.kind][0]

    @property
    def fix(self) -> str:
        return KINDS[self.kind][1]

    @property
    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.file else ""


def from_exception(exc: BaseException) -> RunFailure:
    """The failure an exception stands for: the user's to fix (a ProgramError, a policy config or
    policy pack error) or the tool's own (anything else, with its traceback)."""
    if isinstance(exc, ProgramError):
        kind = "tool" if exc.engine_fault else "refused" if exc.refused else "program"
        return RunFailure(kind, str(exc), file=exc.file, line=exc.line, secrets=tuple(exc.secrets))
    if isinstance(exc, PolicyConfigError):
        return RunFailure("policy-config", str(exc))
    if isinstance(exc, AnalyzerError):
        return RunFailure("policy-pack", str(exc), secrets=exc.secrets)
    return RunFailure("tool", "".join(traceback.format_exception(exc)).strip())
