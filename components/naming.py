"""Physical names within AWS's limits: a component refuses a name whose child resources' names
would be too long for AWS, before anything is created.

Most children are auto-named by Pulumi: the physical name is the logical name (`<component
name><suffix>`) plus `-` and 7 random characters (FIFO queues then get `.fifo`). A few are named
explicitly. Each component lists the names it generates (`PhysicalName`) and calls `require_fits`.

Public: `PhysicalName`, `require_fits`, `AUTONAME_SUFFIX_LENGTH`, and the names the shared building
blocks generate: `function_names`, `queue_name`, `schedule_names`.
"""

from dataclasses import dataclass
from typing import Sequence

from integration_blueprint.components.validation import ComponentArgumentError
from integration_blueprint.core import aws_limits

__all__ = ["AUTONAME_SUFFIX_LENGTH", "PhysicalName", "function_names", "queue_name", "require_fits", "schedule_names"]

# Pulumi auto-naming appends "-" and 7 random hex characters to the logical name:
# https://www.pulumi.com/docs/iac/concepts/resources/names/#autonaming
AUTONAME_SUFFIX_LENGTH = 8


@dataclass(frozen=True)
class PhysicalName:
    """A child's physical name: the component name + `suffix` (+ Pulumi's random suffix when
    `auto`) + `tail` (e.g. `.fifo`), which AWS allows up to `limit` characters."""

    kind: str
    suffix: str
    limit: int
    auto: bool = True
    tail: str = ""

    def length(self, name: str) -> int:
        return len(name) + len(self.suffix) + (AUTONAME_SUFFIX_LENGTH if self.auto else 0) + len(self.tail)

    def example(self, name: str) -> str:
        return f"{name}{self.suffix}" + ("-xxxxxxx" if self.auto else "") + self.tail

    def longest_name(self) -> int:
        return self.limit - self.length("")


def function_names(suffix: str) -> list[PhysicalName]:
    """A packaged function `<name><suffix>` and its role `<name><suffix>-role`."""
    return [PhysicalName("Lambda function", suffix, aws_limits.LAMBDA_FUNCTION_NAME_MAX_LENGTH),
            PhysicalName("IAM role", f"{suffix}-role", aws_limits.IAM_ROLE_NAME_MAX_LENGTH)]


def queue_name(suffix: str, fifo: bool = False) -> PhysicalName:
    return PhysicalName("SQS queue", suffix, aws_limits.SQS_QUEUE_NAME_MAX_LENGTH,
                        tail=aws_limits.SQS_FIFO_SUFFIX if fifo else "")


def schedule_names(suffix: str = "-schedule") -> list[PhysicalName]:
    """A scheduled start: the schedule, its role and its standard DLQ."""
    return [PhysicalName("EventBridge schedule", suffix, aws_limits.SCHEDULER_SCHEDULE_NAME_MAX_LENGTH),
            PhysicalName("IAM role", f"{suffix}-role", aws_limits.IAM_ROLE_NAME_MAX_LENGTH),
            queue_name(f"{suffix}-dlq")]


def require_fits(component: str, name: str, names: Sequence[PhysicalName]) -> None:
    """Refuse `name` if any child name would exceed its limit, naming the longest name that fits."""
    too_long = [n for n in names if n.length(name) > n.limit]
    if too_long:
        worst = max(too_long, key=lambda n: n.length(name) - n.limit)
        longest = min(n.longest_name() for n in names)
        raise ComponentArgumentError(
            f"{component}: the name {name!r} ({len(name)} characters) is too long: its {worst.kind} would be "
            f"named {worst.example(name)!r} ({worst.length(name)} characters), over AWS's limit of {worst.limit}. "
            f"Use a name of at most {longest} characters.")
