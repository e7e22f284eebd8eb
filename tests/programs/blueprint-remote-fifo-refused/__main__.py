"""Tenant billing through the plugin: the retry count comes from stack config and is one the
component refuses, so the preview must fail with the component's own message. The stack holds a
secret the program never reads."""
import pulumi
import pulumi_blueprint as blueprint  # the generated SDK, installed (editable) into ./venv only

config = pulumi.Config()

billing = blueprint.FifoBillingQueue("tenants", blueprint.FifoBillingQueueArgs(
    consumer_timeout_seconds=30,
    max_receive_count=config.require_int("maxReceiveCount"),
))

pulumi.export("queue_url", billing.queue_url)
