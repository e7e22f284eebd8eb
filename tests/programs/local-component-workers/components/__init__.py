from components.queue_worker import QueueWorker, QueueWorkerArgs

__all__ = ["QueueWorker", "QueueWorkerArgs"]
