"""Map-typed provider outputs whose keys AWS documents, filled with those keys in known-value mode.

The provider SDK declares these outputs as `Mapping[str, str]` and nothing more, so a made-up value
would be `{}`, and a program that reads a key (`api.uris["GRAPHQL"]`, `stack.outputs["BucketName"]`)
would fail with a KeyError the real preview of a deployed stack does not have. The keys and value
shapes come from the AWS documentation cited at each entry; a map output not listed here stays `{}`.

Each entry makes the map from the resource being answered (`subject`: its `id`, `region`, `account`,
`arn` and `get(input)`), as provider_outputs makes every other output.
"""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Optional

import yaml

MapMaker = Callable[[Any], dict]


def _appsync_uris(s: Any) -> dict:
    # AppSync API reference, GraphqlApi.uris: "The URIs", keyed GRAPHQL and REALTIME
    # (https://ID.appsync-api.REGION.amazonaws.com/graphql, wss://ID.appsync-realtime-api...).
    return {"GRAPHQL": f"https://{s.id}.appsync-api.{s.region}.amazonaws.com/graphql",
            "REALTIME": f"wss://{s.id}.appsync-realtime-api.{s.region}.amazonaws.com/graphql"}


def _appsync_event_dns(s: Any) -> dict:
    # AppSync API reference, Api.dns: "The DNS records for the API", keyed HTTP and REALTIME.
    return {"HTTP": f"{s.id}.appsync-api.{s.region}.amazonaws.com",
            "REALTIME": f"{s.id}.appsync-realtime-api.{s.region}.amazonaws.com"}


def _access_point_endpoints(s: Any) -> dict:
    # S3 API reference, GetAccessPoint Endpoints: the access point's endpoints by kind.
    name = s.get("name") or s.id
    host = f"{name}-{s.account}.s3-accesspoint"
    return {"ipv4": f"{host}.{s.region}.amazonaws.com",
            "dualstack": f"{host}.dualstack.{s.region}.amazonaws.com",
            "fips": f"{host}-fips.{s.region}.amazonaws.com",
            "fips_dualstack": f"{host}-fips.dualstack.{s.region}.amazonaws.com"}


def _stack_outputs(s: Any) -> dict:
    # CloudFormation DescribeStacks Outputs: one per entry of the template's `Outputs` section.
    return {key: f"{key}-{s.id.rsplit('/', 1)[-1][:8]}" for key in template_output_keys(s.get("templateBody"))}


def _application_tag(s: Any) -> dict:
    # Service Catalog AppRegistry CreateApplication applicationTag: {"awsApplication": <application ARN>}.
    return {"awsApplication": s.arn}


MAP_OUTPUTS: dict[tuple[str, str], MapMaker] = {
    ("aws:appsync/graphQLApi:GraphQLApi", "uris"): _appsync_uris,
    ("aws:appsync/api:Api", "dns"): _appsync_event_dns,
    ("aws:s3/accessPoint:AccessPoint", "endpoints"): _access_point_endpoints,
    ("aws:cloudformation/stack:Stack", "outputs"): _stack_outputs,
    ("aws:serverlessrepository/cloudFormationStack:CloudFormationStack", "outputs"): _stack_outputs,
    ("aws:servicecatalog/appregistryApplication:AppregistryApplication", "applicationTag"): _application_tag,
}


def map_maker(token: str, wire: str) -> Optional[MapMaker]:
    """How to make the map output `wire` of `token` with its documented keys (None: not documented)."""
    return MAP_OUTPUTS.get((token, wire))


class _TemplateLoader(yaml.SafeLoader):
    """A CloudFormation YAML template: its short-form functions (!Ref, !GetAtt, !Sub...) read as
    plain values, since only the Outputs section's keys are wanted."""


def _any_tag(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return loader.construct_sequence(node)
    return loader.construct_mapping(node)


_TemplateLoader.add_multi_constructor("!", _any_tag)


def template_output_keys(template: Any) -> list[str]:
    """The `Outputs` keys of a CloudFormation template given as JSON or YAML text (none when the
    template is unknown or not text)."""
    if isinstance(template, dict):
        document = template
    elif isinstance(template, str) and re.search(r"\bOutputs\b", template):
        try:
            document = json.loads(template)
        except ValueError:
            try:
                document = yaml.load(template, Loader=_TemplateLoader)  # noqa: S506 - a safe loader
            except yaml.YAMLError:
                return []
    else:
        return []
    outputs = document.get("Outputs") if isinstance(document, dict) else None
    return [str(key) for key in outputs] if isinstance(outputs, dict) else []
