"""The policy pack's changes to pulumi-policy, registered in integration_blueprint.core.patches with the
versions they were verified on: on another pulumi-policy the speed changes are skipped (the SDK's
own Analyze and AnalyzeStack run) and the version fix refuses to run, naming the versions.
policies/__main__.py applies them around the PolicyPack it serves."""

import asyncio
import threading
from collections import OrderedDict
from inspect import isawaitable

from google.protobuf import json_format
from pulumi_policy import EnforcementLevel, PolicyResource, StackValidationArgs, StackValidationPolicy
from pulumi_policy import policy as pulumi_policy_sdk
from pulumi_policy.deserialize import deserialize_properties
from pulumi_policy.proxy import UnknownValueError, unknown_checking_proxy

from integration_blueprint import __version__
from integration_blueprint.core.patches import FIX, PULUMI_POLICY_VERIFIED, SPEED, Patcher, patch

proto = pulumi_policy_sdk.proto  # the analyzer's messages, as the SDK's servicer names them

# What policies/__main__.py applies, in this order (each servicer change subclasses the one before).
NAMES = ("pack_names_its_version", "pack_converts_each_request_once", "pack_builds_stack_resources_once")


@patch("pack_names_its_version", target="pulumi_policy.policy._PolicyAnalyzerServicer", package="pulumi-policy",
       verified=PULUMI_POLICY_VERIFIED, kind=FIX,
       buys="the pack's servicer names the package's version (PolicyPack gives every Python pack 0.0.1) in "
            "GetAnalyzerInfo, diagnostics and the SDK's messages")
def _names_its_version(patcher: Patcher) -> None:
    sdk_servicer = pulumi_policy_sdk._PolicyAnalyzerServicer

    class VersionedServicer(sdk_servicer):  # type: ignore[valid-type,misc]
        def __init__(self, name, _sdk_version, *args, **kwargs):
            super().__init__(name, __version__, *args, **kwargs)

    patcher.replace(pulumi_policy_sdk, "_PolicyAnalyzerServicer", VersionedServicer)


@patch("pack_converts_each_request_once", target="pulumi_policy.policy.json_format", package="pulumi-policy",
       verified=PULUMI_POLICY_VERIFIED, kind=SPEED,
       buys="Analyze converts a request's properties once, not once per resource policy")
def _converts_each_request_once(patcher: Patcher) -> None:
    patcher.replace(pulumi_policy_sdk, "json_format", _ConversionsRemembered(REMEMBERED_CONVERSIONS))


@patch("pack_builds_stack_resources_once", target="pulumi_policy.policy._PolicyAnalyzerServicer.AnalyzeStack",
       package="pulumi-policy", verified=PULUMI_POLICY_VERIFIED, kind=SPEED,
       buys="AnalyzeStack builds the stack's resources once for its 18 stack policies, not once each: pack CPU "
            "per AnalyzeStack 0.15 s -> 0.03 s (prod), 1.67 s -> 0.35 s (1,000 resources)")
def _builds_stack_resources_once(patcher: Patcher) -> None:
    patcher.replace(pulumi_policy_sdk, "_PolicyAnalyzerServicer",
                    type("StackResourcesOnceServicer", (_StackResourcesOnce, pulumi_policy_sdk._PolicyAnalyzerServicer),
                         {}))


class _ConversionsRemembered:
    """json_format as pulumi_policy.policy sees it (pulumi-policy 1.21.0): its Analyze converts a
    request's properties to a dict once per resource policy, the same message each time (its
    AnalyzeStack did the same per stack policy; _StackResourcesOnce's converts each resource once). The
    dicts of the latest messages are remembered, with the messages (so an identity cannot match
    another message); the SDK only reads them (deserialize_properties builds new values)."""

    def __init__(self, size: int):
        self.size = size
        self._seen: OrderedDict = OrderedDict()  # id(message) -> (message, dict)
        self._lock = threading.Lock()  # the gRPC server answers on several threads

    def MessageToDict(self, message, **options):
        if options:
            return json_format.MessageToDict(message, **options)
        with self._lock:
            seen = self._seen.get(id(message))
            if seen is not None and seen[0] is message:
                self._seen.move_to_end(id(message))
                return seen[1]
        converted = json_format.MessageToDict(message)
        with self._lock:
            self._seen[id(message)] = (message, converted)
            while len(self._seen) > self.size:
                self._seen.popitem(last=False)
        return converted

    def __getattr__(self, name):
        return getattr(json_format, name)


# Far more than the Analyze requests in flight at once (blueprint's analyzer sends at most 32).
REMEMBERED_CONVERSIONS = 10_000


class _StackResourcesOnce:
    """AnalyzeStack of pulumi-policy 1.21.0's servicer (mixed in before it), changed in one way.

    The SDK's rebuilds every resource of the stack (properties deserialized, parent
    and dependencies linked) once per stack policy, 18 times here, half of the pack's time on a
    stack. This one builds them once and hands the same resources to every stack policy (each its
    own list); the rules only read them. Otherwise it is the SDK's method, step for step."""

    def AnalyzeStack(self, request, _context):
        self._configure_runtime_settings()
        response = proto.AnalyzeResponse()
        policies = [(policy, level) for policy in self._sdk("policies")
                    if (level := self._get_enforcement_level(policy)) != EnforcementLevel.DISABLED
                    and isinstance(policy, StackValidationPolicy)]
        resources = self._stack_resources(request) if policies else []
        for policy, enforcement_level in policies:
            if enforcement_level == EnforcementLevel.REMEDIATE:
                # Stack policies cannot be remediated, so treat the level as mandatory.
                enforcement_level = EnforcementLevel.MANDATORY
            report_violation = self._create_report_violation(response, policy.name, policy.description,
                                                             enforcement_level, policy.severity)
            args = StackValidationArgs(list(resources), self._get_policy_config(policy.name), self._sdk("stack_tags"))
            try:
                result = policy.validate(args, report_violation)
                if isawaitable(result):
                    loop = asyncio.new_event_loop()
                    loop.run_until_complete(result)  # the SDK makes it a Task first: the same
                    loop.close()
            except UnknownValueError as e:
                name, version = self._sdk("policy_pack_name"), self._sdk("policy_pack_version")
                response.diagnostics.append(proto.AnalyzeDiagnostic(
                    policyName=policy.name,
                    policyPackName=name,
                    policyPackVersion=version,
                    message=(f"can't run policy '{policy.name}' from policy pack "
                             f"'{name}@v{version}' during preview: {e.message}"),
                    urn="",
                    description=policy.description,
                    enforcementLevel=self._map_enforcement_level(EnforcementLevel.ADVISORY),
                ))
            except pulumi_policy_sdk._NotApplicableError as e:
                response.not_applicable.append(proto.PolicyNotApplicable(policy_name=policy.name, reason=e.reason or ""))
        return response

    def _sdk(self, name: str):
        """One of the SDK servicer's private attributes (`self.__policies` in its own methods)."""
        return getattr(self, f"_PolicyAnalyzerServicer__{name}")

    def _stack_resources(self, request) -> list:
        """The request's resources as the SDK builds them for a stack policy, linked to each other."""
        intermediates = []
        for r in request.resources:
            props = unknown_checking_proxy(deserialize_properties(json_format.MessageToDict(r.properties)))
            resource = PolicyResource(r.type, props, r.urn, r.name, self._get_resource_options(r),
                                      self._get_provider_resource(r), None, [], {})
            property_dependencies = {k: list(v.urns) for k, v in r.propertyDependencies.items()}
            intermediates.append((resource, r.parent, list(r.dependencies), property_dependencies))
        by_urn = {resource.urn: resource for resource, *_ in intermediates}
        for resource, parent, dependencies, property_dependencies in intermediates:
            if parent is not None and parent in by_urn:
                resource.parent = by_urn[parent]
            resource.dependencies.extend(by_urn[d] for d in dependencies if d in by_urn)
            for key, urns in property_dependencies.items():
                resource.property_dependencies[key] = [by_urn[d] for d in urns if d in by_urn]
        return [resource for resource, *_ in intermediates]
