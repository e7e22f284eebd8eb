"""Running the policy pack over a small program written in a test: record it (known values, or a
first preview's unknowns), analyse it with the session's real pack, and pick a rule's verdicts."""

from __future__ import annotations

import json

from integration_blueprint.preview.recording import record_program

SKIPPED = "can't run policy"


def analyse(analyzer, program, *, config=None, unknowns=False):
    analyzer.configure(config or {})
    return analyzer.analyze(record_program(program, stack="test", unknowns=unknowns))


def flagged(violations, policy):
    return [v for v in violations if v.policy == policy and SKIPPED not in v.message]


def skipped(violations, policy):
    return [v for v in violations if v.policy == policy and SKIPPED in v.message]


def resource_names(violations):
    return sorted(v.urn.rsplit("::", 1)[-1] for v in violations)


def document(*statements) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def allow(actions, resources="*", **extra) -> dict:
    return {"Effect": "Allow", "Action": actions, "Resource": resources, **extra}
