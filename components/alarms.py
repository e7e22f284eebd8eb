"""CloudWatch alarms the patterns share. Each says in its description what to do when it fires.

Public: `AlarmActions` (the SNS topics alarms notify), `metric_alarm`, `lag_alarm`, and one function per alarm the
patterns raise: `queue_depth_alarm`, `oldest_message_age_alarm`, `function_errors_alarm`,
`iterator_age_alarm`, `state_machine_alarms` (with `STATE_MACHINE_ALARMS`, what each means).
"""

import re
from typing import Mapping, Optional, Sequence

import pulumi
import pulumi_aws as aws

from integration_blueprint.core import conventions

__all__ = ["AlarmActions", "STATE_MACHINE_ALARMS", "function_errors_alarm", "iterator_age_alarm", "lag_alarm", "metric_alarm",
           "oldest_message_age_alarm", "queue_depth_alarm", "state_machine_alarms"]

AlarmActions = Optional[pulumi.Input[Sequence[pulumi.Input[str]]]]


def metric_alarm(name: str, *, parent: pulumi.Resource, namespace: str, metric_name: str,
                 dimensions: Mapping[str, pulumi.Input[str]], statistic: str, threshold: pulumi.Input[float],
                 description: pulumi.Input[str], alarm_actions: AlarmActions = None,
                 comparison: str = "GreaterThanOrEqualToThreshold",
                 period: int = conventions.ALARM_PERIOD_SECONDS,
                 evaluation_periods: int = 1) -> aws.cloudwatch.MetricAlarm:
    return aws.cloudwatch.MetricAlarm(
        name,
        namespace=namespace,
        metric_name=metric_name,
        dimensions=dict(dimensions),
        statistic=statistic,
        threshold=threshold,
        comparison_operator=comparison,
        period=period,
        evaluation_periods=evaluation_periods,
        treat_missing_data="notBreaching",
        alarm_description=description,
        alarm_actions=alarm_actions,
        ok_actions=alarm_actions,
        opts=pulumi.ResourceOptions(parent=parent),
    )


def queue_depth_alarm(name: str, *, queue: aws.sqs.Queue, parent: pulumi.Resource, description: str,
                      alarm_actions: AlarmActions = None,
                      threshold: pulumi.Input[float] = conventions.DLQ_DEPTH_ALARM_THRESHOLD) -> aws.cloudwatch.MetricAlarm:
    return metric_alarm(name, parent=parent, namespace="AWS/SQS",
                        metric_name="ApproximateNumberOfMessagesVisible",
                        dimensions={"QueueName": queue.name}, statistic="Maximum",
                        threshold=threshold, description=description, alarm_actions=alarm_actions)


def lag_alarm(name: str, *, parent: pulumi.Resource, namespace: str, metric_name: str,
              dimensions: Mapping[str, pulumi.Input[str]], threshold: pulumi.Input[int], alarm_actions: AlarmActions,
              description: str) -> aws.cloudwatch.MetricAlarm:
    """An age metric whose maximum stays over `threshold` for five periods: work waits, not one slow
    message. `description` names `{0}` (the alarm) and `{1}` (the threshold)."""
    return metric_alarm(
        name, parent=parent, namespace=namespace, metric_name=metric_name, dimensions=dimensions,
        statistic="Maximum", threshold=threshold, evaluation_periods=5, alarm_actions=alarm_actions,
        description=pulumi.Output.format(description, name, threshold))


def oldest_message_age_alarm(name: str, *, queue: aws.sqs.Queue, parent: pulumi.Resource,
                             threshold_seconds: pulumi.Input[int], alarm_actions: AlarmActions = None,
                             ) -> aws.cloudwatch.MetricAlarm:
    return lag_alarm(name, parent=parent, namespace="AWS/SQS", metric_name="ApproximateAgeOfOldestMessage",
                     dimensions={"QueueName": queue.name}, threshold=threshold_seconds, alarm_actions=alarm_actions,
                     description="{0}: the oldest message has waited over {1}s; the consumer is stuck or failing "
                                 "(check its errors and the DLQ).")


def function_errors_alarm(name: str, *, function: aws.lambda_.Function, parent: pulumi.Resource,
                          alarm_actions: AlarmActions = None) -> aws.cloudwatch.MetricAlarm:
    return metric_alarm(
        name, parent=parent, namespace="AWS/Lambda", metric_name="Errors",
        dimensions={"FunctionName": function.name}, statistic="Sum", threshold=1, period=300,
        alarm_actions=alarm_actions,
        description=f"{name}: the function raised errors; read its log group for the failing records.")


def iterator_age_alarm(name: str, *, function: aws.lambda_.Function, parent: pulumi.Resource,
                       threshold_ms: pulumi.Input[int], alarm_actions: AlarmActions = None) -> aws.cloudwatch.MetricAlarm:
    return lag_alarm(name, parent=parent, namespace="AWS/Lambda", metric_name="IteratorAge",
                     dimensions={"FunctionName": function.name}, threshold=threshold_ms, alarm_actions=alarm_actions,
                     description="{0}: records wait {1} ms before processing; the consumer lags and records risk "
                                 "expiring from the stream. Add shards/parallelization or fix failures.")


# Step Functions execution metrics (AWS/States, dimension StateMachineArn), each alarmed at the
# first occurrence: a failed, aborted or throttled batch run is an incident.
# https://docs.aws.amazon.com/step-functions/latest/dg/procedure-cw-metrics.html
STATE_MACHINE_ALARMS = {
    "ExecutionsFailed": "a run failed (tolerated item failures exceeded, or the input could not be "
                        "read); read the ops queue message and the execution's failed map run items.",
    "ExecutionsAborted": "a run was stopped before it finished; check who stopped it and re-run the "
                         "input (items already done are skipped by idempotency).",
    "ExecutionThrottled": "Step Functions throttled state transitions; lower MaxConcurrency or ask "
                          "for a quota increase.",
}


def state_machine_alarms(name: str, *, state_machine_arn: pulumi.Input[str], parent: pulumi.Resource,
                         alarm_actions: AlarmActions = None) -> list[aws.cloudwatch.MetricAlarm]:
    return [metric_alarm(f"{name}-{re.sub(r'(?<!^)(?=[A-Z])', '-', metric).lower()}", parent=parent, namespace="AWS/States",
                         metric_name=metric, dimensions={"StateMachineArn": state_machine_arn},
                         statistic="Sum", threshold=1, alarm_actions=alarm_actions,
                         description=f"{name}: {what}")
            for metric, what in STATE_MACHINE_ALARMS.items()]
