"""A Python program with several refusing component calls gets every refusal, each at its key's line:
the program stops at the first call (as under `pulumi preview`), the others are checked from
their source as the component checks them."""

from pathlib import Path

import pytest

from integration_blueprint.preview.recording import ProgramError, record_program

PROGRAM = '''import pulumi
from integration_blueprint.components import DistributedMapBatch, FifoBillingQueue

topic = pulumi.Config().get("oncall") or "arn:aws:sns:eu-west-1:123456789012:oncall"

FifoBillingQueue("payroll", {
    "consumer_timeout_seconds": 60,
    "batch_size": 11,
})
FifoBillingQueue("refunds", {
    "consumer_timeout_seconds": 60,
    "max_receive_count": 2,
    "alarm_actions": [topic],
})
settings = {"max_concurrency": 0}
DistributedMapBatch("invoices", settings)  # a variable: checked when the program runs, not from source
DistributedMapBatch("statements", {"max_concurency": 5})
'''


def line_of(text: str) -> int:
    return next(number for number, line in enumerate(PROGRAM.splitlines(), start=1) if text in line)


@pytest.fixture
def program(tmp_path) -> Path:
    (tmp_path / "Pulumi.yaml").write_text("name: payroll\nruntime: python\n")
    (tmp_path / "Pulumi.dev.yaml").write_text("config:\n  aws:region: eu-west-1\n")
    (tmp_path / "__main__.py").write_text(PROGRAM)
    return tmp_path


def test_every_refusing_call_of_a_python_program_is_reported_at_its_keys_line(program):
    with pytest.raises(ProgramError) as raised:
        record_program(program, stack="dev")

    error, main = raised.value, program / "__main__.py"
    assert error.refused and (error.file, error.line) == (str(main), line_of('"batch_size": 11'))
    lines = str(error).splitlines()
    assert any(line.startswith("ComponentArgumentError: FifoBillingQueue: batch_size=11 is not allowed")
               for line in lines)
    assert any(line.startswith("FifoBillingQueue: max_receive_count=2 is not allowed")
               and line.endswith(f"(at {main}:{line_of('max_receive_count')})") for line in lines)
    assert any("unknown argument 'max_concurency' (did you mean 'max_concurrency'?)" in line
               and line.endswith(f"(at {main}:{line_of('max_concurency')})") for line in lines)
    assert not any("max_concurrency=0" in line for line in lines)  # `settings` is known only when the program runs
