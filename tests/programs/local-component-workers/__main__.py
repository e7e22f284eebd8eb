"""Two workers from the team's component. The PDF worker's stack settings give up after two
receives, which the pack refuses (a throttled receive would park a healthy message)."""
import pulumi

from components import QueueWorker, QueueWorkerArgs

config = pulumi.Config()
settings = config.require_object("workers")
alarm_topic = config.get("alarmTopicArn")

emails = QueueWorker("emails", QueueWorkerArgs(
    code_dir="./workers/emails", handler="send.handler", timeout=settings["emails"]["timeout"],
    max_receive_count=settings["emails"]["maxReceiveCount"], alarm_topic_arn=alarm_topic))
pdf = QueueWorker("invoices-pdf", QueueWorkerArgs(
    code_dir="./workers/pdf", handler="render.handler", timeout=settings["pdf"]["timeout"],
    max_receive_count=settings["pdf"]["maxReceiveCount"], alarm_topic_arn=alarm_topic))

pulumi.export("queues", {"emails": emails.queue_url, "pdf": pdf.queue_url})
