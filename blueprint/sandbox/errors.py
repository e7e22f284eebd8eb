"""The sandbox's errors, apart from its machinery so the CLI can name them without importing boto3."""


class SandboxError(RuntimeError):
    """The recorded stack cannot be realized locally (an unsupported shape, a dangling reference)."""


class FunctionCrashed(Exception):
    """What an event source mapping or a caller sees when the function instance died mid-invocation
    (a timeout or an out-of-memory kill): no response, no partial-batch report."""
