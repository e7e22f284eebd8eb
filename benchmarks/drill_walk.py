"""One charge walked through `blueprint drill`: which rooms (packages) its consumer invocation passes
through, in order, and how often it comes back into a room it already left on the way down.

A room is one of the project's packages (drill, sandbox, handlers, redrive, preview) or a library the
walk crosses (boto3, botocore, moto, powertools); the standard library and everything else belong to
the room that called them. The walk follows the call stack (sys.setprofile) from the FIFO billing
pattern's first consumer poll that delivers a message (SqsEventSourceMapping.poll_once) to its return:
- `rooms` is the order in which rooms are first entered;
- a re-entry is a call into one of the project's rooms that is already on the stack below a
  different room (drill -> sandbox -> drill, sandbox -> botocore -> sandbox): our layers calling each
  other back (the libraries' own back and forth, moto <-> botocore, is theirs and not counted);
- `drill_sandbox_crossings` counts every call from one of those two rooms into the other.
The goal (issue 24): each room entered once on the way down, at most a handful of returns.

Last line: `drill_walk rooms=R reentries=N drill_sandbox_crossings=C aws_calls=A`.

Run: .venv/bin/python benchmarks/drill_walk.py
"""

import sys
from collections import Counter
from pathlib import Path

from integration_blueprint.drill.patterns import FifoBillingDriver
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill

ROOMS = (  # module prefix -> room, most specific first
    ("integration_blueprint.drill", "drill"), ("integration_blueprint.sandbox", "sandbox"),
    ("integration_blueprint.handlers", "handlers"), ("integration_blueprint.redrive", "redrive"),
    ("integration_blueprint.preview", "preview"), ("aws_lambda_powertools", "powertools"),
    ("boto3", "boto3"), ("botocore", "botocore"), ("moto", "moto"),
)


# The registered patches (integration_blueprint.core.patches) run as part of the library they change:
# a shortcut moto calls is moto's work, not a return into the sandbox.
PATCH_MODULES = ("integration_blueprint.sandbox.shortcuts", "integration_blueprint.sandbox.moto_fixes")


OURS = {"drill", "sandbox", "handlers", "redrive", "preview"}  # re-entries are counted into these


def room_of(frame) -> str | None:
    name = frame.f_globals.get("__name__", "")
    if "[" in name:  # a function's own copy of its handler module: `module[function-name]`
        name = name.split("[", 1)[0]
    if name in PATCH_MODULES or (name == "integration_blueprint.sandbox.emulator"
                                 and "<locals>" in frame.f_code.co_qualname):
        return None
    for prefix, room in ROOMS:
        if name == prefix or name.startswith(prefix + "."):
            return room
    return None  # the standard library and the rest: the caller's room


class Walk:
    def __init__(self):
        self.active = False
        self.done = False
        self.depth_at_start = 0
        self.stack: list[str] = []  # the room of every frame on the walked part of the stack
        self.order: list[str] = []
        self.reentries: Counter = Counter()
        self.crossings = 0
        self.aws_calls = 0

    def __call__(self, frame, event, _arg):
        if event not in ("call", "return") or self.done:
            return
        code = frame.f_code
        if not self.active:
            if event == "call" and code.co_name == "poll_once" and room_of(frame) == "sandbox" \
                    and "sqs_esm" in code.co_filename:
                self.active, self.stack = True, ["sandbox"]
                self.order.append("sandbox")
            return
        if event == "return":
            self.stack.pop()
            if not self.stack:
                self.active = False
                self.done = self.aws_calls > 0  # a poll that delivered nothing is not the walk
                if not self.done:
                    self.__init__()
            return
        caller = self.stack[-1]
        room = room_of(frame) or caller
        if room != caller:
            if room in self.stack and room in OURS:
                self.reentries[f"{caller} -> {room}"] += 1
            if {room, caller} == {"drill", "sandbox"}:
                self.crossings += 1
            if room not in self.order:
                self.order.append(room)
        if code.co_name == "_make_api_call" and room == "botocore":
            self.aws_calls += 1
        self.stack.append(room)


def main():
    walk = Walk()
    options = DrillOptions(records=2, seed=7, duplicates=0.0, crashes=0, transient=0.0, poison=0.0)
    sys.setprofile(walk)
    try:
        run_drill(options, drivers={"fifo_billing": FifoBillingDriver}, workers=1,
                  log_dir=Path("/tmp/blueprint-drill-walk"))
    finally:
        sys.setprofile(None)
    print("rooms, in the order first entered:", " -> ".join(walk.order))
    for path, count in walk.reentries.most_common():
        print(f"  re-entry {path}: {count}")
    print(f"drill_walk rooms={len(walk.order)} reentries={sum(walk.reentries.values())} "
          f"drill_sandbox_crossings={walk.crossings} aws_calls={walk.aws_calls}")


if __name__ == "__main__":
    main()
