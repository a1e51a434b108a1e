"""The random draws of pith.utils.data: shuffling, random_split and the workers' base seed.

Every draw the samplers, random_split and the DataLoader make goes through this module, so
that what depends on pith.Generator and pith.randperm is in one place. See Note [Random
draws of pith.utils.data].
"""
import pith

# Note [Random draws of pith.utils.data]
# torch.utils.data draws in four ways, and so does pith:
# - a seed: `torch.empty((), dtype=torch.int64).random_(generator=g).item()`, for the
#   workers' base seed (once per DataLoader iterator) and for the private generator below;
# - RandomSampler without a generator seeds a new torch.Generator from one draw of the
#   global generator at the start of each epoch, and draws the epoch from it;
# - randperm(n, generator=g) for shuffling, SubsetRandomSampler and random_split;
# - randint(high, (k,), generator=g) for RandomSampler(replacement=True), 32 at a time.
# `generator=None` means pith's global generator (pith.manual_seed) everywhere, as
# torch.default_generator does. The order and number of draws are torch's, so that a seeded
# program consumes the global generator as it does under PyTorch (the values differ:
# pith's generator is not PyTorch's, docs/python.md).

# Seeds are non-negative int64s, as those of torch's random_() on an int64 tensor.
_SEED_END = 2**63 - 1


def _generator_arguments(generator):
    """The keyword arguments that pass `generator` to a random op of pith."""
    return {} if generator is None else {"generator": generator}


def seed(generator=None):
    """A non-negative int64 seed drawn from `generator` (the global generator when None)."""
    return int(pith.randint(_SEED_END, (), **_generator_arguments(generator)))


def epoch_generator(generator=None):
    """What a RandomSampler epoch draws from: `generator`, or else a new generator seeded
    from one draw of the global generator (torch's RandomSampler.__iter__)."""
    if generator is not None:
        return generator
    fresh = pith.Generator()
    fresh.manual_seed(seed())
    return fresh


def randperm(n, generator=None):
    """A random permutation of range(n), as a list of ints."""
    return pith.randperm(n, **_generator_arguments(generator)).tolist()


def randint(high, count, generator=None):
    """`count` ints drawn uniformly from [0, high), as a list."""
    return pith.randint(high, (count,), dtype=pith.int64,
                        **_generator_arguments(generator)).tolist()
