"""The sandbox's errors, apart from its machinery so the CLI can name them without importing boto3."""


class SandboxError(RuntimeError):
    """The recorded stack cannot be realized locally (an unsupported shape, a dangling reference)."""


class FunctionCrashed(Exception):
    """What an event source mapping or a caller sees when the function instance died mid-invocation
    (a timeout or an out-of-memory kill): no response, no partial-batch report."""


class InjectedCrash(FunctionCrashed):
    """The crash a caller injected (sandbox/faults.py), told apart from the function's own end."""


class FunctionError(Exception):
    """The function's handler raised (in its own process): Lambda's errorType and errorMessage, as
    Lambda reports an unhandled error to the caller (Step Functions' Retry and Catch match the type)."""

    def __init__(self, error_type: str, message: str):
        super().__init__(message)
        self.error_type = error_type


def error_type(error: BaseException) -> str:
    """The errorType Lambda would report for `error`: the handler's own exception's name."""
    return getattr(error, "error_type", None) or type(error).__name__
