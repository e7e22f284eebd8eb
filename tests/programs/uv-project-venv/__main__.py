"""A metrics pipeline managed with uv: `uv sync` built .venv, which holds the team's helpers."""
import pulumi
import pulumi_aws as aws
from acme_metrics import ALARM_PERIOD_SECONDS

stream = aws.kinesis.Stream("metrics", shard_count=2, encryption_type="KMS", kms_key_id="alias/aws/kinesis")
aws.cloudwatch.MetricAlarm(
    "metrics-iterator-age",
    namespace="AWS/Kinesis",
    metric_name="GetRecords.IteratorAgeMilliseconds",
    dimensions={"StreamName": stream.name},
    statistic="Maximum",
    period=ALARM_PERIOD_SECONDS,
    evaluation_periods=5,
    threshold=60000,
    comparison_operator="GreaterThanThreshold",
)
pulumi.export("stream", stream.arn)
