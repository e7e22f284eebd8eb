"""A Distributed Map run's failed items, re-run as a new execution over just those items.

The failed items come from the run's failure record: the ResultWriter's manifest lists the
FAILED_*.json and PENDING_*.json files, each an array of child results whose `Input` is the item (or
batch of items) as the Map read it (`failed_items_from_manifest`). The items are written as a CSV
with the original file's header next to it, under `redrive/`, and a new execution of the same state
machine runs it. Items that did succeed are never in it; an item re-run twice is still written once
(the item handler is idempotent on the invoice id). Without a ResultWriter, `input_key_of` gives
the failed execution's whole file, which is safe to re-run for the same reason (within the
idempotency expiry).
"""

from __future__ import annotations

import csv
import io
import json
from dataclasses import dataclass
from typing import Any, Optional

from integration_blueprint.handlers.runtime.map_batch import failed_indexes


@dataclass
class MapRerun:
    items: int
    input_key: Optional[str] = None
    execution_arn: Optional[str] = None
    dry_run: bool = False

    def to_json(self) -> dict:
        return {"dry_run": self.dry_run, "items": self.items, "input_key": self.input_key,
                "execution_arn": self.execution_arn}


def failed_items_from_manifest(s3, bucket: str, manifest_key: str) -> list[dict]:
    """The items a ResultWriter manifest lists as not done: every item of its FAILED result files
    (a child's `Input` is one item, or with an ItemBatcher {"Items": [...]}: of a batch whose Cause
    names its failed items (handlers/runtime/map_batch.py), just those) and of its PENDING ones
    (children a failed Map Run never started)."""
    manifest = json.loads(s3.get_object(Bucket=bucket, Key=manifest_key)["Body"].read())
    items = []
    for status in ("FAILED", "PENDING"):
        for entry in manifest.get("ResultFiles", {}).get(status, []):
            for child in json.loads(s3.get_object(Bucket=bucket, Key=entry["Key"])["Body"].read()):
                items.extend(_child_items(child))
    return items


def _child_items(child: dict) -> list[dict]:
    item: Any = child.get("Input")
    item = json.loads(item) if isinstance(item, str) else item
    if not (isinstance(item, dict) and isinstance(item.get("Items"), list)):
        return [item]
    batch = item["Items"]
    indexes = failed_indexes(child.get("Cause") or "")
    if indexes is None:
        return batch
    return [batch[i] for i in indexes if 0 <= i < len(batch)]


def input_key_of(sfn, execution_arn: str, field_name: str = "inputKey") -> str:
    return json.loads(sfn.describe_execution(executionArn=execution_arn)["input"])[field_name]


def input_bucket_of(sfn, state_machine_arn: str) -> str:
    """The bucket the machine's Distributed Map reads its CSV from (its ItemReader)."""
    definition = json.loads(sfn.describe_state_machine(stateMachineArn=state_machine_arn)["definition"])
    for state in definition["States"].values():
        reader = state.get("ItemReader") if state.get("Type") == "Map" else None
        if reader:
            return reader["Parameters"]["Bucket"]
    raise ValueError(f"{state_machine_arn} has no Map state with an ItemReader")


def header_of(s3, bucket: str, key: str) -> list[str]:
    """The CSV header (first row) of the run's input file, so the re-run file has the same columns."""
    first = s3.get_object(Bucket=bucket, Key=key, Range="bytes=0-4095")["Body"].read().decode()
    return next(csv.reader(io.StringIO(first.splitlines()[0])))


def rerun_items(s3, sfn, *, state_machine_arn: str, bucket: str, header: list[str], items: list[dict],
                name: str, field_name: str = "inputKey", dry_run: bool = False) -> MapRerun:
    """Write `items` as `redrive/<name>.csv` and start execution `<name>` over it."""
    if not items:
        return MapRerun(items=0, dry_run=dry_run)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=header, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    writer.writerows(items)
    key = f"redrive/{name}.csv"
    if dry_run:
        return MapRerun(items=len(items), input_key=key, dry_run=True)
    s3.put_object(Bucket=bucket, Key=key, Body=buffer.getvalue().encode())
    execution = sfn.start_execution(stateMachineArn=state_machine_arn, name=name,
                                    input=json.dumps({field_name: key}))["executionArn"]
    return MapRerun(items=len(items), input_key=key, execution_arn=execution)
