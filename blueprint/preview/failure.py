"""A run that could not judge the program, as every report tells it: what failed, where, how to fix.

A component that refused an argument, a program that raised, a stack or policy config the run
could not read, a policy pack given with --policy-pack that failed, and a failure of the gate
itself all still leave a report in the format asked for (SARIF `executionSuccessful: false` with
the message and the program's file:line, a markdown section, a JSON `error`), and the run exits 2.

Whose failure it is comes from evidence, not from the message's words: a failure raised in the
gate's own code (the shim or preload in the program's process: its innermost frame in our files,
language_host.raised_in_gate), in the engine, the component plugin or blueprint's own policy pack
is "the gate failed", naming the part (`part`); a failure the sandbox's walls caused (a path it hid
or kept read-only that `pulumi preview` would give the program: program_walls.sandbox_blame) is the
sandbox's, naming the path and how to grant it; only the program's own errors say that `pulumi
preview` fails the same way.
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
    "sandbox": ("The gate's sandbox kept from the program what `pulumi preview` would give it",
                "Grant what the message names (`blueprint preview --allow-read PATH` for a path to read), or have "
                "the program write inside its repository or the temporary folder; this is the gate's walls, not "
                "the program's fault (`blueprint docs architecture` lists what a program sees and why)."),
    "policy-config": ("The policy config could not be used",
                      "Fix the policy config file the message names (its policies, levels and settings must be "
                      "the pack's: `blueprint policy ls` lists them)."),
    "policy-pack": ("A policy pack failed",
                    "Check that each --policy-pack names a policy pack folder whose dependencies are installed "
                    "(`npm install` in a Node.js pack, the virtualenv its PulumiPolicy.yaml names for a Python "
                    "one); the pack and its own error are named above."),
    "tool": ("The gate failed (a failure of blueprint's offline preview, not of the program)",
             "Report it with this message; `pulumi preview --policy-pack` still judges the program."),
}
# The part of the gate a failure of its own is told by when nothing names another.
GATE_PARTS = {"engine": "the offline engine", "pack": "the policy pack (blueprint's own)", "tool": "blueprint"}


@dataclass(frozen=True)
class RunFailure:
    kind: str  # a key of KINDS
    message: str
    file: str = ""  # the program's file and line where it failed, when known
    line: int = 0
    secrets: tuple[Any, ...] = ()  # values the run knew to be secret (the reports mask them)
    part: str = ""  # of a failure of the gate ("tool"): which part of it failed

    @property
    def title(self) -> str:
        if self.kind == "tool" and self.part:
            return f"The gate failed: {self.part} (a failure of blueprint's offline preview, not of the program)"
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
        part = exc.tool_part or (GATE_PARTS["engine"] if exc.engine_fault else "")
        kind = "tool" if part else "refused" if exc.refused else "sandbox" if exc.sandbox else "program"
        return RunFailure(kind, str(exc), file=exc.file, line=exc.line, secrets=tuple(exc.secrets), part=part)
    if isinstance(exc, PolicyConfigError):
        return RunFailure("policy-config", str(exc))
    if isinstance(exc, AnalyzerError):
        if exc.own_pack:  # blueprint's own pack failing is the gate failing: no flag of the user's is to blame
            return RunFailure("tool", str(exc), secrets=exc.secrets, part=GATE_PARTS["pack"])
        return RunFailure("policy-pack", str(exc), secrets=exc.secrets)
    return RunFailure("tool", "".join(traceback.format_exception(exc)).strip(), part=GATE_PARTS["tool"])
