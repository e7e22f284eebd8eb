"""Lambda event source mapping rules: partial batch responses for SQS, failure handling for streams."""

from pulumi_policy import EnforcementLevel, ReportViolation, StackValidationArgs, StackValidationPolicy

from integration_blueprint import aws_limits

from ._links import MAPPING, StackIndex, mapping_source_kind
from ._values import Malformed, each, get, is_set, number, plain

REPORT_BATCH_ITEM_FAILURES = "ReportBatchItemFailures"


def _mappings_of_kind(kind: str, check):
    """A stack check that runs `check(mapping)` on every mapping whose source is of `kind`."""
    def validate(args: StackValidationArgs, report: ReportViolation) -> None:
        index = StackIndex(args.resources)

        def check_one(mapping):
            if mapping_source_kind(index, mapping) == kind:
                check(mapping, report)
        each(index.of_type(MAPPING), check_one, report, lambda m: m.urn)
    return validate


def _check_batch_item_failures(mapping, report: ReportViolation) -> None:
    types = plain(get(mapping.props, "functionResponseTypes", default=[]))
    if not isinstance(types, list):
        raise Malformed(f"functionResponseTypes must be a list, got {types!r}")
    if REPORT_BATCH_ITEM_FAILURES not in types:
        report(f"SQS mapping '{mapping.name}' does not set functionResponseTypes "
               f"[\"{REPORT_BATCH_ITEM_FAILURES}\"]: one failed message makes the whole batch "
               "visible again, so messages that succeeded are processed again.", mapping.urn)


def _check_on_failure(mapping, report: ReportViolation) -> None:
    # Being set is what matters: in a first preview the destination's ARN is not known yet.
    on_failure = get(mapping.props, "destinationConfig", "onFailure", default={})
    if not is_set(on_failure, "destinationArn"):
        report(f"stream mapping '{mapping.name}' has no on-failure destination: records that exhaust "
               "their retries or age are dropped without a trace. Set destinationConfig.onFailure."
               "destinationArn to a standard SQS queue (or SNS topic, S3 bucket).", mapping.urn)


def _check_bounded(mapping, report: ReportViolation) -> None:
    retries = number(mapping.props, "maximumRetryAttempts", aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_DEFAULT)
    age = number(mapping.props, "maximumRecordAgeInSeconds", aws_limits.KINESIS_ESM_RECORD_AGE_DEFAULT)
    if retries == aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_DEFAULT and age == aws_limits.KINESIS_ESM_RECORD_AGE_DEFAULT:
        report(f"stream mapping '{mapping.name}' retries a failing batch until the record expires "
               "(maximumRetryAttempts and maximumRecordAgeInSeconds are both -1, the defaults): one "
               "poison record blocks its shard for up to the stream's retention. Set "
               f"maximumRetryAttempts (0-{aws_limits.KINESIS_ESM_RETRY_ATTEMPTS_MAX}) or maximumRecordAgeInSeconds "
               f"({aws_limits.KINESIS_ESM_RECORD_AGE_MIN_SECONDS}-{aws_limits.KINESIS_ESM_RECORD_AGE_MAX_SECONDS}).",
               mapping.urn)


lambda_sqs_esm_reports_batch_item_failures = StackValidationPolicy(
    name="lambda-sqs-esm-reports-batch-item-failures",
    description=("An SQS event source mapping must set functionResponseTypes [\"ReportBatchItemFailures\"] "
                 "(and the handler return batchItemFailures) so only failed messages are retried."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_mappings_of_kind("sqs", _check_batch_item_failures),
)

lambda_stream_esm_has_on_failure_destination = StackValidationPolicy(
    name="lambda-stream-esm-has-on-failure-destination",
    description=("A Kinesis or DynamoDB stream mapping needs an on-failure destination "
                 "(destinationConfig.onFailure.destinationArn) so failed records are not lost."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_mappings_of_kind("stream", _check_on_failure),
)

lambda_stream_esm_bounded_retries = StackValidationPolicy(
    name="lambda-stream-esm-bounded-retries",
    description=("A Kinesis or DynamoDB stream mapping must bound maximumRetryAttempts or "
                 "maximumRecordAgeInSeconds; the defaults (-1) retry a poison record for up to a week."),
    enforcement_level=EnforcementLevel.MANDATORY,
    validate=_mappings_of_kind("stream", _check_bounded),
)

POLICIES = [
    lambda_sqs_esm_reports_batch_item_failures,
    lambda_stream_esm_has_on_failure_destination,
    lambda_stream_esm_bounded_retries,
]
