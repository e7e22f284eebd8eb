"""The journal keeps each call as it was when it succeeded (sandbox/interception.py)."""

import copy
from datetime import datetime, timezone
from decimal import Decimal

import boto3
from boto3.dynamodb.types import TypeDeserializer

from integration_blueprint.sandbox.emulator import running_emulator
from integration_blueprint.sandbox.interception import FunctionRun, Journal, install_request_hooks, journal_copy


def test_a_journaled_call_keeps_its_parameters_and_response_as_they_were_whatever_the_function_does_after():
    with running_emulator("eu-west-1") as emulator:
        emulator.client("dynamodb").create_table(
            TableName="ledger", BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}])
        install_request_hooks(None, emulator.on_stop)
        client = boto3.client("dynamodb")
        journal = Journal()
        item = {"id": {"S": "a-1"}, "tags": {"L": [{"S": "x"}, {"B": b"\x00\x01"}]}, "n": {"N": "1.50"}}
        with FunctionRun("consumer", {}, journal):
            client.put_item(TableName="ledger", Item=item)
            got = client.get_item(TableName="ledger", Key={"id": {"S": "a-1"}})
            # What boto3's resource layer does after the call: the values turned into Python's, in place.
            got["Item"] = {name: TypeDeserializer().deserialize(value) for name, value in got["Item"].items()}
            item["tags"]["L"].append({"S": "added after"})

    put, get = (call for _, call in journal.calls())
    assert put.params["Item"]["tags"] == {"L": [{"S": "x"}, {"B": b"\x00\x01"}]}
    assert get.response["Item"] == {"id": {"S": "a-1"}, "tags": {"L": [{"S": "x"}, {"B": b"\x00\x01"}]},
                                    "n": {"N": "1.50"}}
    assert isinstance(get.response["ResponseMetadata"]["HTTPHeaders"], dict)


def test_the_journal_copy_equals_a_deep_copy_shares_nothing_that_can_change_and_takes_a_value_that_holds_itself():
    when = datetime(2026, 12, 7, tzinfo=timezone.utc)
    value = {"Items": [{"a": {"N": "1"}}, {"b": {"SS": ["x", "y"]}}], "Count": 2, "Amount": Decimal("1.5"),
             "At": when, "Body": b"raw", "Pair": ("k", ["v"]), "Set": {1, 2}, "None": None, "Flag": True}

    copied = journal_copy(value)

    assert copied == copy.deepcopy(value)
    value["Items"][0]["a"]["N"] = "2"
    value["Pair"][1].append("w")
    value["Set"].add(3)
    assert copied["Items"][0]["a"] == {"N": "1"} and copied["Pair"] == ("k", ["v"]) and copied["Set"] == {1, 2}

    holds_itself: dict = {"name": "loop"}
    holds_itself["self"] = holds_itself
    again = journal_copy(holds_itself)
    assert again["self"] is again and again is not holds_itself

    # A value held in many places is copied once, as deepcopy does (sixty levels of a list held
    # twice would be 2**60 copies otherwise).
    shared: list = ["leaf"]
    for _ in range(60):
        shared = [shared, shared]
    twice = journal_copy({"Shared": shared})["Shared"]
    assert twice[0] is twice[1] and twice[0] is not shared[0]
