"""What each function's code asked AWS for against what its role grants, in a pattern's report:
every call refused (AccessDenied, as AWS refuses it) is a failure named with the function, the
action, the resource and the statement to add (or the deny to lift); every action the role grants
that the code never used is a least-privilege note. The decisions are the sandbox's
(sandbox/authorization.py), taken outside the code under test.
"""

from __future__ import annotations

import json
from typing import Any, Optional

from integration_blueprint.drill.report import PatternReport

# How many refusals and unused grants a note lists per function (the JSON has them all).
SHOWN = 5


def add_permissions(report: PatternReport, authorizer: Optional[Any]) -> None:
    """The pattern's report gets `permissions` (per function: role, actions used, refusals, unused
    grants), `access_denied` (refused calls, a failure) and one note per refusal and per function
    with unused grants."""
    if authorizer is None:
        return
    usage = authorizer.usage()
    report.permissions = usage
    report.access_denied = sum(d["count"] for entry in usage.values() for d in entry.get("denied", []))
    for function, entry in usage.items():
        if "not_evaluated" in entry:
            report.notes.append(f"{function}: permissions not evaluated: {entry['not_evaluated']}")
            continue
        for denied in entry["denied"][:SHOWN]:
            fix = (f"add to its role ({entry['role']}): {json.dumps(denied['statement_to_add'])}"
                   if "statement_to_add" in denied else denied["fix"])
            absent = (f" (conditions on {', '.join(denied['conditions_absent'])} evaluated as absent from the request)"
                      if denied.get("conditions_absent") else "")
            report.notes.append(f"{function}: AccessDenied {denied['count']}x: {denied['action']} on "
                                f"{denied['resource']}: {denied['message']}; fix: {fix}{absent}")
        if len(entry["denied"]) > SHOWN:
            report.notes.append(f"{function}: {len(entry['denied']) - SHOWN} more refused action(s) in the JSON report")
        if entry["unused_grants"]:
            shown = ", ".join(entry["unused_grants"][:SHOWN * 2])
            more = f" and {len(entry['unused_grants']) - SHOWN * 2} more" if len(entry["unused_grants"]) > SHOWN * 2 else ""
            report.notes.append(f"{function}: least privilege: its role grants {shown}{more}, which its code never "
                                f"used in this drill (used: {', '.join(entry['used']) or 'nothing'})")
