"""The sandbox's errors, apart from its machinery so the CLI can name them without importing boto3."""

from dataclasses import dataclass
from typing import Any, Optional


class SandboxError(RuntimeError):
    """The recorded stack cannot be realized locally (an unsupported shape, a dangling reference)."""


class FunctionCrashed(Exception):
    """What an event source mapping or a caller sees when the function instance died mid-invocation
    (a timeout or an out-of-memory kill): no response, no partial-batch report."""


class InjectedCrash(FunctionCrashed):
    """The crash a caller injected (sandbox/faults.py), told apart from the function's own end."""


@dataclass(frozen=True)
class CodeError:
    """What the function's own code raised, as its author reads it (sandbox/lambda_bootstrap.py
    team_error): the record's own exception where a batch utility wrapped it, and the deepest frame
    in the function's archive. Data the function's process sent: every field is checked text."""

    type: str
    message: str
    location: str = ""  # `path/in/archive.py:line`, "" if no frame of the archive raised it
    function: str = ""  # the function (Python def) of that frame
    code: str = ""  # that line's source

    @classmethod
    def from_payload(cls, payload: Any) -> Optional["CodeError"]:
        if not isinstance(payload, dict):
            return None
        fields = {name: payload.get(key) for name, key in (("type", "errorType"), ("message", "errorMessage"),
                                                           ("location", "location"), ("function", "function"),
                                                           ("code", "code"))}
        if not isinstance(fields["type"], str) or not all(isinstance(v, (str, type(None))) for v in fields.values()):
            return None
        return cls(**{name: (value or "")[:CODE_ERROR_CHARACTERS] for name, value in fields.items()})

    def describe(self) -> str:
        """`KeyError: 'charge_id' at payments/consumer.py:12 in charge (amount = body["charge_id"])`."""
        where = f" at {self.location}" + (f" in {self.function}" if self.function else "") if self.location else ""
        return f"{self.type}: {self.message}{where}" + (f" ({self.code})" if self.code else "")


# The longest text of a CodeError field the sandbox keeps (a message can be a whole payload).
CODE_ERROR_CHARACTERS = 300


class FunctionError(Exception):
    """The function's handler raised (in its own process): Lambda's errorType and errorMessage, as
    Lambda reports an unhandled error to the caller (Step Functions' Retry and Catch match the type),
    and what its code raised (`cause`, when the process said)."""

    def __init__(self, error_type: str, message: str, cause: Optional[CodeError] = None):
        super().__init__(message)
        self.error_type = error_type
        self.cause = cause


def error_type(error: BaseException) -> str:
    """The errorType Lambda would report for `error`: the handler's own exception's name."""
    return getattr(error, "error_type", None) or type(error).__name__
