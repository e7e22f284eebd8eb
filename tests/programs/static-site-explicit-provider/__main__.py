"""The aws-py-static-website shape: the bucket lives in the stack's region, CloudFront's certificate
must be in us-east-1, so an explicit provider is declared for it (and for the alert topic that
CloudFront metrics need). The topic has no TLS-only policy (advisory)."""
import json

import pulumi
import pulumi_aws as aws

config = pulumi.Config()
domain = config.require("domain")

us_east_1 = aws.Provider("us-east-1", region="us-east-1")
in_us_east_1 = pulumi.ResourceOptions(provider=us_east_1)

site = aws.s3.Bucket("docs")
aws.s3.BucketObject("index", bucket=site.id, key="index.html", source=pulumi.FileAsset("./www/index.html"),
                    content_type="text/html")
origin_access = aws.cloudfront.OriginAccessControl(
    "docs", origin_access_control_origin_type="s3", signing_behavior="always", signing_protocol="sigv4")

certificate = aws.acm.Certificate("docs", domain_name=domain, validation_method="DNS", opts=in_us_east_1)

cdn = aws.cloudfront.Distribution(
    "docs",
    enabled=True,
    aliases=[domain],
    default_root_object="index.html",
    origins=[{"domain_name": site.bucket_regional_domain_name, "origin_id": "s3",
              "origin_access_control_id": origin_access.id}],
    default_cache_behavior={"target_origin_id": "s3", "viewer_protocol_policy": "redirect-to-https",
                            "allowed_methods": ["GET", "HEAD"], "cached_methods": ["GET", "HEAD"],
                            "cache_policy_id": "658327ea-f89d-4fab-a63d-7e88639e58f6"},
    restrictions={"geo_restriction": {"restriction_type": "none"}},
    viewer_certificate={"acm_certificate_arn": certificate.arn, "ssl_support_method": "sni-only"},
)
aws.s3.BucketPolicy("docs", bucket=site.id, policy=pulumi.Output.all(site.arn, cdn.arn).apply(
    lambda arns: json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"Service": "cloudfront.amazonaws.com"},
                       "Action": "s3:GetObject", "Resource": f"{arns[0]}/*",
                       "Condition": {"StringEquals": {"AWS:SourceArn": arns[1]}}}],
    })))

alerts = aws.sns.Topic("docs-alerts", opts=in_us_east_1)
aws.cloudwatch.MetricAlarm(
    "docs-5xx", namespace="AWS/CloudFront", metric_name="5xxErrorRate", statistic="Average",
    dimensions={"DistributionId": cdn.id, "Region": "Global"}, period=300, evaluation_periods=1,
    threshold=5, comparison_operator="GreaterThanThreshold", alarm_actions=[alerts.arn], opts=in_us_east_1)

pulumi.export("url", cdn.domain_name.apply(lambda name: f"https://{name}"))
pulumi.export("certificate_validation", certificate.domain_validation_options)
