"""`blueprint redrive ...` against the account in the environment (boto3's usual credentials,
region and AWS_ENDPOINT_URL), one subcommand per pattern; the parser is in cli.py."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from integration_blueprint.redrive import dispatch, map_items, move, parked, stream
from integration_blueprint.redrive.parked import RateLimit


def _print(args: argparse.Namespace, document: Any, lines: list[str]) -> None:
    print(json.dumps(document, indent=2, default=str) if args.json else "\n".join(lines))


def _kept_lines(result: move.MoveResult) -> list[str]:
    return [f"  kept {m.message_id}: {why} ({m.reason})" for m, why in result.kept]


def run(args: argparse.Namespace) -> int:
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        return _run(args)
    except (BotoCoreError, ClientError) as exc:
        print(f"error: {exc} (check the queue URLs/ARNs and the AWS credentials and region in the environment)",
              file=sys.stderr)
        return 2


def _run(args: argparse.Namespace) -> int:
    import boto3

    sqs = boto3.client("sqs")
    rate = RateLimit(args.rate) if getattr(args, "rate", None) else None
    limit = getattr(args, "limit", None)
    dry = getattr(args, "dry_run", False)
    verb = "would move" if dry else "moved"

    if args.action == "list":
        messages = parked.list_parked(sqs, args.queue, limit=limit)
        _print(args, [m.to_json() for m in messages],
               [f"{len(messages)} parked in {args.queue}"] + [f"  {m.message_id} [{m.kind}] {m.reason}" for m in messages])
        return 0
    if args.action == "status":
        tasks = move.move_tasks(sqs, move.queue_arn(sqs, args.dlq))
        _print(args, tasks, [f"{t.get('Status')}: {t.get('ApproximateNumberOfMessagesMoved', 0)} of "
                             f"{t.get('ApproximateNumberOfMessagesToMove', '?')} moved {t.get('FailureReason', '')}"
                             for t in tasks] or ["no move tasks"])
        return 0
    if args.action == "queue":
        if args.to or limit or dry:
            if not args.to:
                print("error: --limit and --dry-run move in batches and need --to (the source queue's URL)")
                return 2
            result = move.move_messages(sqs, args.dlq, args.to, rate=rate, limit=limit, dry_run=dry)
        else:
            try:
                handle = move.start_move_task(sqs, move.queue_arn(sqs, args.dlq), max_per_second=args.rate)
            except NotImplementedError:  # moto (the sandbox's emulator) has no StartMessageMoveTask
                print("error: this endpoint does not implement StartMessageMoveTask; move in batches with "
                      "--to <source queue url>", file=sys.stderr)
                return 2
            result = move.MoveResult(task_handle=handle)
            _print(args, result.to_json(), [f"move task started ({handle}); follow it with "
                                            f"`blueprint redrive status --dlq {args.dlq}`"])
            return 0
        _print(args, result.to_json(), [f"{verb} {len(result.moved)} message(s) to {args.to}", *_kept_lines(result)])
        return 0
    if args.action == "stream":
        result = stream.redrive_stream(sqs, boto3.client("kinesis"), args.unrecoverable_dlq, args.retry_dlq,
                                       rate=rate, limit=limit, dry_run=dry)
        _print(args, result.to_json(), [f"{verb} {len(result.moved)} message(s) to the Retry-DLQ",
                                        *_kept_lines(result)])
        return 0 if not any(why.startswith("the range could not") for _, why in result.kept) else 1
    if args.action == "dispatch":
        invoke = dispatch.lambda_invoke(boto3.client("lambda"), args.function)
        rerun = dispatch.rerun_async_failures(sqs, args.queue, invoke, rate=rate, limit=limit, dry_run=dry)
        _print(args, rerun.to_json(), [f"{'would re-run' if dry else 're-ran'} {len(rerun.rerun)} invocation(s)"]
               + [f"  still parked {m.message_id}: {why}" for m, why in rerun.failed])
        return 1 if rerun.failed else 0
    if args.action == "map":
        s3, sfn = boto3.client("s3"), boto3.client("stepfunctions")
        description = sfn.describe_execution(executionArn=args.execution)
        input_key = json.loads(description["input"])[args.input_field]
        bucket = args.bucket or map_items.input_bucket_of(sfn, description["stateMachineArn"])
        if args.manifest:
            manifest_bucket, _, manifest_key = args.manifest.removeprefix("s3://").partition("/")
            items = map_items.failed_items_from_manifest(s3, manifest_bucket, manifest_key)
            map_rerun = map_items.rerun_items(
                s3, sfn, state_machine_arn=description["stateMachineArn"], bucket=bucket,
                header=map_items.header_of(s3, bucket, input_key), items=items,
                name=f"redrive-{description['name']}"[:80], field_name=args.input_field, dry_run=dry)
        else:  # the whole file again: items already done are skipped by the item handler's idempotency
            map_rerun = map_items.MapRerun(items=-1, input_key=input_key, dry_run=dry)
            if not dry:
                map_rerun.execution_arn = sfn.start_execution(
                    stateMachineArn=description["stateMachineArn"], name=f"redrive-{description['name']}"[:80],
                    input=json.dumps({args.input_field: input_key}))["executionArn"]
        what = "the whole file" if map_rerun.items < 0 else f"{map_rerun.items} failed item(s)"
        _print(args, map_rerun.to_json(), [f"{'would re-run' if dry else 're-running'} {what} "
                                           f"{map_rerun.input_key} {map_rerun.execution_arn or ''}".rstrip()])
        return 0
    raise AssertionError(args.action)
