"""The drill on a team's code written for the team's own records (`--sample-records COMPONENT=FILE`):
the records are sent as the lane hands them over, and the effects attributed by their values."""

import base64
import json
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

from integration_blueprint.drill import samples
from integration_blueprint.drill.patterns.distributed_map import DistributedMapDriver
from integration_blueprint.drill.report import DrillOptions
from integration_blueprint.drill.runner import run_drill
from integration_blueprint.handlers.runtime.billing import Charge
from integration_blueprint.sandbox.errors import SandboxError
from integration_blueprint.sandbox.kinesis_esm import KinesisEventSourceMapping
from integration_blueprint.sandbox.sqs_esm import SqsEventSourceMapping

PROGRAM = Path(__file__).parent / "fixtures" / "team_records"
DOC = Path(__file__).resolve().parents[1] / "docs" / "drill.md"
SAMPLES = {"sales": PROGRAM / "samples" / "sales.jsonl", "stock": PROGRAM / "samples" / "stock.jsonl"}


def drill(sample_files: dict):
    options = DrillOptions(program_dir=PROGRAM, records=30, seed=5, duplicates=0.2, crashes=2, transient=0.05,
                           samples={name: samples.load(path) for name, path in sample_files.items()})
    return run_drill(options, workers=1)


@pytest.mark.slow
def test_code_written_for_the_teams_own_records_passes_with_them_and_fails_on_the_drills_own_naming_why():
    own = drill(SAMPLES)

    assert own.passed, {name: p.notes for name, p in own.patterns.items()}
    for pattern in own.patterns.values():
        assert pattern.sent == pattern.processed_once == 30  # the file's records, whatever --records says
        assert pattern.injected["duplicates"] + pattern.injected["crashes"] > 0
        assert "sent the team's own 30 record(s) (--sample-records)" in pattern.notes
        assert any("0 not attributable" in note for note in pattern.notes)

    theirs = drill({})

    assert not theirs.passed
    notes = " ".join(theirs.patterns["idempotent_stream"].notes)
    assert "KeyError" in notes and "give the drill some, --sample-records sales=FILE" in notes


def test_a_sample_file_is_json_lines_of_objects_each_given_once(tmp_path):
    path = tmp_path / "orders.jsonl"
    path.write_text('{"order_id": "o-1", "merchant_id": "m-77", "cents": 1250, "tags": ["eu"]}\n\n{"order_id": "o-2"}\n')
    assert samples.load(path) == [{"order_id": "o-1", "merchant_id": "m-77", "cents": 1250, "tags": ["eu"]},
                                  {"order_id": "o-2"}]

    for text, why in (('{"a": 1}\n[1, 2]\n', "line 2 is not a JSON object"), ('{"a": 1}\n{"a":\n', "line 2 is not JSON"),
                      ('{"a": 1, "b": 2}\n{"b": 2, "a": 1}\n', "line 2 repeats line 1"), ("\n", "holds no records")):
        path.write_text(text)
        with pytest.raises(SandboxError, match=why):
            samples.load(path)
    with pytest.raises(SandboxError, match="expected COMPONENT=FILE"):
        samples.parse_option("orders.jsonl")
    assert samples.parse_option("orders=s/o.jsonl") == ("orders", Path("s/o.jsonl"))


def test_a_partition_key_is_a_field_every_record_it_keys_has_or_the_drill_refuses_naming_the_record():
    records = {"orders": [{"order_id": "o-1", "customer": {"id": "c-1"}}, {"order_id": "o-2", "customer": {}}]}

    assert samples.parse_partition_key("orders=order_id") == ("orders", "order_id")
    assert samples.parse_partition_key("customer.id") == ("", "customer.id")  # every stream component
    assert samples.partition_key_of(records["orders"][0], "customer.id") == "c-1"
    samples.check_partition_keys({"orders": "order_id"}, records)
    with pytest.raises(SandboxError, match=r"record 2 of --sample-records orders has no 'customer.id'"):
        samples.check_partition_keys({"": "customer.id"}, records)
    with pytest.raises(SandboxError, match="the drill's own stream records have the fields eventId, account"):
        samples.check_partition_keys({"payments": "order_id"}, records)  # no records of its own given
    with pytest.raises(SandboxError, match="expected FIELD or COMPONENT=FIELD"):
        samples.parse_partition_key("orders=")


def test_a_record_is_found_by_its_payload_and_named_by_the_values_only_it_holds():
    index = samples.SampleIndex()
    for n, (order, merchant) in enumerate((("o-1001", "m-77"), ("o-1002", "m-77")), start=1):
        payload = {"order_id": order, "merchant_id": merchant, "cents": 1250, "ok": True, "n": 7}
        index.add(f"line {n}", payload, samples.identifying_values(payload))

    assert index.values["line 1"] == ("o-1001", "m-77", "1250")  # short values and booleans tell nothing apart
    assert index.record_of(json.loads('{"n": 7, "ok": true, "cents": 1250, "merchant_id": "m-77", '
                                      '"order_id": "o-1002"}')) == "line 2"  # whatever the key order
    assert index.named('{"pk": "order#o-1001", "merchant": "m-77"}') == "line 1"
    assert index.named('{"pk": "m-77"}') is None  # both hold it


@pytest.mark.slow
def test_sample_records_for_a_component_that_does_not_run_the_teams_code_are_refused_by_name():
    options = DrillOptions(program_dir=PROGRAM, records=5, samples={"sale": [{"sale_id": "S-1"}]})

    with pytest.raises(SandboxError, match="--sample-records names sale: no component of that name runs the team's "
                                           "own code .* those that do: sales, stock"):
        run_drill(options, workers=1, drivers={})


def test_the_documented_example_events_are_what_the_sandbox_hands_over():
    kinesis_event, sqs_event, row = (json.loads(block) for block in
                                     re.findall(r"```json\n(.*?)```", DOC.read_text(), re.DOTALL))
    stream_record = KinesisEventSourceMapping._event_record(
        SimpleNamespace(region="eu-west-1", stream_arn="arn:aws:kinesis:eu-west-1:123456789012:stream/s"),
        "shardId-000000000000", {"PartitionKey": "p", "SequenceNumber": "1", "Data": b"{}",
                                 "ApproximateArrivalTimestamp": 1.0})
    [documented] = kinesis_event["Records"]
    assert documented.keys() == stream_record.keys() and documented["kinesis"].keys() == stream_record["kinesis"].keys()
    assert json.loads(base64.b64decode(documented["kinesis"]["data"])).keys() == {"eventId", "account", "amount"}

    message = SqsEventSourceMapping._record(SimpleNamespace(queue_arn="arn", region="eu-west-1"),
                                            {"MessageId": "m", "ReceiptHandle": "r", "Body": "{}"})
    [documented] = sqs_event["Records"]
    assert documented.keys() == message.keys()
    charge = Charge.from_message(documented["body"])  # the consumer's own parser accepts it
    assert documented["body"] == charge.to_message()
    assert documented["attributes"]["MessageGroupId"] == charge.message_group_id

    assert list(row) == DistributedMapDriver.row_ids(SimpleNamespace(options=DrillOptions(records=1)))[0]


def test_a_teams_records_are_named_by_their_id_field_and_by_their_file_line_without_one(tmp_path):
    """`line 11` tells a team nothing it can search for; the record's own id does."""
    with_ids = tmp_path / "orders.jsonl"
    with_ids.write_text('{"kind": "sale", "order_id": "o-1001", "cents": 5}\n\n{"kind": "sale", "order_id": "o-1002"}\n')
    assert samples.record_ids(samples.load(with_ids)) == ["order_id=o-1001", "order_id=o-1002"]
    camel = [{"customerId": "c-1", "paid": 1, "eventId": 7}, {"customerId": "c-1", "paid": 2, "eventId": 8}]
    assert samples.record_ids(camel) == ["eventId=7", "eventId=8"]  # customerId names two records the same

    without = tmp_path / "rows.jsonl"  # no id field, or one that names two records the same: the file's lines
    without.write_text('{"account": "a-1", "id": "x"}\n\n\n{"account": "a-2", "id": "x"}\n')
    assert samples.record_ids(samples.load(without)) == ["line 1", "line 4"]
    assert samples.record_ids([{"amount": 1}, {"amount": 2}]) == ["line 1", "line 2"]
