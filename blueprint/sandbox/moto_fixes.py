"""Work-arounds for limits of the emulator (moto) that real AWS does not have.

- Map workers recurse once per item: moto's iteration workers evaluate their next item by calling
  `_eval_pool` from inside `_eval_pool` (a tail call), so one worker that takes more than about a
  thousand items dies with RecursionError (every worker did at 5,000 items). The tail call is turned
  into a loop: a nested call only queues its (job, frame) and the outermost call runs them in turn,
  which is the same order of evaluation without the stack growth.
"""

from __future__ import annotations

import functools


def iterate_map_workers() -> None:
    """Make moto's Map iteration workers loop instead of recursing (idempotent)."""
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
        if original is None or getattr(original, "_iterative", False):
            continue
        cls._eval_pool = _iterative(original)  # type: ignore[method-assign]


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

    _eval_pool._iterative = True  # type: ignore[attr-defined]
    return _eval_pool
