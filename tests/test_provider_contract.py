"""The offline provider as the engine calls it (integration_blueprint.preview.provider.contract):
Check, Create, Read and Invoke on one object, as the ResourceProvider contract has them."""

import re

import pytest

from integration_blueprint.preview.provider.contract import PLACEHOLDER_ACCOUNT, Provider, UnknownInvoke

REGION = "eu-west-1"
QUEUE = "aws:sqs/queue:Queue"
URN = f"urn:pulumi:dev::shop::{QUEUE}::jobs"


def test_check_auto_names_a_resource_the_program_left_unnamed_and_keeps_a_given_name():
    provider = Provider()

    checked = provider.check(QUEUE, "jobs", URN, {"fifoQueue": True}, region=REGION)
    named = provider.check(QUEUE, "jobs", URN, {"name": "orders"}, region=REGION)

    assert re.fullmatch(r"jobs-[0-9a-f]{7}\.fifo", checked["name"]) and checked["fifoQueue"] is True
    assert named == {"name": "orders"}


def test_create_answers_every_computed_output_and_in_a_first_preview_leaves_them_to_the_provider():
    provider = Provider()
    checked = provider.check(QUEUE, "jobs", URN, {}, region=REGION)

    id_, outputs = provider.create(QUEUE, "jobs", URN, checked, region=REGION, preview=False)
    preview_id, preview_outputs = provider.create(QUEUE, "jobs", URN, checked, region=REGION, preview=True)

    assert id_ == f"https://sqs.{REGION}.amazonaws.com/{PLACEHOLDER_ACCOUNT}/{checked['name']}" == outputs["url"]
    assert outputs["arn"] == f"arn:aws:sqs:{REGION}:{PLACEHOLDER_ACCOUNT}:{checked['name']}"
    assert (preview_id, preview_outputs) == ("", checked)  # the SDK sees what is computed as unknown


def test_create_in_another_account_names_that_account_in_ids_and_arns():
    provider = Provider(account="210987654321")
    checked = provider.check(QUEUE, "jobs", URN, {}, region=REGION)

    _, outputs = provider.create(QUEUE, "jobs", URN, checked, region=REGION, preview=False)

    assert ":210987654321:" in outputs["arn"] and "/210987654321/" in outputs["url"]


def test_read_takes_the_resource_name_from_the_id_it_is_read_by():
    state = Provider().read("aws:iam/role:Role", "imported", f"arn:aws:iam::{PLACEHOLDER_ACCOUNT}:role/ops", {},
                            region=REGION)

    assert state["name"] == "ops" and state["arn"] == f"arn:aws:iam::{PLACEHOLDER_ACCOUNT}:role/ops"


def test_invoke_says_which_answers_are_facts_and_which_are_invented():
    provider = Provider()

    region = provider.invoke("aws:index/getRegion:getRegion", {}, region=REGION)
    vpc = provider.invoke("aws:ec2/getVpc:getVpc", {"id": "vpc-0123456789abcdef0"}, region=REGION)

    assert region.from_facts and region.result["name"] == REGION
    assert not vpc.from_facts and vpc.result["id"] == "vpc-0123456789abcdef0"
    assert vpc.result["default"] is False  # a VPC named by id is not the region's default one


def test_invoke_of_a_data_source_no_installed_sdk_declares_names_the_package_to_install():
    with pytest.raises(UnknownInvoke, match=r"pulumi_acme"):
        Provider().invoke("acme:index/getWidget:getWidget", {}, region=REGION)
