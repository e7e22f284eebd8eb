"""Work-arounds for limits of the emulator (moto) that real AWS does not have.

- Map workers recurse once per item: moto's iteration workers evaluate their next item by calling
  `_eval_pool` from inside `_eval_pool` (a tail call), so one worker that takes more than about a
  thousand items dies with RecursionError (every worker did at 5,000 items). The tail call is turned
  into a loop: a nested call only queues its (job, frame) and the outermost call runs them in turn,
  which is the same order of evaluation without the stack growth.
"""

from __future__ import annotations

import functools

from integration_blueprint.core import aws_limits
from integration_blueprint.core.patches import FIX, MOTO_VERIFIED, Patcher, patch

NAMES = ("iterate_map_workers", "fifo_deduplication_lasts_five_minutes", "parse_state_machine_paths_once")


@patch("iterate_map_workers", package="moto", verified=MOTO_VERIFIED, kind=FIX,
       target="moto.stepfunctions.parser...IterationWorker, DistributedItemProcessorWorker, "
              "DistributedIteratorWorker._eval_pool",
       buys="a Map worker that takes more than about a thousand items no longer dies with RecursionError")
def iterate_map_workers(patcher: Patcher) -> None:
    """Make moto's Map iteration workers loop instead of recursing."""
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration import iteration_worker
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.itemprocessor import (
        distributed_item_processor_worker,
    )
    from moto.stepfunctions.parser.asl.component.state.exec.state_map.iteration.iterator import (
        distributed_iterator_worker,
    )

    for cls in (iteration_worker.IterationWorker,
                distributed_item_processor_worker.DistributedItemProcessorWorker,
                distributed_iterator_worker.DistributedIteratorWorker):
        original = cls.__dict__.get("_eval_pool")
        if original is not None:
            patcher.replace(cls, "_eval_pool", _iterative(original))


def _iterative(original):
    @functools.wraps(original)
    def _eval_pool(self, job, worker_frame):
        pending = getattr(self, "_sandbox_pending_jobs", None)
        if pending is not None:  # the tail call of the evaluation below: run it after it returns
            pending.append((job, worker_frame))
            return
        self._sandbox_pending_jobs = pending = [(job, worker_frame)]
        try:
            while pending:
                next_job, frame = pending.pop()
                original(self, next_job, frame)
        finally:
            self._sandbox_pending_jobs = None

    return _eval_pool


@patch("fifo_deduplication_lasts_five_minutes", target="moto.sqs.models.Queue.add_message", package="moto",
       verified=MOTO_VERIFIED, kind=FIX,
       buys="a FIFO queue drops a message whose deduplication id it accepted in the last 5 minutes, whether "
            "or not that message is still queued (moto compared it only with the messages still queued)")
def fifo_deduplication_lasts_five_minutes(patcher: Patcher) -> None:
    """SQS remembers a FIFO message's deduplication id (explicit, or the body's SHA-256 with
    content-based deduplication, which moto sets on the message before adding it) for 5 minutes
    after accepting it; a send with the same id in that window is accepted and not delivered, even
    once the first was received and deleted. moto compared the id only with the messages still in
    the queue, so a retried send after the first was consumed was delivered twice. Moving a
    message to its dead-letter queue (moto adds it there, already received) is not a send."""
    import threading
    from collections import OrderedDict

    from moto.sqs.models import Queue

    add_message = Queue.add_message
    window_ms = aws_limits.SQS_FIFO_DEDUPLICATION_WINDOW_SECONDS * 1000
    lock = threading.Lock()

    def remembering_add_message(self, message):
        if not self.fifo_queue or not message.deduplication_id or message.approximate_receive_count:
            return add_message(self, message)  # a received message moved to a DLQ is not a send
        scope = message.group_id if getattr(self, "deduplication_scope", "queue") == "messageGroup" else None
        key = (scope, message.deduplication_id)
        now = message.sent_timestamp
        with lock:
            accepted = self.__dict__.setdefault("_sandbox_deduplication_ids", OrderedDict())
            while accepted and next(iter(accepted.values())) <= now - window_ms:
                accepted.popitem(last=False)
            if key in accepted:
                return None  # accepted within the window: not delivered again
            accepted[key] = now
        return add_message(self, message)

    patcher.replace(Queue, "add_message", remembering_add_message)


@patch("parse_state_machine_paths_once", package="moto", verified=MOTO_VERIFIED, kind=FIX,
       target="moto.stepfunctions.parser.asl.utils.json_path.parse, ...common.path.result_path.parse",
       buys="a Distributed Map's parallel children no longer build jsonpath_ng parsers at the same time: "
            "without it a seeded drill's Map made a different number of invocations in 1 of 3 runs under load")
def parse_state_machine_paths_once(patcher: Patcher) -> None:
    """moto's Step Functions interpreter parses each JSONPath it evaluates with jsonpath_ng, whose
    parse builds a new ply parser on every call, from the Map's parallel children at once. A parsed
    path is only read (find, update_or_create change the data, not the path): one parse per distinct
    path, which also made it a tenth of a Distributed Map's CPU cheaper."""
    import importlib

    json_path = importlib.import_module("moto.stepfunctions.parser.asl.utils.json_path")
    result_path = importlib.import_module("moto.stepfunctions.parser.asl.component.common.path.result_path")
    patcher.replace(json_path, "parse", functools.lru_cache(maxsize=PARSED_PATHS)(json_path.parse))
    patcher.replace(result_path, "parse", functools.lru_cache(maxsize=PARSED_PATHS)(result_path.parse))


# Distinct JSONPaths remembered (a state machine has a few dozen).
PARSED_PATHS = 10_000
