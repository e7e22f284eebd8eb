"""Map-typed outputs AWS documents the keys of (integration_blueprint.preview.provider_maps) come
with those keys in known-value mode, and every tabled entry is a map output the SDK declares."""

import json

import pytest

from integration_blueprint.preview.provider_maps import MAP_OUTPUTS, template_output_keys
from integration_blueprint.preview.provider_outputs import known_outputs
from integration_blueprint.preview.provider_sdk import resource_decl

REGION = "eu-west-1"


def outputs(type_token: str, name: str, inputs: dict) -> dict:
    return known_outputs(type_token, name, f"urn:pulumi:dev::shop::{type_token}::{name}", inputs, region=REGION)[1]


def test_an_appsync_api_has_its_graphql_and_realtime_uris():
    token = "aws:appsync/graphQLApi:GraphQLApi"
    api_id, api = known_outputs(token, "api", f"urn:pulumi:dev::shop::{token}::api", {"authenticationType": "API_KEY"},
                                region=REGION)

    assert api_id and api["uris"] == {
        "GRAPHQL": f"https://{api_id}.appsync-api.{REGION}.amazonaws.com/graphql",
        "REALTIME": f"wss://{api_id}.appsync-realtime-api.{REGION}.amazonaws.com/graphql"}


def test_a_cloudformation_stack_has_an_output_per_entry_of_its_templates_outputs():
    yaml_template = "Resources:\n  Q: {Type: AWS::SQS::Queue}\nOutputs:\n  QueueUrl:\n    Value: !Ref Q\n  QueueArn:\n" \
                    "    Value: !GetAtt Q.Arn\n"
    json_template = json.dumps({"Resources": {}, "Outputs": {"TopicArn": {"Value": {"Ref": "T"}}}})

    from_yaml = outputs("aws:cloudformation/stack:Stack", "queue", {"name": "queue", "templateBody": yaml_template})
    from_json = outputs("aws:cloudformation/stack:Stack", "topic", {"name": "topic", "templateBody": json_template})

    assert sorted(from_yaml["outputs"]) == ["QueueArn", "QueueUrl"]
    assert list(from_json["outputs"]) == ["TopicArn"] and all(isinstance(v, str) for v in from_json["outputs"].values())


def test_a_template_that_is_not_text_or_has_no_outputs_gives_no_keys():
    assert template_output_keys(None) == [] and template_output_keys("Resources: {}") == []
    assert template_output_keys("Outputs: [unclosed") == []


@pytest.mark.parametrize("token, wire", sorted(MAP_OUTPUTS))
def test_every_tabled_map_is_a_map_output_the_sdk_declares(token, wire):
    decl = resource_decl(token)

    assert decl is not None
    [field] = [f for f in decl.outputs if f.wire == wire]
    assert isinstance(field.kind, tuple) and field.kind[0] == "map"
    made = outputs(token, "x", {"name": "x"})[wire]
    assert isinstance(made, dict) and all(isinstance(v, str) for v in made.values())
