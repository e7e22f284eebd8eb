"""Accepted findings, each with its reason: where the code is, and per stack.

In the program's own code, a comment on the line that declares a resource, or alone on the line
above it, in the program's language:

    queue = aws.sqs.Queue("audit", ...)  # blueprint: ignore[sqs-queue-encrypted-at-rest] holds no customer data
    // blueprint: ignore[iam-no-wildcard-actions, dlq-has-depth-alarm] the vendor's role, reviewed in SEC-142
    const role = new aws.iam.Role("vendor", {...});

The declaring line is the one every report points at for the resource (preview/locations.py: the
user's own call that declared it, joined by type and name); a component's children are declared
where the component is, so one comment there covers what it creates. A comment on no resource's
line, like an entry that matches no finding, is reported as suppressing nothing.

Per stack, in the stack file as the config key `blueprint:suppressions` (Pulumi keeps any
namespaced key, and `pulumi config` rewrites the file without losing it):

    config:
      blueprint:suppressions:
        - resource: audit            # a resource's name or its URN
          policy: sqs-queue-encrypted-at-rest
          reason: holds no customer data (SEC-141)
          expires: 2027-03-31        # optional: from the day after, the finding counts again

A suppression needs a reason and a policy the pack has: without them the preview refuses to run
(exit 2), since a misspelt name would suppress nothing and a silent one would explain nothing. An
expired one no longer suppresses. Every suppression is reported with its reason (and whether it
applied), in every format; a suppressed mandatory violation does not fail the run.
"""

from __future__ import annotations

import datetime
import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Optional

from integration_blueprint.core.conventions import SUPPRESSIONS_SECTION
from integration_blueprint.preview.locations import Locator
from integration_blueprint.preview.policy_config import PolicyConfigError
from integration_blueprint.preview.project import BUILT, NOT_PROGRAM, own_files

CONFIG_KEY = f"blueprint:{SUPPRESSIONS_SECTION}"
IN_SOURCE, EXTERNAL = "inSource", "external"  # SARIF's suppression kinds
# The comment that opens a line comment in each language a program is written in, by file suffix.
_COMMENT = {".py": "#", ".ts": "//", ".tsx": "//", ".mts": "//", ".cts": "//", ".js": "//", ".jsx": "//",
            ".mjs": "//", ".cjs": "//"}
_MARKER = r"blueprint:\s*ignore\[(?P<policies>[^\]]*)\](?P<reason>.*)$"
_FIELDS = ("resource", "policy", "reason", "expires")


class SuppressionError(PolicyConfigError):
    """A suppression the preview cannot honour as written (no reason, an unknown policy)."""


@dataclass(frozen=True)
class Suppression:
    policy: str
    reason: str
    kind: str  # IN_SOURCE or EXTERNAL
    resource: str  # the URN it covers (in source; "" on no resource's line), or the name or URN the stack file gives
    file: str  # where it is written: the program's file, or the stack file
    line: int = 0  # the comment's line (in source)
    expires: Optional[datetime.date] = None

    def expired(self, today: datetime.date) -> bool:
        return self.expires is not None and today > self.expires

    def covers(self, policy: str, urn: str, name: str) -> bool:
        return policy == self.policy and self.resource in (urn, name) and bool(urn)

    def where(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file

    def matches_nothing(self) -> str:
        """Why it suppressed nothing, in words a report shows (for a suppression no finding matched)."""
        if self.kind == IN_SOURCE and not self.resource:
            return (f"comment at {self.where()} is on no resource's declaring line: put it on the line a finding "
                    "points at, or alone on the line above it")
        if self.kind == IN_SOURCE:
            return (f"comment at {self.where()}: {self.resource.rsplit('::', 1)[-1]} has no {self.policy} finding "
                    "(is the comment on another resource's line?)")
        return f"{CONFIG_KEY} in {self.file}: no resource {self.resource!r} has a {self.policy} finding"

    def describe(self, today: datetime.date) -> str:
        """Where it is written and until when: "comment at app.py:12", "stack file Pulumi.dev.yaml, until ..."."""
        where = f"comment at {self.where()}" if self.kind == IN_SOURCE else f"{CONFIG_KEY} in {self.file}"
        if self.expires is None:
            return where
        return f"{where}, {'expired' if self.expired(today) else 'until'} {self.expires.isoformat()}"

    def to_json(self, today: datetime.date) -> dict:
        return {"policy": self.policy, "resource": self.resource, "reason": self.reason, "kind": self.kind,
                "where": self.where(), "expires": self.expires.isoformat() if self.expires else None,
                "expired": self.expired(today)}


def collect(recorded, policies: Iterable[str], stack_file: Optional[Path]) -> list[Suppression]:
    """Every suppression of the run: the comments on the declaring lines of the recorded resources,
    then the stack file's. Refused (SuppressionError) when one has no reason or names no policy of
    the pack."""
    known = set(policies)
    found = _in_source(recorded, known)
    found += _from_stack(recorded.config.get(CONFIG_KEY), known, str(stack_file or "the stack's config"))
    return found


def _in_source(recorded, known: set[str]) -> list[Suppression]:
    """The comments on each resource's declaring line (as every report locates it), then those on
    no resource's line: kept, covering nothing, so that every report says they suppress nothing."""
    locate = Locator(recorded)
    if not _any_marked(recorded, locate.main):
        return []  # no comment to find: nothing need be located (each user file parsed)
    lines_of: dict[Path, list[str]] = {}
    claimed: set[tuple[Path, int]] = set()
    found: list[Suppression] = []
    for resource in recorded.resources:
        where = locate(resource.urn)
        if where is None or not where.line or _COMMENT.get(where.file.suffix) is None:
            continue
        lines = _lines(lines_of, where.file)
        comment = _COMMENT[where.file.suffix]
        for number in (where.line, where.line - 1):
            if not 0 < number <= len(lines):
                continue
            if number == where.line - 1 and not lines[number - 1].lstrip().startswith(comment):
                continue  # the line above counts only when it is a comment of its own
            for policy, reason in _markers(lines[number - 1], comment, f"{where.file}:{number}", known):
                claimed.add((where.file, number))
                found.append(Suppression(policy, reason, IN_SOURCE, resource.urn, str(where.file), number))
    if locate.main is not None and locate.main.suffix in _COMMENT:
        _lines(lines_of, locate.main)
    for path, lines in lines_of.items():
        for number, text in enumerate(lines, start=1):
            if (path, number) not in claimed:
                found += [Suppression(policy, reason, IN_SOURCE, "", str(path), number)
                          for policy, reason in _markers(text, _COMMENT[path.suffix], f"{path}:{number}", known)]
    return found


def _any_marked(recorded, main: Optional[Path]) -> bool:
    """Whether a file a resource can be located in holds a marker: the file that declared it or an
    ancestor (the engine's), or the program's main file, the only files Locator answers with."""
    files = {Path(r.source_file) for r in recorded.resources if r.source_file} | ({main} if main else set())
    for path in files:
        try:
            if _marked(path.read_text(errors="replace")):
                return True
        except OSError:
            continue
    return False


def _marked(text: str) -> bool:
    """Whether a file's text may hold a `blueprint: ignore[...]` (any line that holds one matches)."""
    return "blueprint:" in text and re.search(_MARKER, text, re.MULTILINE) is not None


def _lines(lines_of: dict[Path, list[str]], path: Path) -> list[str]:
    if path not in lines_of:
        try:
            lines_of[path] = path.read_text(errors="replace").splitlines()
        except OSError:
            lines_of[path] = []
    return lines_of[path]


def _markers(text: str, comment: str, where: str, known: set[str]) -> list[tuple[str, str]]:
    """The policies a `blueprint: ignore[...]` comment on this line names, each with its reason."""
    match = re.search(re.escape(comment) + r"\s*" + _MARKER, text)
    if match is None:
        return []
    reason = match["reason"].strip()
    policies = _policies(match["policies"], known, where)
    if not reason:
        raise SuppressionError(f"{where}: `blueprint: ignore[{policies[0]}]` gives no reason; write why the finding "
                               f"is accepted after it: `{comment} blueprint: ignore[{policies[0]}] <reason>`")
    return [(policy, reason) for policy in policies]


def _policies(written: str, known: set[str], where: str) -> list[str]:
    names = [name.strip() for name in written.split(",") if name.strip()]
    if not names:
        raise SuppressionError(f"{where}: `blueprint: ignore[]` names no policy; put the policy's name in the brackets "
                               "(`blueprint policy ls` lists them)")
    for name in names:
        if name not in known:
            guess = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"did you mean {guess[0]!r}? " if guess else ""
            raise SuppressionError(f"{where}: the pack has no policy {name!r} to suppress; {hint}"
                                   "`blueprint policy ls` lists them")
    return names


def _from_stack(value: Optional[str], known: set[str], source: str) -> list[Suppression]:
    if value is None:
        return []
    try:
        entries = json.loads(value)
    except json.JSONDecodeError:
        entries = None
    if not isinstance(entries, list):
        raise SuppressionError(f"{source}: {CONFIG_KEY} must be a list of entries with resource, policy, reason "
                               "and an optional expires date")
    found = []
    for index, entry in enumerate(entries):
        where = f"{source}: {CONFIG_KEY}[{index}]"
        if not isinstance(entry, dict):
            raise SuppressionError(f"{where} must be a mapping with resource, policy, reason (and expires)")
        unknown = sorted(set(entry) - set(_FIELDS))
        if unknown:
            raise SuppressionError(f"{where}: unknown field {', '.join(unknown)}; the fields are {', '.join(_FIELDS)}")
        resource, reason = entry.get("resource"), entry.get("reason")
        if not isinstance(resource, str) or not resource.strip():
            raise SuppressionError(f"{where}: `resource` must name the resource (its name or URN)")
        if not isinstance(reason, str) or not reason.strip():
            raise SuppressionError(f"{where}: a suppression needs a `reason`: why the finding is accepted")
        expires = _date(entry.get("expires"), where)
        found += [Suppression(policy, reason.strip(), EXTERNAL, resource.strip(), source, expires=expires)
                  for policy in _policies(str(entry.get("policy") or ""), known, where)]
    return found


def _date(value, where: str) -> Optional[datetime.date]:
    if value is None:
        return None
    try:
        return datetime.date.fromisoformat(str(value))
    except ValueError:
        raise SuppressionError(f"{where}: expires {value!r} is not a date (YYYY-MM-DD)") from None


# ---- The same suppressions for `pulumi preview --policy-pack` ------------------------------------
# The blueprint's pack reads them from its policy config, each policy's setting `suppressions`
# (policies/rules/_policy.py), which `blueprint policy config` writes; the gate configures its pack
# without them (it reports them itself, as suppressed) and takes those a config file gives that it
# did not already find in the program and stack file.
SETTING = SUPPRESSIONS_SECTION


def has_any(program_dir: Path, config: dict) -> bool:
    """Whether the program's files or its stack config hold any suppression: else `blueprint
    policy config` has nothing to add and need not run the program."""
    if CONFIG_KEY in config:
        return True
    for path in own_files(program_dir, tuple(_COMMENT), NOT_PROGRAM | BUILT):
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        if _marked(text):
            return True
    return False


def in_policy_config(document: dict, found: list[Suppression], pack_policies: Iterable[str],
                     today: datetime.date, base: Optional[Path] = None) -> dict:
    """`document` (a policy config) with each suppression in force of a policy of the pack added to
    that policy's `suppressions` setting, with its reason and where it is written (relative to
    `base`)."""
    merged = json.loads(json.dumps(document))  # a copy
    policies = set(pack_policies)
    for suppression in found:
        if suppression.expired(today) or not suppression.resource or suppression.policy not in policies:
            continue
        entry = merged.get(suppression.policy)
        entry = {"enforcementLevel": entry} if isinstance(entry, str) else dict(entry or {})
        where = suppression.where()
        if base is not None and Path(suppression.file).is_absolute() and Path(suppression.file).is_relative_to(base):
            where = str(Path(suppression.file).relative_to(base)) + (f":{suppression.line}" if suppression.line else "")
        listed = [e for e in entry.get(SETTING) or [] if e.get("resource") != suppression.resource]
        entry[SETTING] = [*listed, {"resource": suppression.resource, "reason": suppression.reason, "where": where}]
        merged[suppression.policy] = entry
    return merged


def without_setting(document: dict) -> dict:
    """The policy config as the gate configures its pack: no `suppressions` (the gate applies them)."""
    return {name: ({k: v for k, v in value.items() if k != SETTING} if isinstance(value, dict) else value)
            for name, value in document.items()}


def from_policy_config(document: dict, source: str, known: Iterable[str],
                       already: list[Suppression]) -> list[Suppression]:
    """The suppressions a policy config file gives (its policies' `suppressions` settings) that the
    program's comments and stack file did not already give."""
    have = {(s.policy, s.resource) for s in already}
    known = set(known)
    found = []
    for policy, value in document.items():
        if not isinstance(value, dict) or value.get(SETTING) is None:
            continue
        entries = value[SETTING]
        where = f"{source}: {policy}.{SETTING}"
        if not isinstance(entries, list):
            raise SuppressionError(f"{where} must be a list of entries with resource and reason")
        for index, entry in enumerate(entries):
            resource = entry.get("resource") if isinstance(entry, dict) else None
            reason = entry.get("reason") if isinstance(entry, dict) else None
            if not isinstance(resource, str) or not resource.strip() or not isinstance(reason, str) \
                    or not reason.strip():
                raise SuppressionError(f"{where}[{index}] needs a `resource` (its name or URN) and a `reason`")
            if policy in known and (policy, resource.strip()) not in have:
                found.append(Suppression(policy, reason.strip(), EXTERNAL, resource.strip(), source))
    return found
