# coding=utf-8
# Shaped like the SDK `pulumi package add` generates for the blueprint plugin (trimmed to the one
# component this program uses). The component is constructed by the plugin, not in this process.
from .distributed_map_batch import DistributedMapBatch, DistributedMapBatchArgs

__all__ = ["DistributedMapBatch", "DistributedMapBatchArgs"]
