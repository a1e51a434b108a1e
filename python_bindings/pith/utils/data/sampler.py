"""Samplers, as torch.utils.data.sampler: the orders in which a DataLoader reads the keys of
a map-style dataset, one key at a time or (BatchSampler) one batch of keys at a time.
Random orders are drawn through _random.py (Note [Random draws of pith.utils.data])."""
import itertools
from typing import Generic, TypeVar

from . import _random

__all__ = ["BatchSampler", "RandomSampler", "Sampler", "SequentialSampler",
           "SubsetRandomSampler"]

_T_co = TypeVar("_T_co", covariant=True)

# RandomSampler(replacement=True) draws its indices in blocks of this many (torch's).
_REPLACEMENT_BLOCK = 32


class Sampler(Generic[_T_co]):
    """Base class of samplers: __iter__ yields keys (or lists of keys); __len__, when
    defined, says how many. There is no default __len__, as in PyTorch (list() and friends
    then fall back to iterating)."""

    def __iter__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


class RandomSampler(Sampler):
    """A random order of range(len(data_source)): a new permutation each epoch, or with
    `replacement=True` `num_samples` independent uniform draws. Without replacement, a
    `num_samples` larger than the dataset chains several permutations."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = replacement
        self._num_samples = num_samples
        self.generator = generator
        if not isinstance(self.replacement, bool):
            raise TypeError("replacement should be a boolean value, but got "
                            f"replacement={self.replacement}")
        if not isinstance(self.num_samples, int) or self.num_samples <= 0:
            raise ValueError("num_samples should be a positive integer value, but got "
                             f"num_samples={self.num_samples}")

    @property
    def num_samples(self):
        # Read at each epoch: the dataset may grow or shrink between epochs.
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n = len(self.data_source)
        generator = _random.epoch_generator(self.generator)
        if self.replacement:
            blocks, rest = divmod(self.num_samples, _REPLACEMENT_BLOCK)
            for _ in range(blocks):
                yield from _random.randint(n, _REPLACEMENT_BLOCK, generator)
            yield from _random.randint(n, rest, generator)
        else:
            whole, rest = divmod(self.num_samples, n)
            for _ in range(whole):
                yield from _random.randperm(n, generator)
            yield from _random.randperm(n, generator)[:rest]

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given indices in a random order, a new one each epoch."""

    def __init__(self, indices, generator=None):
        self.indices = indices
        self.generator = generator

    def __iter__(self):
        for i in _random.randperm(len(self.indices), self.generator):
            yield self.indices[i]

    def __len__(self):
        return len(self.indices)


class BatchSampler(Sampler):
    """Lists of `batch_size` consecutive keys of `sampler` (any iterable); the last one is
    shorter, or left out with `drop_last=True`."""

    def __init__(self, sampler, batch_size, drop_last):
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size <= 0:
            raise ValueError("batch_size should be a positive integer value, but got "
                             f"batch_size={batch_size}")
        if not isinstance(drop_last, bool):
            raise ValueError(f"drop_last should be a boolean value, but got drop_last={drop_last}")
        self.sampler = sampler
        self.batch_size = batch_size
        self.drop_last = drop_last

    def __iter__(self):
        keys = iter(self.sampler)
        while True:
            batch = list(itertools.islice(keys, self.batch_size))
            if not batch or (self.drop_last and len(batch) < self.batch_size):
                return
            yield batch

    def __len__(self):
        if self.drop_last:
            return len(self.sampler) // self.batch_size
        return (len(self.sampler) + self.batch_size - 1) // self.batch_size
