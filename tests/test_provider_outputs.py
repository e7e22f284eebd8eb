"""The offline engine's provider side (integration_blueprint.preview.provider): a resource's
outputs after `pulumi up` and a data source's answer are what AWS would give, typed as the installed
pulumi-aws SDK declares them, the same on every run."""

import base64
import json
import re

import pulumi
import pulumi_aws as aws
import pytest

from integration_blueprint.preview.provider.check import planned_inputs
from integration_blueprint.preview.provider.data_sources import UnknownInvoke, invoke
from integration_blueprint.preview.provider.identifiers import ARN_SHAPES, CATALOGUE_RESOURCES, ID_SHAPES
from integration_blueprint.preview.provider.naming import NAMING
from integration_blueprint.preview.provider.outputs import known_outputs, read_outputs
from integration_blueprint.preview.provider.sdk import (
    function_decl,
    function_tokens,
    object_fields,
    resource_decl,
    resource_tokens,
)
from integration_blueprint.preview.provider.shapes import COMPUTED_IN_SETTINGS, SHAPES
from integration_blueprint.preview.provider.values import PLACEHOLDER_ACCOUNT
from integration_blueprint.preview.wire import UNKNOWN

REGION = "eu-west-1"
ACCOUNT = PLACEHOLDER_ACCOUNT
API_ID = "a1b2c3d4e5"
FUNCTION_ARN = f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:handler-1234567"
ROLE_ARN = f"arn:aws:iam::{ACCOUNT}:role/app-role-1234567"
CLUSTER_ARN = f"arn:aws:ecs:{REGION}:{ACCOUNT}:cluster/apps-1234567"
ARN = re.compile(r"^arn:aws:(?P<service>[a-z0-9-]+):(?P<region>[a-z0-9-]*):(?P<account>\d{12}|aws)?:(?P<resource>.+)$")


def urn(type_token: str, name: str) -> str:
    return f"urn:pulumi:dev::shop::{type_token}::{name}"


def outputs(type_token: str, name: str, inputs: dict) -> tuple[str, dict]:
    return known_outputs(type_token, name, urn(type_token, name), inputs, region=REGION)


def conforms(value, kind, *, required: bool) -> bool:
    """The value has the declared kind (None only where the SDK declares the output Optional)."""
    if value is None:
        return not required
    if kind == "str":
        return isinstance(value, str)
    if kind == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "float":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "bool":
        return isinstance(value, bool)
    if kind == "any":
        return True
    if kind[0] == "list":
        return isinstance(value, list) and all(conforms(v, kind[1], required=True) for v in value)
    if kind[0] == "map":
        return isinstance(value, dict) and all(conforms(v, kind[1], required=True) for v in value.values())
    fields = object_fields(kind[1], kind[2])
    return isinstance(value, dict) and all(
        f.wire in value and conforms(value[f.wire], f.kind, required=f.required) for f in fields)


def computed_by_the_provider(decl, field) -> bool:
    """An output the provider always sets that is no setting of the program's: it is never None. (A
    setting the program left out stays absent unless the SDK states AWS's default for it.)"""
    return field.required and field.wire not in decl.inputs


def arn_of(value: str) -> dict:
    found = ARN.match(value)
    assert found, f"not an ARN: {value!r}"
    return found.groupdict()


# A broad sample of what programs deploy, with the inputs a program gives (references already
# downgraded to the referenced resource's id or ARN, as the engine hands them to the provider).
SAMPLE = {
    "aws:apigateway/restApi:RestApi": {},
    "aws:apigateway/deployment:Deployment": {"restApi": API_ID},
    "aws:apigateway/stage:Stage": {"restApi": API_ID, "deployment": "abc123", "stageName": "prod"},
    "aws:apigateway/resource:Resource": {"restApi": API_ID, "parentId": "root123456", "pathPart": "orders"},
    "aws:apigatewayv2/api:Api": {"protocolType": "HTTP"},
    "aws:apigatewayv2/stage:Stage": {"apiId": API_ID, "name": "$default", "autoDeploy": True},
    "aws:apigatewayv2/integration:Integration": {"apiId": API_ID, "integrationType": "AWS_PROXY",
                                                 "integrationUri": FUNCTION_ARN},
    "aws:apigatewayv2/route:Route": {"apiId": API_ID, "routeKey": "GET /orders"},
    "aws:lambda/function:Function": {"runtime": "python3.12", "handler": "app.handler", "role": ROLE_ARN},
    "aws:lambda/alias:Alias": {"functionName": FUNCTION_ARN, "functionVersion": "1", "name": "live"},
    "aws:lambda/permission:Permission": {"action": "lambda:InvokeFunction", "function": FUNCTION_ARN,
                                         "principal": "apigateway.amazonaws.com"},
    "aws:lambda/eventSourceMapping:EventSourceMapping": {
        "functionName": FUNCTION_ARN, "eventSourceArn": f"arn:aws:sqs:{REGION}:{ACCOUNT}:jobs"},
    "aws:iam/role:Role": {"assumeRolePolicy": json.dumps({"Version": "2012-10-17", "Statement": []})},
    "aws:iam/policy:Policy": {"policy": json.dumps({"Version": "2012-10-17", "Statement": []})},
    "aws:iam/rolePolicyAttachment:RolePolicyAttachment": {
        "role": "app-role-1234567", "policyArn": "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"},
    "aws:sqs/queue:Queue": {},
    "aws:sns/topic:Topic": {},
    "aws:sns/topicSubscription:TopicSubscription": {
        "topic": f"arn:aws:sns:{REGION}:{ACCOUNT}:events", "protocol": "sqs",
        "endpoint": f"arn:aws:sqs:{REGION}:{ACCOUNT}:jobs"},
    "aws:dynamodb/table:Table": {"hashKey": "pk", "attributes": [{"name": "pk", "type": "S"}],
                                 "billingMode": "PAY_PER_REQUEST", "streamEnabled": True,
                                 "streamViewType": "NEW_AND_OLD_IMAGES"},
    "aws:kinesis/stream:Stream": {"shardCount": 1},
    "aws:ecs/cluster:Cluster": {},
    "aws:ecs/service:Service": {"cluster": CLUSTER_ARN, "desiredCount": 2},
    "aws:ecs/taskDefinition:TaskDefinition": {"containerDefinitions": "[]"},
    "aws:ec2/vpc:Vpc": {"cidrBlock": "10.0.0.0/16"},
    "aws:ec2/subnet:Subnet": {"vpcId": "vpc-0123456789abcdef0", "cidrBlock": "10.0.1.0/24"},
    "aws:ec2/securityGroup:SecurityGroup": {"vpcId": "vpc-0123456789abcdef0"},
    "aws:ec2/natGateway:NatGateway": {"subnetId": "subnet-0123456789abcdef0", "allocationId": "eipalloc-0123"},
    "aws:ec2/internetGateway:InternetGateway": {"vpcId": "vpc-0123456789abcdef0"},
    "aws:ec2/eip:Eip": {"domain": "vpc"},
    "aws:ec2/routeTable:RouteTable": {"vpcId": "vpc-0123456789abcdef0"},
    "aws:eks/cluster:Cluster": {"roleArn": ROLE_ARN, "vpcConfig": {"subnetIds": ["subnet-0123456789abcdef0"]}},
    "aws:s3/bucket:Bucket": {},
    "aws:s3/bucketV2:BucketV2": {},
    "aws:ssm/parameter:Parameter": {"name": "/shop/db/host", "type": "String", "value": "db.internal"},
    "aws:cloudwatch/logGroup:LogGroup": {"retentionInDays": 14},
    "aws:cloudwatch/metricAlarm:MetricAlarm": {"comparisonOperator": "GreaterThanThreshold",
                                               "evaluationPeriods": 1, "threshold": 0},
    "aws:cloudwatch/eventRule:EventRule": {"scheduleExpression": "rate(5 minutes)"},
    "aws:sfn/stateMachine:StateMachine": {"roleArn": ROLE_ARN, "definition": "{}"},
    "aws:kms/key:Key": {},
    "aws:secretsmanager/secret:Secret": {},
    "aws:lb/loadBalancer:LoadBalancer": {},
    "aws:lb/targetGroup:TargetGroup": {"port": 80, "protocol": "HTTP"},
    "aws:ecr/repository:Repository": {},
    "aws:acm/certificate:Certificate": {"domainName": "shop.example.com", "validationMethod": "DNS"},
    "aws:route53/zone:Zone": {"name": "example.com"},
    "aws:rds/instance:Instance": {"engine": "postgres", "instanceClass": "db.t4g.micro"},
}

# Type -> (IAM service prefix, how the ARN's resource part starts), as AWS writes the resource's ARN.
ARNS = {
    "aws:apigateway/restApi:RestApi": ("apigateway", "/restapis/"),
    "aws:apigateway/stage:Stage": ("apigateway", f"/restapis/{API_ID}/stages/prod"),
    "aws:apigatewayv2/api:Api": ("apigateway", "/apis/"),
    "aws:apigatewayv2/stage:Stage": ("apigateway", f"/apis/{API_ID}/stages/$default"),
    "aws:lambda/function:Function": ("lambda", "function:sample-"),
    "aws:lambda/alias:Alias": ("lambda", "function:handler-1234567:live"),
    "aws:lambda/eventSourceMapping:EventSourceMapping": ("lambda", "event-source-mapping:"),
    "aws:iam/role:Role": ("iam", "role/sample-"),
    "aws:iam/policy:Policy": ("iam", "policy/sample-"),
    "aws:sqs/queue:Queue": ("sqs", "sample-"),
    "aws:sns/topic:Topic": ("sns", "sample-"),
    "aws:sns/topicSubscription:TopicSubscription": ("sns", "events:"),
    "aws:dynamodb/table:Table": ("dynamodb", "table/sample-"),
    "aws:kinesis/stream:Stream": ("kinesis", "stream/sample-"),
    "aws:ecs/cluster:Cluster": ("ecs", "cluster/sample-"),
    "aws:ecs/service:Service": ("ecs", "service/apps-1234567/sample-"),
    "aws:ecs/taskDefinition:TaskDefinition": ("ecs", "task-definition/sample-"),
    "aws:ec2/vpc:Vpc": ("ec2", "vpc/vpc-"),
    "aws:ec2/subnet:Subnet": ("ec2", "subnet/subnet-"),
    "aws:ec2/securityGroup:SecurityGroup": ("ec2", "security-group/sg-"),
    "aws:ec2/internetGateway:InternetGateway": ("ec2", "internet-gateway/igw-"),
    "aws:ec2/routeTable:RouteTable": ("ec2", "route-table/rtb-"),
    "aws:eks/cluster:Cluster": ("eks", "cluster/sample-"),
    "aws:s3/bucket:Bucket": ("s3", "sample-"),
    "aws:s3/bucketV2:BucketV2": ("s3", "sample-"),
    "aws:ssm/parameter:Parameter": ("ssm", "parameter/shop/db/host"),
    "aws:cloudwatch/logGroup:LogGroup": ("logs", "log-group:sample-"),
    "aws:cloudwatch/metricAlarm:MetricAlarm": ("cloudwatch", "alarm:sample-"),
    "aws:cloudwatch/eventRule:EventRule": ("events", "rule/sample-"),
    "aws:sfn/stateMachine:StateMachine": ("states", "stateMachine:sample-"),
    "aws:kms/key:Key": ("kms", "key/"),
    "aws:secretsmanager/secret:Secret": ("secretsmanager", "secret:sample-"),
    "aws:lb/loadBalancer:LoadBalancer": ("elasticloadbalancing", "loadbalancer/app/sample-"),
    "aws:lb/targetGroup:TargetGroup": ("elasticloadbalancing", "targetgroup/sample-"),
    "aws:ecr/repository:Repository": ("ecr", "repository/sample-"),
    "aws:acm/certificate:Certificate": ("acm", "certificate/"),
    "aws:route53/zone:Zone": ("route53", "hostedzone/Z"),
    "aws:rds/instance:Instance": ("rds", "db:sample-"),
}


@pytest.mark.parametrize("type_token", sorted(SAMPLE))
def test_every_output_the_provider_computes_is_present_and_all_are_typed_as_the_sdk_declares(type_token):
    id_, out = outputs(type_token, "sample", SAMPLE[type_token])
    decl = resource_decl(type_token)

    assert id_ and isinstance(id_, str)
    for field in decl.outputs:
        always_set = computed_by_the_provider(decl, field)
        assert field.wire in out or not always_set, field.wire
        assert conforms(out.get(field.wire), field.kind, required=always_set), (field.wire, out.get(field.wire))
    assert None not in out.values()  # what nobody set and nobody knows is absent, as the program wrote it
    for wire, value in SAMPLE[type_token].items():  # what the program set comes back as it set it
        assert out[wire] == value or out[wire].items() >= value.items()  # (+ what the provider computes)


@pytest.mark.parametrize("type_token", sorted(ARNS))
def test_arns_name_the_service_and_the_resource_as_aws_writes_them(type_token):
    service, resource = ARNS[type_token]
    _, out = outputs(type_token, "sample", SAMPLE[type_token])

    arn = arn_of(out["arn"])

    assert (arn["service"], arn["resource"][:len(resource)]) == (service, resource), out["arn"]
    assert arn["account"] in (ACCOUNT, "aws", None)
    assert arn["region"] in (REGION, "")


def test_the_same_urn_gives_the_same_values_and_another_urn_other_ones():
    first = outputs("aws:lambda/function:Function", "api", SAMPLE["aws:lambda/function:Function"])
    again = outputs("aws:lambda/function:Function", "api", SAMPLE["aws:lambda/function:Function"])
    other = outputs("aws:lambda/function:Function", "worker", SAMPLE["aws:lambda/function:Function"])

    assert first == again
    assert first[1]["arn"] != other[1]["arn"] and first[1]["sourceCodeHash"] != other[1]["sourceCodeHash"]


def test_api_gateway_outputs_are_what_programs_build_urls_and_permissions_from():
    api_id, api = outputs("aws:apigateway/restApi:RestApi", "api", {})
    _, stage = outputs("aws:apigateway/stage:Stage", "prod", {"restApi": api_id, "deployment": "d",
                                                              "stageName": "prod"})
    http_id, http = outputs("aws:apigatewayv2/api:Api", "http", {"protocolType": "HTTP"})
    _, default = outputs("aws:apigatewayv2/stage:Stage", "default", {"apiId": http_id, "name": "$default"})

    assert re.fullmatch(r"[a-z0-9]{10}", api_id) and re.fullmatch(r"[a-z0-9]{10}", api["rootResourceId"])
    assert api["executionArn"] == f"arn:aws:execute-api:{REGION}:{ACCOUNT}:{api_id}"
    assert stage["invokeUrl"] == f"https://{api_id}.execute-api.{REGION}.amazonaws.com/prod"
    assert stage["executionArn"] == f"arn:aws:execute-api:{REGION}:{ACCOUNT}:{api_id}/prod"
    assert http["apiEndpoint"] == f"https://{http_id}.execute-api.{REGION}.amazonaws.com"
    assert default["invokeUrl"] == f"https://{http_id}.execute-api.{REGION}.amazonaws.com/"
    # The permission programs write for API Gateway: a string, never "None/*/*".
    assert f"{api['executionArn']}/*/*".startswith("arn:aws:execute-api:")


def test_a_function_has_the_arns_an_integration_or_an_alias_needs():
    _, fn = outputs("aws:lambda/function:Function", "api", SAMPLE["aws:lambda/function:Function"])
    _, published = outputs("aws:lambda/function:Function", "worker",
                           {**SAMPLE["aws:lambda/function:Function"], "publish": True})

    assert fn["invokeArn"] == (f"arn:aws:apigateway:{REGION}:lambda:path/2015-03-31/functions/"
                               f"{fn['arn']}/invocations")
    assert (fn["version"], fn["qualifiedArn"]) == ("$LATEST", f"{fn['arn']}:$LATEST")
    assert (published["version"], published["qualifiedArn"]) == ("1", f"{published['arn']}:1")
    # Provider defaults (from the SDK's docstrings), as AWS reports them for a function that set none.
    assert (fn["memorySize"], fn["timeout"], fn["packageType"]) == (128, 3, "Zip")
    # Settings the program left out whose default the SDK does not state stay absent, as written
    # (AWS would report loggingConfig's /aws/lambda/<name>; policies judge the group by that name).
    assert "loggingConfig" not in fn and "deadLetterConfig" not in fn
    assert len(base64.b64decode(fn["sourceCodeHash"])) == 32


def test_an_oidc_provider_for_an_eks_cluster_is_named_by_the_issuer_as_irsa_roles_trust_it():
    _, cluster = outputs("aws:eks/cluster:Cluster", "k8s", SAMPLE["aws:eks/cluster:Cluster"])
    issuer = cluster["identities"][0]["oidcs"][0]["issuer"]

    provider_id, provider = outputs("aws:iam/openIdConnectProvider:OpenIdConnectProvider", "oidc",
                                    {"url": issuer, "clientIdLists": ["sts.amazonaws.com"]})

    assert provider_id == provider["arn"] == f"arn:aws:iam::{ACCOUNT}:oidc-provider/{issuer.removeprefix('https://')}"


def test_a_function_url_is_lambdas_url_and_a_buckets_settings_are_named_by_the_bucket():
    _, url = outputs("aws:lambda/functionUrl:FunctionUrl", "public", {"functionName": "orders-1234567",
                                                                     "authorizationType": "NONE"})
    policy_id, _ = outputs("aws:s3/bucketPolicy:BucketPolicy", "policy", {"bucket": "assets-1234567", "policy": "{}"})
    versioning_id, _ = outputs("aws:s3/bucketVersioning:BucketVersioning", "versions", {"bucket": "assets-1234567"})

    assert re.fullmatch(rf"https://[a-z0-9]{{32}}\.lambda-url\.{REGION}\.on\.aws/", url["functionUrl"])
    assert url["functionArn"] == f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:orders-1234567"
    assert policy_id == versioning_id == "assets-1234567"


def test_a_table_with_a_stream_has_its_label_and_arn_and_one_without_has_neither():
    _, streamed = outputs("aws:dynamodb/table:Table", "orders", SAMPLE["aws:dynamodb/table:Table"])
    _, plain = outputs("aws:dynamodb/table:Table", "plain", {"hashKey": "pk"})

    assert streamed["streamArn"] == f"{streamed['arn']}/stream/{streamed['streamLabel']}"
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}", streamed["streamLabel"])
    assert (plain["streamArn"], plain["streamLabel"]) == ("", "")


def test_ec2_ids_have_ec2s_prefixes():
    vpc_id, vpc = outputs("aws:ec2/vpc:Vpc", "net", {"cidrBlock": "10.0.0.0/16"})
    subnet_id, subnet = outputs("aws:ec2/subnet:Subnet", "a", {"vpcId": vpc_id, "cidrBlock": "10.0.1.0/24"})
    sg_id, _ = outputs("aws:ec2/securityGroup:SecurityGroup", "web", {"vpcId": vpc_id})
    nat_id, nat = outputs("aws:ec2/natGateway:NatGateway", "nat", {"subnetId": subnet_id})

    hex17 = "[0-9a-f]{17}"
    assert re.fullmatch(f"vpc-{hex17}", vpc_id) and re.fullmatch(f"sg-{hex17}", vpc["defaultSecurityGroupId"])
    assert re.fullmatch(f"rtb-{hex17}", vpc["mainRouteTableId"])
    assert re.fullmatch(f"subnet-{hex17}", subnet_id) and subnet["availabilityZone"] == f"{REGION}a"
    assert re.fullmatch(f"sg-{hex17}", sg_id) and re.fullmatch(f"nat-{hex17}", nat_id)
    assert re.fullmatch(r"\d+\.\d+\.\d+\.\d+", nat["publicIp"]) and nat["privateIp"].startswith("10.")


def test_an_eks_cluster_has_an_endpoint_a_certificate_and_an_oidc_issuer():
    _, cluster = outputs("aws:eks/cluster:Cluster", "k8s", SAMPLE["aws:eks/cluster:Cluster"])

    assert re.fullmatch(rf"https://[0-9A-F]{{32}}\.gr7\.{REGION}\.eks\.amazonaws\.com", cluster["endpoint"])
    assert base64.b64decode(cluster["certificateAuthority"]["data"]).startswith(b"-----BEGIN CERTIFICATE-----")
    assert cluster["vpcConfig"]["subnetIds"] == ["subnet-0123456789abcdef0"]  # the program's, and AWS's:
    assert re.fullmatch(r"sg-[0-9a-f]{17}", cluster["vpcConfig"]["clusterSecurityGroupId"])
    assert cluster["identities"][0]["oidcs"][0]["issuer"].startswith(f"https://oidc.eks.{REGION}.amazonaws.com/id/")


def test_queues_topics_and_buckets_are_named_within_aws_limits():
    queue_url, queue = outputs("aws:sqs/queue:Queue", "billing", {"fifoQueue": True})
    _, topic = outputs("aws:sns/topic:Topic", "events", {"fifoTopic": True})
    bucket_id, bucket = outputs("aws:s3/bucket:Bucket", "Uploads-" + "x" * 80, {})
    _, fn = outputs("aws:lambda/function:Function", "f" * 100, SAMPLE["aws:lambda/function:Function"])

    assert re.fullmatch(r"billing-[0-9a-f]{7}\.fifo", queue["name"])
    assert queue_url == queue["url"] == f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{queue['name']}"
    assert topic["name"].endswith(".fifo") and topic["arn"].endswith(topic["name"])
    assert bucket_id == bucket["bucket"] and len(bucket["bucket"]) == 63 and bucket["bucket"].islower()
    assert bucket["bucketRegionalDomainName"] == f"{bucket['bucket']}.s3.{REGION}.amazonaws.com"
    assert len(fn["name"]) == 64


def test_check_auto_names_what_the_program_left_unnamed_and_keeps_the_rest():
    def plan(type_token, inputs, name="orders"):
        return planned_inputs(type_token, name, urn(type_token, name), inputs, region=REGION)

    assert re.fullmatch(r"orders-[0-9a-f]{7}", plan("aws:sqs/queue:Queue", {})["name"])
    assert plan("aws:sqs/queue:Queue", {"name": "given"})["name"] == "given"
    assert plan("aws:sqs/queue:Queue", {"name": UNKNOWN})["name"] == UNKNOWN  # stays unknown
    assert "name" not in plan("aws:sqs/queue:Queue", {"namePrefix": "jobs-"})  # AWS names it at create
    assert re.fullmatch(r"orders-[0-9a-f]{7}", plan("aws:ecs/taskDefinition:TaskDefinition", {})["family"])
    assert plan("aws:ec2/vpc:Vpc", {"cidrBlock": "10.0.0.0/16"}) == {"cidrBlock": "10.0.0.0/16"}
    assert plan("aws:lambda/permission:Permission", {"action": "lambda:InvokeFunction"}) == {
        "action": "lambda:InvokeFunction"}


def test_outputs_made_from_an_unknown_input_are_unknown_never_none_in_a_string():
    queue_id, queue = outputs("aws:sqs/queue:Queue", "jobs", {"name": UNKNOWN})
    _, stage = outputs("aws:apigateway/stage:Stage", "prod", {"restApi": UNKNOWN, "stageName": "prod"})

    assert queue_id == "" and queue["arn"] == queue["url"] == UNKNOWN
    assert stage["invokeUrl"] == stage["executionArn"] == UNKNOWN
    assert queue["visibilityTimeoutSeconds"] == 30  # what does not depend on it stays known


def test_every_tabled_name_and_shape_is_of_a_type_and_property_the_sdk_declares():
    for type_token, naming in NAMING.items():
        assert naming.prop in resource_decl(type_token).inputs, type_token
    for type_token, shapes in SHAPES.items():
        declared = {f.wire for f in resource_decl(type_token).outputs}
        assert set(shapes) <= declared, (type_token, set(shapes) - declared)
    for type_token in {*ARN_SHAPES, *ID_SHAPES, *CATALOGUE_RESOURCES, *COMPUTED_IN_SETTINGS}:
        assert resource_decl(type_token) is not None, type_token


@pytest.mark.parametrize("type_token", sorted(SAMPLE))
def test_any_input_unknown_never_breaks_an_answer(type_token):
    inputs = {**{wire: UNKNOWN for wire in SAMPLE[type_token]}, "tags": UNKNOWN, "port": UNKNOWN,
              "subjectAlternativeNames": UNKNOWN}

    id_, out = outputs(type_token, "sample", inputs)

    assert isinstance(id_, str) and all(out[wire] == UNKNOWN for wire in inputs)


def test_a_name_prefix_gives_the_name_terraform_makes_of_it():
    _, queue = outputs("aws:sqs/queue:Queue", "jobs", {"namePrefix": "jobs-"})
    bucket_id, bucket = outputs("aws:s3/bucket:Bucket", "logs", {"bucketPrefix": "logs-"})

    assert re.fullmatch(r"jobs-\d{26}", queue["name"])
    assert re.fullmatch(r"logs-\d{26}", bucket["bucket"]) and bucket_id == bucket["bucket"]
    assert "bucket" not in planned_inputs("aws:s3/bucket:Bucket", "logs", "urn:logs", {"bucketPrefix": "logs-"},
                                          region=REGION)


def test_another_stacks_outputs_are_none_offline():
    reference = read_outputs("pulumi:pulumi:StackReference", "network", "acme/network/prod", {"name": "acme/network/prod"},
                             region=REGION)

    assert reference == {"name": "acme/network/prod", "outputs": {}, "secretOutputNames": []}


def test_a_provider_resource_outputs_its_inputs():
    id_, out = outputs("pulumi:providers:aws", "eu", {"region": "eu-central-1"})

    assert id_ and out == {"region": "eu-central-1"}


def test_a_resource_read_by_id_is_that_resource():
    queue_url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/legacy-jobs"
    queue = read_outputs("aws:sqs/queue:Queue", "legacy", queue_url, {}, region=REGION)
    role = read_outputs("aws:iam/role:Role", "ops", "ops-admin", {}, region=REGION)

    assert (queue["name"], queue["arn"], queue["url"]) == (
        "legacy-jobs", f"arn:aws:sqs:{REGION}:{ACCOUNT}:legacy-jobs", queue_url)
    assert role["arn"] == f"arn:aws:iam::{ACCOUNT}:role/ops-admin"


def test_a_security_group_read_by_its_id_is_not_named_by_it():
    group = read_outputs("aws:ec2/securityGroup:SecurityGroup", "default", "sg-0123456789abcdef0", {}, region=REGION)

    assert group["arn"] == f"arn:aws:ec2:{REGION}:{ACCOUNT}:security-group/sg-0123456789abcdef0"
    assert group["name"] != "sg-0123456789abcdef0"


def test_transit_gateway_ids_are_ec2_ids():
    tgw_id, tgw = outputs("aws:ec2transitgateway/transitGateway:TransitGateway", "hub", {})
    table_id, _ = outputs("aws:ec2transitgateway/routeTable:RouteTable", "spoke", {"transitGatewayId": tgw_id})

    assert re.fullmatch(r"tgw-[0-9a-f]{17}", tgw_id) and re.fullmatch(r"tgw-rtb-[0-9a-f]{17}", table_id)
    assert re.fullmatch(r"tgw-rtb-[0-9a-f]{17}", tgw["associationDefaultRouteTableId"])
    assert arn_of(tgw["arn"])["service"] == "ec2"


def test_a_bucket_website_has_the_regions_website_endpoint():
    for type_token in ("aws:s3/bucketWebsiteConfiguration:BucketWebsiteConfiguration",
                       "aws:s3/bucketWebsiteConfigurationV2:BucketWebsiteConfigurationV2"):
        _, website = outputs(type_token, "site", {"bucket": "shop-site"})
        assert website["websiteEndpoint"] == f"shop-site.s3-website-{REGION}.amazonaws.com"


# The shape pulumi-language-python generates for any provider's SDK, cut to one resource and one
# data source (read, never imported).
ZETA_SDK = {
    "__init__.py": '''
from . import _utilities
_utilities.register(
    resource_modules="""
[
 {
  "pkg": "zeta",
  "mod": "storage/vault",
  "fqn": "pulumi_zeta.storage",
  "classes": {
   "zeta:storage/vault:Vault": "Vault"
  }
 },
 {
  "pkg": "zeta",
  "mod": "apps/v1",
  "fqn": "pulumi_zeta.apps.v1",
  "classes": {
   "zeta:apps/v1:Deployment": "Deployment"
  }
 }
]
""",
    resource_packages="""[]""")
''',
    "storage/vault.py": '''
@pulumi.input_type
class VaultArgs:
    @_builtins.property
    @pulumi.getter(name="sizeGb")
    def size_gb(self) -> pulumi.Input[_builtins.int]:
        return pulumi.get(self, "size_gb")

    @_builtins.property
    @pulumi.getter
    def name(self) -> Optional[pulumi.Input[_builtins.str]]:
        return pulumi.get(self, "name")


class Vault(pulumi.CustomResource):
    @_builtins.property
    @pulumi.getter
    def arn(self) -> pulumi.Output[_builtins.str]:
        return pulumi.get(self, "arn")

    @_builtins.property
    @pulumi.getter(name="sizeGb")
    def size_gb(self) -> pulumi.Output[_builtins.int]:
        return pulumi.get(self, "size_gb")

    @_builtins.property
    @pulumi.getter
    def endpoints(self) -> pulumi.Output[Sequence['outputs.VaultEndpoint']]:
        return pulumi.get(self, "endpoints")

    @_builtins.property
    @pulumi.getter(name="retentionDays")
    def retention_days(self) -> pulumi.Output[Optional[_builtins.int]]:
        """
        How long a deleted secret is kept. Defaults to `7`.
        """
        return pulumi.get(self, "retention_days")
''',
    "storage/outputs.py": '''
@pulumi.output_type
class VaultEndpoint(dict):
    @_builtins.property
    @pulumi.getter(name="hostName")
    def host_name(self) -> _builtins.str:
        return pulumi.get(self, "host_name")

    @_builtins.property
    @pulumi.getter
    def port(self) -> _builtins.int:
        return pulumi.get(self, "port")
''',
    "apps/v1/Deployment.py": '''
class Deployment(pulumi.CustomResource):
    @_builtins.property
    @pulumi.getter
    def replicas(self) -> pulumi.Output[_builtins.int]:
        return pulumi.get(self, "replicas")
''',
    "storage/get_vault.py": '''
@pulumi.output_type
class GetVaultResult:
    @_builtins.property
    @pulumi.getter
    def id(self) -> _builtins.str:
        return pulumi.get(self, "id")

    @_builtins.property
    @pulumi.getter(name="sizeGb")
    def size_gb(self) -> _builtins.int:
        return pulumi.get(self, "size_gb")


def get_vault(name=None, opts=None):
    __ret__ = pulumi.runtime.invoke('zeta:storage/getVault:getVault', __args__, opts=opts, typ=GetVaultResult).value
''',
}


def test_any_installed_provider_sdk_is_read_the_same_way(tmp_path, monkeypatch):
    for relative, text in ZETA_SDK.items():
        path = tmp_path / "pulumi_zeta" / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for package in ("storage", "apps", "apps/v1"):
        (tmp_path / "pulumi_zeta" / package / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))

    vault_id, vault = outputs("zeta:storage/vault:Vault", "secrets", {"sizeGb": 10})
    lookup = call("zeta:storage/getVault:getVault", name="secrets")

    assert re.fullmatch(r"secrets-[0-9a-f]{7}", vault["name"]) and vault_id == vault["name"]  # auto-named
    assert vault["sizeGb"] == 10 and vault["retentionDays"] == 7
    assert isinstance(vault["arn"], str) and vault["arn"].startswith("arn:")
    assert [set(e) for e in vault["endpoints"]] == [{"hostName", "port"}]
    assert isinstance(vault["endpoints"][0]["port"], int)
    assert isinstance(lookup["sizeGb"], int) and lookup["id"]
    # A class in a file of its own name (pulumi_kubernetes' layout) is found too.
    assert isinstance(outputs("zeta:apps/v1:Deployment", "web", {})[1]["replicas"], int)


def test_a_resource_type_no_sdk_declares_keeps_its_inputs():
    id_, out = outputs("acme:index:Widget", "w", {"size": 3})

    assert id_ and out == {"size": 3}


def every_type_sample() -> list[str]:
    """Every 6th type pulumi-aws registers (~290 of ~1750, a second or two; walking all of them takes
    8 s, which benchmarks/provider_outputs.py does)."""
    return resource_tokens("aws")[::6]


def test_no_type_pulumi_aws_declares_leaves_an_output_the_provider_computes_empty():
    tokens = every_type_sample()
    assert len(tokens) > 250

    for type_token in tokens:
        id_, out = outputs(type_token, "res", {})
        decl = resource_decl(type_token)
        missing = [f.wire for f in decl.outputs if computed_by_the_provider(decl, f) and out.get(f.wire) is None]
        assert id_ and not missing, (type_token, missing)


class ProviderMocks(pulumi.runtime.Mocks):
    """The SDK's own mock engine answered by this module: the SDK deserializes the values into the
    program's objects exactly as it does a RegisterResource or Invoke response."""

    def new_resource(self, args):
        return known_outputs(args.typ, args.name, urn(args.typ, args.name), args.inputs, region=REGION)

    def call(self, args):
        return invoke(args.token, args.args, region=REGION)


def test_a_program_reads_the_outputs_and_lookups_public_programs_use_through_the_sdk():
    pulumi.runtime.set_mocks(ProviderMocks(), preview=False)

    @pulumi.runtime.test
    def program():
        fn = aws.lambda_.Function("fn", runtime="python3.12", handler="app.handler", role=ROLE_ARN,
                                  code=pulumi.AssetArchive({}))
        api = aws.apigatewayv2.Api("api", protocol_type="HTTP")
        cluster = aws.eks.Cluster("k8s", role_arn=ROLE_ARN, vpc_config={"subnet_ids": ["subnet-0123456789abcdef0"]})
        cert = aws.acm.Certificate("cert", domain_name="shop.example.com", validation_method="DNS")
        zones = aws.get_availability_zones()
        admin = aws.iam.get_policy(name="AdministratorAccess")
        vpc = aws.ec2.get_vpc(default=True)
        subnets = aws.ec2.get_subnets(filters=[{"name": "vpc-id", "values": [vpc.id]}])
        image = aws.ec2.get_ami(most_recent=True, owners=["amazon"], filters=[{"name": "name", "values": ["al2023-*"]}])
        assert zones.names[0] == f"{REGION}a" and admin.arn == "arn:aws:iam::aws:policy/AdministratorAccess"
        assert subnets.ids and image.id.startswith("ami-")

        def check(values):
            integration_uri, permission_source, endpoint, security_group, ca, issuer, record = values
            assert integration_uri.startswith(f"arn:aws:apigateway:{REGION}:lambda:path/2015-03-31/functions/arn:")
            assert permission_source.startswith("arn:aws:execute-api:") and permission_source.endswith("/*/*")
            assert endpoint.startswith("https://") and security_group.startswith("sg-")
            assert base64.b64decode(ca) and issuer.startswith("https://oidc.eks.")
            assert record.endswith(".shop.example.com.")

        return pulumi.Output.all(
            fn.invoke_arn, api.execution_arn.apply(lambda arn: f"{arn}/*/*"), api.api_endpoint,
            cluster.vpc_config.cluster_security_group_id, cluster.certificate_authority.data,
            cluster.identities[0].oidcs[0].issuer, cert.domain_validation_options[0].resource_record_name,
        ).apply(check)

    program()


# ---- data sources --------------------------------------------------------------------------------

def call(token: str, **args):
    return invoke(token, args, region=REGION)


def test_identity_region_and_partition_answer_as_aws_does():
    assert call("aws:index/getCallerIdentity:getCallerIdentity")["accountId"] == ACCOUNT
    region = call("aws:index/getRegion:getRegion")
    assert (region["region"], region["name"], region["description"]) == (REGION, REGION, "Europe (Ireland)")
    assert call("aws:index/getPartition:getPartition")["dnsSuffix"] == "amazonaws.com"


def test_availability_zones_are_the_regions_with_their_zone_ids():
    zones = call("aws:index/getAvailabilityZones:getAvailabilityZones", state="available")
    virginia = invoke("aws:index/getAvailabilityZones:getAvailabilityZones", {}, region="us-east-1")
    one = call("aws:index/getAvailabilityZone:getAvailabilityZone", name=f"{REGION}b")

    assert zones["names"] == [f"{REGION}a", f"{REGION}b", f"{REGION}c"]
    assert zones["zoneIds"] == ["euw1-az1", "euw1-az2", "euw1-az3"]
    assert virginia["names"][:2] == ["us-east-1a", "us-east-1b"] and virginia["zoneIds"][0] == "use1-az1"
    assert (one["zoneId"], one["nameSuffix"]) == ("euw1-az2", "b")
    without_a = call("aws:index/getAvailabilityZones:getAvailabilityZones", excludeNames=[f"{REGION}a"])
    assert (without_a["names"], without_a["zoneIds"]) == ([f"{REGION}b", f"{REGION}c"], ["euw1-az2", "euw1-az3"])


def test_managed_policies_have_their_real_arns_paths_and_documents():
    admin = call("aws:iam/getPolicy:getPolicy", name="AdministratorAccess")
    basic = call("aws:iam/getPolicy:getPolicy", arn="arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole")
    own = call("aws:iam/getPolicy:getPolicy", name="team-deploy")

    assert admin["arn"] == "arn:aws:iam::aws:policy/AdministratorAccess"
    assert json.loads(admin["policy"])["Statement"] == [{"Effect": "Allow", "Action": "*", "Resource": "*"}]
    assert (basic["name"], basic["path"]) == ("AWSLambdaBasicExecutionRole", "/service-role/")
    assert "logs:PutLogEvents" in json.loads(basic["policy"])["Statement"][0]["Action"]
    assert own["arn"] == f"arn:aws:iam::{ACCOUNT}:policy/team-deploy"


def test_policy_documents_are_rendered_as_the_provider_renders_them():
    document = call("aws:iam/getPolicyDocument:getPolicyDocument", statements=[
        {"actions": ["sqs:SendMessage", "sqs:GetQueueUrl"], "resources": ["*"],
         "principals": [{"type": "Service", "identifiers": ["sns.amazonaws.com"]}]}])

    assert json.loads(document["json"])["Statement"] == [{
        "Effect": "Allow", "Action": ["sqs:GetQueueUrl", "sqs:SendMessage"], "Resource": "*",
        "Principal": {"Service": "sns.amazonaws.com"}}]


def test_source_and_override_documents_merge_by_sid_as_the_provider_merges_them():
    base = json.dumps({"Statement": [{"Sid": "Read", "Effect": "Allow", "Action": "s3:GetObject", "Resource": "*"}]})
    narrower = json.dumps({"Statement": [{"Sid": "Read", "Effect": "Allow", "Action": "s3:GetObject",
                                          "Resource": "arn:aws:s3:::assets/*"}]})

    document = call("aws:iam/getPolicyDocument:getPolicyDocument", sourceJson=base, overridePolicyDocuments=[narrower],
                    statements=[{"sid": "List", "actions": ["s3:ListBucket"], "resources": ["arn:aws:s3:::assets"]}])

    assert [(s["Sid"], s["Resource"]) for s in json.loads(document["json"])["Statement"]] == [
        ("Read", "arn:aws:s3:::assets/*"), ("List", "arn:aws:s3:::assets")]
    assert json.loads(document["minifiedJson"]) == json.loads(document["json"])


def test_the_default_vpc_its_subnets_and_security_groups_agree():
    vpc = call("aws:ec2/getVpc:getVpc", default=True)
    subnets = call("aws:ec2/getSubnets:getSubnets", filters=[{"name": "vpc-id", "values": [vpc["id"]]}])
    _, group = outputs("aws:ec2/securityGroup:SecurityGroup", "web", {})

    assert re.fullmatch(r"vpc-[0-9a-f]{17}", vpc["id"]) and vpc["cidrBlock"] == "172.31.0.0/16"
    tagged = call("aws:ec2/getVpc:getVpc", tags={"Name": "shop"})
    assert tagged["default"] is False and tagged["id"] != vpc["id"]
    assert len(subnets["ids"]) == 3 and all(s.startswith("subnet-") for s in subnets["ids"])
    assert group["vpcId"] == vpc["id"]


def test_a_subnet_looked_up_by_id_is_that_subnet_in_a_vpc():
    subnet = call("aws:ec2/getSubnet:getSubnet", id="subnet-0123456789abcdef0")

    assert subnet["id"] == "subnet-0123456789abcdef0" and subnet["arn"].endswith("subnet/subnet-0123456789abcdef0")
    assert re.fullmatch(r"vpc-[0-9a-f]{17}", subnet["vpcId"]) and re.fullmatch(r"172\.31\.\d+\.0/20", subnet["cidrBlock"])


def test_image_lookups_answer_an_ami_id():
    ami = call("aws:ec2/getAmi:getAmi", mostRecent=True, owners=["amazon"],
               filters=[{"name": "name", "values": ["al2023-ami-*-x86_64"]}])
    parameter = call("aws:ssm/getParameter:getParameter",
                     name="/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64")

    assert re.fullmatch(r"ami-[0-9a-f]{17}", ami["id"]) and ami["architecture"] == "x86_64"
    assert re.fullmatch(r"ami-[0-9a-f]{17}", parameter["value"])


def test_registry_and_load_balancer_lookups_answer_as_aws_does():
    token = call("aws:ecr/getAuthorizationToken:getAuthorizationToken")
    elb = call("aws:elb/getServiceAccount:getServiceAccount")

    assert base64.b64decode(token["authorizationToken"]).decode() == f"AWS:{token['password']}"
    assert token["proxyEndpoint"] == f"https://{ACCOUNT}.dkr.ecr.{REGION}.amazonaws.com"
    assert elb["arn"] == "arn:aws:iam::156460612806:root"  # eu-west-1's ELB account


def test_lookups_of_a_resource_by_name_answer_that_resources_arns():
    function = call("aws:lambda/getFunction:getFunction", functionName="orders")
    role = call("aws:iam/getRole:getRole", name="deployer")
    bucket = call("aws:s3/getBucket:getBucket", bucket="assets")
    alias = call("aws:kms/getAlias:getAlias", name="alias/aws/s3")
    zone = call("aws:route53/getZone:getZone", name="example.com")
    certificate = call("aws:acm/getCertificate:getCertificate", domain="example.com")
    secret = call("aws:secretsmanager/getSecretVersion:getSecretVersion", secretId="db-password")

    assert function["arn"] == f"arn:aws:lambda:{REGION}:{ACCOUNT}:function:orders"
    assert function["invokeArn"].endswith(f"/functions/{function['arn']}/invocations")
    assert function["kmsKeyArn"] == ""  # a setting nobody made is empty, as AWS answers it
    assert role["arn"] == f"arn:aws:iam::{ACCOUNT}:role/deployer" and role["path"] == "/"
    assert bucket["arn"] == "arn:aws:s3:::assets" and bucket["bucketRegionalDomainName"] == f"assets.s3.{REGION}.amazonaws.com"
    assert alias["targetKeyArn"] == f"arn:aws:kms:{REGION}:{ACCOUNT}:key/{alias['targetKeyId']}"
    assert re.fullmatch(r"Z[0-9A-Z]+", zone["zoneId"]) and len(zone["nameServers"]) == 4
    assert arn_of(certificate["arn"])["service"] == "acm" and certificate["status"] == "ISSUED"
    assert secret["secretString"] and arn_of(secret["arn"])["resource"].startswith("secret:db-password-")


@pytest.mark.parametrize("token", ["aws:index/getRegion:getRegion", "aws:ec2/getVpc:getVpc",
                                   "aws:lambda/getFunction:getFunction", "aws:sqs/getQueue:getQueue",
                                   "aws:ec2/getSecurityGroup:getSecurityGroup", "aws:iam/getUser:getUser"])
def test_every_result_field_the_sdk_declares_is_answered_typed(token):
    result = call(token, name="thing")

    for field in function_decl(token).result:
        assert field.wire in result, field.wire
        assert conforms(result[field.wire], field.kind, required=field.required), (field.wire, result[field.wire])


def test_no_data_source_pulumi_aws_declares_leaves_a_field_aws_always_answers_empty():
    tokens = function_tokens("aws")[::8]  # ~85 of ~690 in a second; benchmarks/provider_outputs.py walks all
    assert len(tokens) > 80

    for token in tokens:
        result = call(token)
        missing = [f.wire for f in function_decl(token).result if f.required and result.get(f.wire) is None]
        assert not missing, (token, missing)


def test_a_data_source_no_installed_sdk_declares_is_named():
    with pytest.raises(UnknownInvoke, match="acme:index/getWidget:getWidget"):
        call("acme:index/getWidget:getWidget")
