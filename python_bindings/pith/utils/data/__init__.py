"""pith.utils.data: datasets, samplers and the DataLoader, in the shape of torch.utils.data
(PyTorch 2.13), over pith tensors. Worker processes send batches back pickled by value
(Note [Batches cross processes by value]); random orders come from pith's generators (Note
[Random draws of pith.utils.data]). docs/python.md ("Data loading") lists what differs."""
from .dataloader import DataLoader, _DatasetKind, default_collate, default_convert, get_worker_info
from .dataset import (
    ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset, Subset, TensorDataset,
    random_split,
)
from .sampler import (
    BatchSampler, RandomSampler, Sampler, SequentialSampler, SubsetRandomSampler,
)

__all__ = ["BatchSampler", "ChainDataset", "ConcatDataset", "DataLoader", "Dataset",
           "IterableDataset", "RandomSampler", "Sampler", "SequentialSampler", "StackDataset",
           "Subset", "SubsetRandomSampler", "TensorDataset", "_DatasetKind", "default_collate",
           "default_convert", "get_worker_info", "random_split"]
