"""A Lambda context object for running handlers in-process (tests, benchmarks, local sandbox)."""

import itertools
import time
import uuid
from dataclasses import dataclass, field
from typing import ClassVar

_counter = itertools.count(1)


@dataclass
class LocalLambdaContext:
    function_name: str = "local-function"
    timeout_seconds: int = 30
    memory_limit_in_mb: int = 256
    region: str = "us-east-1"
    account: str = "123456789012"
    aws_request_id: str = field(default_factory=lambda: str(uuid.UUID(int=next(_counter))))
    started: float = field(default_factory=time.monotonic)
    # < 1 compresses time: the remaining time the handler sees shrinks by this factor (the local
    # sandbox uses it so an idempotency INPROGRESS record left by a crash expires quickly).
    time_scale: float = 1.0
    # The same for every local invocation: the unpublished version, one log stream.
    function_version: ClassVar[str] = "$LATEST"
    log_stream_name: ClassVar[str] = "local"

    @property
    def invoked_function_arn(self) -> str:
        return f"arn:aws:lambda:{self.region}:{self.account}:function:{self.function_name}"

    @property
    def log_group_name(self) -> str:
        return f"/aws/lambda/{self.function_name}"

    def get_remaining_time_in_millis(self) -> int:
        # The whole timeline compressed: what is left of the real timeout, times the scale. (Taking the
        # real time spent off the compressed timeout instead made a second of real work, a batch of
        # rows or a cold start's clients, use up 500 s of a 30 s timeout: the budget then followed
        # the machine's load, not the drill's seed.)
        left = self.timeout_seconds - (time.monotonic() - self.started)
        return max(0, int(left * self.time_scale * 1000))

    def begin(self) -> None:
        """The invocation starts running now: its time counts from here, not from when it was
        queued (an invocation waiting for another to finish has not started on AWS either)."""
        self.started = time.monotonic()

    def fresh(self) -> "LocalLambdaContext":
        """A context for the next invocation of the same function."""
        return LocalLambdaContext(self.function_name, self.timeout_seconds, self.memory_limit_in_mb,
                                  self.region, self.account, time_scale=self.time_scale)
