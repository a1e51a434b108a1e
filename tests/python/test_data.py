"""pith.utils.data against torch.utils.data (when installed): default_collate and
default_convert (structures, dtypes, errors), datasets, samplers, random_split, and the
DataLoader in the main process and with worker processes (order, errors, seeding,
get_worker_info, iterable datasets, timeouts, shutdown). Worker tests use tiny datasets and
never depend on timing: a worker that must not answer waits on an Event set by the test."""
import collections
import math
import multiprocessing
import os
import pickle
import random
import types
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from pith.utils import data as D
from pith.utils.data._utils import worker as pith_worker
from conftest import (
    DTYPE_NAMES, dtype_name, examples, tensors, to_numpy, to_torch, torch_or_none,
    torch_to_numpy,
)

needs_generator = pytest.mark.skipif(
    not hasattr(pith, "Generator"), reason="pith.Generator is not in this build yet")


def oracle():
    torch = pytest.importorskip("torch")
    import torch.utils.data as TD
    return torch, TD


def libraries():
    """(pith, pith.utils.data) and, when installed, (torch, torch.utils.data)."""
    torch = torch_or_none()
    if torch is None:
        return [(pith, D)]
    import torch.utils.data as TD
    return [(pith, D), (torch, TD)]


def tree(x):
    """A comparable form of a collated value, the same for pith and torch values: tensors
    become (dtype name, shape, values), containers keep their type's name and order."""
    if hasattr(x, "dtype") and hasattr(x, "shape") and not isinstance(x, np.ndarray):
        if not isinstance(x, (np.generic,)):
            return ("tensor", dtype_name(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, np.ndarray):
        return ("ndarray", str(x.dtype), x.tolist())
    if isinstance(x, collections.abc.Mapping):
        return (type(x).__name__, [(k, tree(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [tree(v) for v in x])
    return (type(x).__name__, x)


def identity(batch):
    return batch


# ---- default_collate ---------------------------------------------------------------------

Point = collections.namedtuple("Point", ["x", "y"])


class Record(dict):
    """A dict subclass with an attribute: collate keeps both (it copies, then updates)."""
    tag = "record"


# Batches built with `T` (pith or torch) for its tensors, so both libraries collate the
# same samples.
COLLATE_CASES = {
    "ints": lambda T: [0, 1, -5],
    "floats": lambda T: [0.5, 1.0, -2.25],
    "bools": lambda T: [True, False, True],
    "int_then_float": lambda T: [1, 2.5],
    "strings": lambda T: ["a", "bc"],
    "bytes": lambda T: [b"a", b"bc"],
    "float_tensors": lambda T: [T.tensor([1.0, 2.0]), T.tensor([3.0, 4.0])],
    "int_tensors": lambda T: [T.tensor([[1, 2]]), T.tensor([[3, 4]])],
    "zero_dim_tensors": lambda T: [T.tensor(1), T.tensor(2), T.tensor(3)],
    "empty_tensors": lambda T: [T.zeros(0, 3), T.zeros(0, 3)],
    "transposed_tensors": lambda T: [T.arange(6).reshape(2, 3).t(), T.arange(6, 12).reshape(2, 3).t()],
    "bool_tensors": lambda T: [T.tensor([True, False]), T.tensor([False, False])],
    "numpy_float32": lambda T: [np.arange(6, dtype=np.float32).reshape(2, 3), np.ones((2, 3), np.float32)],
    "numpy_int64": lambda T: [np.arange(3), np.arange(3, 6)],
    "numpy_bool": lambda T: [np.array([True, False]), np.array([False, True])],
    "numpy_strided": lambda T: [np.arange(12.0).reshape(3, 4)[:, ::2], np.zeros((3, 2))],
    "numpy_zero_dim": lambda T: [np.array(1.5), np.array(2.5)],
    "numpy_float32_scalars": lambda T: [np.float32(1.5), np.float32(2)],
    "numpy_float64_scalars": lambda T: [np.float64(1.5), np.float64(2)],
    "numpy_int16_scalars": lambda T: [np.int16(1), np.int16(-2)],
    "numpy_bool_scalars": lambda T: [np.bool_(True), np.bool_(False)],
    "tuples": lambda T: [(1, 2.0, "a"), (3, 4.0, "b")],
    "lists": lambda T: [[1, 2], [3, 4]],
    "ranges": lambda T: [range(2), range(2, 4)],
    "namedtuples": lambda T: [Point(1, T.tensor([1.0])), Point(2, T.tensor([2.0]))],
    "namedtuples_of_strings": lambda T: [Point("a", 1), Point("b", 2)],
    "dicts": lambda T: [{"a": 1, "b": T.tensor(1.0)}, {"a": 2, "b": T.tensor(2.0)}],
    "ordered_dicts": lambda T: [collections.OrderedDict(b=1, a=2.0), collections.OrderedDict(b=3, a=4.0)],
    "defaultdicts": lambda T: [collections.defaultdict(list, a=1), collections.defaultdict(list, a=2)],
    "dict_subclass": lambda T: [Record(a=1), Record(a=2)],
    "mapping_proxies": lambda T: [types.MappingProxyType({"a": 1}), types.MappingProxyType({"a": 2})],
    "nested": lambda T: [{"x": (1, [2.5, "s"]), "p": Point(np.float32(1), [True]), "t": T.ones(2)},
                         {"x": (2, [3.5, "t"]), "p": Point(np.float32(2), [False]), "t": T.zeros(2)}],
}


@pytest.mark.parametrize("case", sorted(COLLATE_CASES))
def test_default_collate_matches_torch(case):
    torch, TD = oracle()
    ours = D.default_collate(COLLATE_CASES[case](pith))
    theirs = TD.default_collate(COLLATE_CASES[case](torch))
    assert tree(ours) == tree(theirs)


def test_default_collate_keeps_the_type_and_attributes_of_a_mapping():
    batch = D.default_collate([Record(a=1), Record(a=2)])
    assert type(batch) is Record and batch.tag == "record"
    assert batch["a"].tolist() == [1, 2]


def test_default_collate_of_python_numbers_gives_int64_float64_and_bool_tensors():
    assert D.default_collate([1, 2]).dtype == pith.int64
    assert D.default_collate([1.0, 2.0]).dtype == pith.float64
    assert D.default_collate([True, False]).dtype == pith.bool


@pytest.mark.parametrize("name", DTYPE_NAMES)
@given(data=st.data())
@examples(15)
def test_default_collate_stacks_tensors_like_torch(name, data):
    torch, TD = oracle()
    shape = data.draw(st.lists(st.integers(0, 3), max_size=3).map(tuple))
    count = data.draw(st.integers(1, 3))
    pairs = [data.draw(tensors(name, shape)) for _ in range(count)]
    ours = D.default_collate([t for t, _ in pairs])
    theirs = TD.default_collate([to_torch(a, name) for _, a in pairs])
    assert dtype_name(ours.dtype) == dtype_name(theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(to_numpy(ours), torch_to_numpy(theirs))


@pytest.mark.parametrize("name", [n for n in DTYPE_NAMES if n != "bfloat16"])
@given(data=st.data())
@examples(10)
def test_default_collate_of_numpy_arrays_matches_torch(name, data):
    torch, TD = oracle()
    shape = data.draw(st.lists(st.integers(0, 3), max_size=3).map(tuple))
    arrays = [data.draw(tensors(name, shape, layout="contiguous"))[1] for _ in range(2)]
    assert tree(D.default_collate(arrays)) == tree(TD.default_collate(arrays))


# Each case: the batch (built with T), the exception pith raises and a fragment of its
# message; torch, when installed, must raise the same type with the same message.
COLLATE_ERRORS = {
    "objects": (lambda T: [object(), object()], TypeError,
                "batch must contain tensors, numpy arrays, numbers, dicts or lists; found <class 'object'>"),
    "none": (lambda T: [None, None], TypeError, "found <class 'NoneType'>"),
    "sets": (lambda T: [{1}, {2}], TypeError, "found <class 'set'>"),
    "nested_objects": (lambda T: [{"a": [object()]}, {"a": [object()]}], TypeError, "found <class 'object'>"),
    "unequal_lists": (lambda T: [[1, 2], [3]], RuntimeError,
                      "each element in list of batch should be of equal size"),
    "unequal_tuples": (lambda T: [(1, 2), (3,)], RuntimeError,
                       "each element in list of batch should be of equal size"),
    "unequal_tensors": (lambda T: [T.zeros(2), T.zeros(3)], RuntimeError,
                        "stack expects each tensor to be equal size, but got [2] at entry 0 and [3] at entry 1"),
    "string_arrays": (lambda T: [np.array(["a"]), np.array(["b"])], TypeError, "found <U1"),
    "object_arrays": (lambda T: [np.array([None]), np.array([None])], TypeError, "found object"),
}


@pytest.mark.parametrize("case", sorted(COLLATE_ERRORS))
def test_default_collate_errors(case):
    make, exc, fragment = COLLATE_ERRORS[case]
    with pytest.raises(exc) as ours:
        D.default_collate(make(pith))
    assert fragment in str(ours.value)
    torch = torch_or_none()
    if torch is not None:
        import torch.utils.data as TD
        with pytest.raises(exc) as theirs:
            TD.default_collate(make(torch))
        assert str(ours.value) == str(theirs.value)


def test_default_collate_of_an_empty_batch_is_an_index_error():
    with pytest.raises(IndexError):
        D.default_collate([])


def test_default_collate_fn_map_holds_numpy_types_once_numpy_is_imported():
    from pith.utils.data._utils.collate import default_collate_fn_map
    D.default_collate([1])
    keys = list(default_collate_fn_map)
    assert keys[0] is pith.Tensor and keys[1] is np.ndarray
    assert (np.bool_, np.number, np.object_) in keys


def test_collate_with_a_custom_map_uses_it_before_the_containers():
    from pith.utils.data._utils.collate import collate

    def count(batch, *, collate_fn_map):
        return len(batch)
    assert collate([(1, "a"), (2, "b")], collate_fn_map={int: count, str: count}) == [2, 2]


CONVERT_CASES = {
    "int": lambda T: 3,
    "string": lambda T: "abc",
    "tensor": lambda T: T.tensor([1, 2]),
    "numpy_array": lambda T: np.arange(4, dtype=np.int32),
    "numpy_scalar": lambda T: np.float32(2.5),
    "numpy_string_array": lambda T: np.array(["a", "b"]),
    "numpy_string_scalar": lambda T: np.str_("a"),
    "tuple": lambda T: (np.array([1.0]), 2),
    "namedtuple": lambda T: Point(np.array(0), np.array(1)),
    "list": lambda T: [np.array([0, 1]), np.array([2, 3])],
    "dict": lambda T: {"a": np.zeros(2), "b": [np.int64(1), "s"]},
    "range": lambda T: range(3),
    "dict_subclass": lambda T: Record(a=np.ones(1)),
}


@pytest.mark.parametrize("case", sorted(CONVERT_CASES))
def test_default_convert_matches_torch(case):
    torch, TD = oracle()
    ours = D.default_convert(CONVERT_CASES[case](pith))
    theirs = TD.default_convert(CONVERT_CASES[case](torch))
    assert tree(ours) == tree(theirs)


def test_default_convert_returns_a_tensor_unchanged():
    t = pith.ones(2)
    assert D.default_convert(t) is t


# ---- datasets ----------------------------------------------------------------------------

def test_tensor_dataset_indexes_every_tensor_along_its_first_dim():
    x, y = pith.arange(12).reshape(4, 3), pith.arange(4) * 2.0
    ds = D.TensorDataset(x, y)
    assert len(ds) == 4
    row, label = ds[2]
    assert row.tolist() == [6, 7, 8] and label.item() == 4.0
    assert [r.tolist() for r in ds[1:3][0]] == [[3, 4, 5], [6, 7, 8]]


def test_tensor_dataset_of_tensors_of_different_lengths_is_an_assertion_error():
    with pytest.raises(AssertionError, match="Size mismatch between tensors"):
        D.TensorDataset(pith.zeros(3), pith.zeros(4))


def test_the_base_dataset_has_no_getitem():
    with pytest.raises(NotImplementedError, match="should implement __getitem__"):
        D.Dataset()[0]


def test_concat_dataset_matches_torch():
    torch, TD = oracle()
    parts = [[0, 1, 2], [], [3, 4], [5]]
    ours, theirs = D.ConcatDataset(parts), TD.ConcatDataset(parts)
    assert len(ours) == len(theirs) == 6
    assert ours.cumulative_sizes == theirs.cumulative_sizes
    assert [ours[i] for i in range(-6, 6)] == [theirs[i] for i in range(-6, 6)]


def test_concat_dataset_errors():
    with pytest.raises(AssertionError, match="should not be an empty iterable"):
        D.ConcatDataset([])
    with pytest.raises(AssertionError, match="does not support IterableDataset"):
        D.ConcatDataset([[1], Stream(0, 2)])
    with pytest.raises(ValueError, match="absolute value of index should not exceed dataset length"):
        D.ConcatDataset([[1, 2]])[-3]
    with pytest.raises(IndexError):
        D.ConcatDataset([[1, 2]])[2]


def test_adding_datasets_concatenates_or_chains_them():
    both = D.TensorDataset(pith.arange(2)) + D.TensorDataset(pith.arange(3))
    assert isinstance(both, D.ConcatDataset) and len(both) == 5
    chained = Stream(0, 2, length=2) + Stream(5, 7, length=2)
    assert isinstance(chained, D.ChainDataset)
    assert list(chained) == [0, 1, 5, 6] and len(chained) == 4


def test_chain_dataset_of_a_map_style_dataset_is_an_assertion_error():
    with pytest.raises(AssertionError, match="ChainDataset only supports IterableDataset"):
        list(D.ChainDataset([Stream(0, 1), [1, 2]]))


def test_concat_dataset_cummulative_sizes_is_deprecated():
    with pytest.warns(FutureWarning, match="renamed to `cumulative_sizes`"):
        assert D.ConcatDataset([[1]]).cummulative_sizes == [1]


def test_subset_reads_its_indices_and_batches_through_getitems():
    class Batched(list):
        calls = 0

        def __getitems__(self, indices):
            Batched.calls += 1
            return [self[i] for i in indices]
    subset = D.Subset(Batched(range(10, 20)), [5, 1, 7])
    assert len(subset) == 3 and subset[0] == 15
    # A list index picks through the indices and indexes the dataset once with a list.
    assert D.Subset(pith.arange(10, 20), [5, 1, 7])[[0, 2]].tolist() == [15, 17]
    assert subset.__getitems__([2, 1]) == [17, 11] and Batched.calls == 1
    assert [b.tolist() for b in D.DataLoader(subset, batch_size=2)] == [[15, 11], [17]]


def test_a_subset_subclass_overriding_only_getitem_is_refused():
    class Doubled(D.Subset):
        def __getitem__(self, idx):
            return 2 * super().__getitem__(idx)
    with pytest.raises(NotImplementedError, match="overrides __getitem__ but not __getitems__"):
        Doubled([1, 2], [0])


def test_stack_dataset_matches_torch():
    torch, TD = oracle()
    a, b = list(range(4)), [str(i) for i in range(4)]
    for args, kwargs in [((a, b), {}), ((), {"n": a, "s": b})]:
        ours, theirs = D.StackDataset(*args, **kwargs), TD.StackDataset(*args, **kwargs)
        assert len(ours) == len(theirs)
        assert ours[2] == theirs[2]
        assert ours.__getitems__([3, 0]) == theirs.__getitems__([3, 0])


@pytest.mark.parametrize("args, kwargs, message", [
    (([1], [2, 3]), {}, "Size mismatch between datasets"),
    ((), {"a": [1], "b": [2, 3]}, "Size mismatch between datasets"),
    (([1],), {"b": [2]}, "but both types are given"),
    ((), {}, "At least one dataset should be passed"),
])
def test_stack_dataset_errors(args, kwargs, message):
    with pytest.raises(ValueError, match=message):
        D.StackDataset(*args, **kwargs)


def test_stack_dataset_checks_the_size_of_nested_getitems():
    class Short(list):
        def __getitems__(self, indices):
            return [0]
    with pytest.raises(ValueError, match="Nested dataset's output size mismatch. Expected 2, got 1"):
        D.StackDataset(Short([1, 2])).__getitems__([0, 1])


# ---- random_split ------------------------------------------------------------------------

@pytest.mark.parametrize("n, fractions", [
    (10, [0.3, 0.7]), (11, [0.5, 0.5]), (7, [1 / 3] * 3), (5, [0.1, 0.9]), (3, [0.25] * 4),
    (0, [0.5, 0.5]), (100, [0.8, 0.1, 0.1]),
])
def test_random_split_lengths_of_fractions_match_torch(n, fractions):
    torch, TD = oracle()
    with warnings.catch_warnings(record=True) as ours_warned:
        warnings.simplefilter("always")
        ours = [len(s) for s in D.random_split(range(n), fractions)]
    with warnings.catch_warnings(record=True) as theirs_warned:
        warnings.simplefilter("always")
        theirs = [len(s) for s in TD.random_split(range(n), fractions)]
    assert ours == theirs
    assert [str(w.message) for w in ours_warned] == [str(w.message) for w in theirs_warned]


@pytest.mark.parametrize("lengths", [[3, 7], [0, 10], [10], [0.3, 0.7], [1.0]])
def test_random_split_parts_are_disjoint_and_cover_the_dataset(lengths):
    parts = D.random_split(range(10), lengths)
    assert all(isinstance(p, D.Subset) for p in parts)
    seen = [i for p in parts for i in p]
    assert sorted(seen) == list(range(10))
    if all(isinstance(n, int) for n in lengths):
        assert [len(p) for p in parts] == lengths


def test_random_split_is_reproducible_under_manual_seed():
    pith.manual_seed(5)
    first = [p.indices for p in D.random_split(range(20), [0.5, 0.5])]
    pith.manual_seed(5)
    assert [p.indices for p in D.random_split(range(20), [0.5, 0.5])] == first
    assert sorted(first[0] + first[1]) == list(range(20)) and first[0] != list(range(10))


@pytest.mark.parametrize("lengths, message", [
    ([3, 3], "Sum of input lengths does not equal the length of the input dataset!"),
    ([1.5, -0.5], "Fraction at index 0 is not between 0 and 1"),
    ([0.5, 0.6], "Sum of input lengths does not equal the length of the input dataset!"),
])
def test_random_split_errors(lengths, message):
    with pytest.raises(ValueError) as ours:
        D.random_split(range(10), lengths)
    assert message in str(ours.value)
    torch = torch_or_none()
    if torch is not None:
        import torch.utils.data as TD
        with pytest.raises(ValueError) as theirs:
            TD.random_split(range(10), lengths)
        assert str(ours.value) == str(theirs.value)


# ---- samplers ----------------------------------------------------------------------------

def test_sequential_sampler_yields_every_index_in_order():
    sampler = D.SequentialSampler(range(5))
    assert list(sampler) == [0, 1, 2, 3, 4] and len(sampler) == 5


def test_the_base_sampler_has_no_iter_and_no_len():
    with pytest.raises(NotImplementedError):
        iter(D.Sampler())
    with pytest.raises(TypeError):
        len(D.Sampler())


@pytest.mark.parametrize("n", [1, 5, 7, 10])
@pytest.mark.parametrize("batch_size", [1, 3, 5, 12])
@pytest.mark.parametrize("drop_last", [False, True])
def test_batch_sampler_matches_torch(n, batch_size, drop_last):
    torch, TD = oracle()
    ours = D.BatchSampler(D.SequentialSampler(range(n)), batch_size, drop_last)
    theirs = TD.BatchSampler(TD.SequentialSampler(range(n)), batch_size, drop_last)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


def test_batch_sampler_takes_any_iterable():
    assert list(D.BatchSampler(iter("abcde"), 2, False)) == [["a", "b"], ["c", "d"], ["e"]]


# Each case: the sampler class, its arguments, pith's exception and a fragment of its message;
# torch, when installed, raises the same.
SAMPLER_ERRORS = [
    ("BatchSampler", (range(3), 0, False), ValueError, "batch_size should be a positive integer value, but got batch_size=0"),
    ("BatchSampler", (range(3), True, False), ValueError, "batch_size=True"),
    ("BatchSampler", (range(3), 1.5, False), ValueError, "batch_size=1.5"),
    ("BatchSampler", (range(3), 2, 1), ValueError, "drop_last should be a boolean value, but got drop_last=1"),
    ("RandomSampler", (range(3), 1), TypeError, "replacement should be a boolean value, but got replacement=1"),
    ("RandomSampler", (range(3), False, 0), ValueError, "num_samples should be a positive integer value, but got num_samples=0"),
    ("RandomSampler", (range(3), False, 2.5), ValueError, "num_samples=2.5"),
    ("RandomSampler", (range(0),), ValueError, "num_samples=0"),
]


@pytest.mark.parametrize("name, args, exc, fragment", SAMPLER_ERRORS)
def test_sampler_errors(name, args, exc, fragment):
    with pytest.raises(exc) as ours:
        getattr(D, name)(*args)
    assert fragment in str(ours.value)
    torch = torch_or_none()
    if torch is not None:
        import torch.utils.data as TD
        with pytest.raises(exc) as theirs:
            getattr(TD, name)(*args)
        assert str(ours.value) == str(theirs.value)


def test_random_sampler_yields_a_new_permutation_each_epoch():
    sampler = D.RandomSampler(range(30))
    first, second = list(sampler), list(sampler)
    assert sorted(first) == sorted(second) == list(range(30)) and len(sampler) == 30
    assert first != second  # equal with probability 1/30!


def test_random_sampler_is_reproducible_under_manual_seed():
    pith.manual_seed(11)
    first = list(D.RandomSampler(range(30)))
    pith.manual_seed(11)
    assert list(D.RandomSampler(range(30))) == first


@pytest.mark.parametrize("num_samples", [1, 7, 10, 23])
def test_random_sampler_without_replacement_chains_permutations(num_samples):
    drawn = list(D.RandomSampler(range(10), num_samples=num_samples))
    assert len(drawn) == num_samples
    whole, rest = divmod(num_samples, 10)
    for k in range(whole):
        assert sorted(drawn[10 * k:10 * k + 10]) == list(range(10))
    assert len(set(drawn[10 * whole:])) == rest


@pytest.mark.parametrize("num_samples", [1, 31, 32, 64, 70])
def test_random_sampler_with_replacement_draws_num_samples_indices(num_samples):
    sampler = D.RandomSampler(range(3), replacement=True, num_samples=num_samples)
    drawn = list(sampler)
    assert len(drawn) == len(sampler) == num_samples
    assert set(drawn) <= {0, 1, 2} and all(type(i) is int for i in drawn)


def test_random_sampler_length_follows_the_dataset():
    data = [1, 2]
    sampler = D.RandomSampler(data)
    data.append(3)
    assert len(sampler) == 3 and sorted(sampler) == [0, 1, 2]


def test_subset_random_sampler_yields_its_indices_in_a_random_order():
    indices = [10, 4, 7, 30, 2, 8, 9, 11]
    sampler = D.SubsetRandomSampler(indices)
    assert len(sampler) == 8 and sorted(sampler) == sorted(indices)
    pith.manual_seed(3)
    first = list(sampler)
    pith.manual_seed(3)
    assert list(sampler) == first


@pytest.mark.skipif(hasattr(pith, "Generator"), reason="pith.Generator exists")
def test_a_generator_without_pith_generator_is_not_implemented():
    for make in [lambda: list(D.RandomSampler(range(3), generator=object())),
                 lambda: D.random_split(range(4), [2, 2], generator=object()),
                 lambda: iter(D.DataLoader(range(4), generator=object()))]:
        with pytest.raises(NotImplementedError, match="generator= needs pith.Generator"):
            make()


def seeded(seed):
    g = pith.Generator()
    g.manual_seed(seed)
    return g


@needs_generator
def test_samplers_with_a_generator_are_reproducible():
    for make in [lambda g: D.RandomSampler(range(20), generator=g),
                 lambda g: D.RandomSampler(range(20), True, 40, generator=g),
                 lambda g: D.SubsetRandomSampler(list(range(5, 25)), generator=g)]:
        assert list(make(seeded(1))) == list(make(seeded(1)))
        assert list(make(seeded(1))) != list(make(seeded(2)))


@needs_generator
def test_random_sampler_with_a_generator_leaves_the_global_generator_alone():
    pith.manual_seed(4)
    expected = pith.rand(3).tolist()
    pith.manual_seed(4)
    list(D.RandomSampler(range(10), generator=seeded(0)))
    assert pith.rand(3).tolist() == expected


@needs_generator
def test_random_split_with_a_generator_is_reproducible():
    first = [p.indices for p in D.random_split(range(30), [0.3, 0.7], generator=seeded(9))]
    again = [p.indices for p in D.random_split(range(30), [0.3, 0.7], generator=seeded(9))]
    assert first == again


@needs_generator
def test_shuffling_loader_with_a_generator_is_reproducible():
    def epoch(g):
        return [b.tolist() for b in D.DataLoader(range(20), batch_size=4, shuffle=True, generator=g)]
    assert epoch(seeded(3)) == epoch(seeded(3))
    assert epoch(seeded(3)) != epoch(seeded(4))


# ---- DataLoader in the main process ------------------------------------------------------

class Stream(D.IterableDataset):
    """range(start, end) as a stream; with shard=True each worker reads its share (the
    split of torch's IterableDataset documentation)."""
    lib = D

    def __init__(self, start, end, shard=False, length=None):
        self.start, self.end, self.shard, self.length = start, end, shard, length

    def __iter__(self):
        info = self.lib.get_worker_info()
        start, end = self.start, self.end
        if self.shard and info is not None:
            per_worker = int(math.ceil((end - start) / float(info.num_workers)))
            start = start + info.id * per_worker
            end = min(start + per_worker, end)
        return iter(range(start, end))

    def __len__(self):
        if self.length is None:
            raise TypeError("no length")
        return self.length


def torch_stream(TD, *args, **kwargs):
    """Stream on torch.utils.data.IterableDataset."""
    cls = type("TorchStream", (TD.IterableDataset,), {
        "lib": TD, "__init__": Stream.__init__, "__iter__": Stream.__iter__,
        "__len__": Stream.__len__})
    return cls(*args, **kwargs)


def tensor_dataset(T):
    x = T.arange(60.0).reshape(10, 6)[:, ::2]  # non-contiguous rows
    return T.utils.data.TensorDataset(x, T.arange(10) % 3)


@pytest.mark.parametrize("options", [
    {}, {"batch_size": 3}, {"batch_size": 4, "drop_last": True}, {"batch_size": 10},
    {"batch_size": 12}, {"batch_size": None}, {"batch_size": 3, "collate_fn": identity},
])
def test_sequential_loader_matches_torch(options):
    torch, TD = oracle()
    ours = [tree(b) for b in D.DataLoader(tensor_dataset(pith), **options)]
    theirs = [tree(b) for b in TD.DataLoader(tensor_dataset(torch), **options)]
    assert ours == theirs
    assert len(D.DataLoader(tensor_dataset(pith), **options)) == len(theirs)


def test_loader_over_python_samples_matches_torch():
    torch, TD = oracle()
    samples = [{"i": i, "f": i / 4, "s": str(i), "a": np.full(2, i, np.int32)} for i in range(5)]
    for options in [{"batch_size": 2}, {"batch_size": None}]:
        assert ([tree(b) for b in D.DataLoader(samples, **options)]
                == [tree(b) for b in TD.DataLoader(samples, **options)])


def test_loader_without_batching_converts_each_sample():
    batches = list(D.DataLoader([np.arange(2), (np.float32(1), "a")], batch_size=None))
    assert isinstance(batches[0], pith.Tensor) and batches[0].tolist() == [0, 1]
    assert isinstance(batches[1], list) and batches[1][1] == "a"


def test_iterating_a_loader_twice_gives_the_same_batches():
    loader = D.DataLoader(tensor_dataset(pith), batch_size=4)
    assert [tree(b) for b in loader] == [tree(b) for b in loader]


def test_shuffling_loader_is_reproducible_under_manual_seed():
    loader = D.DataLoader(range(20), batch_size=4, shuffle=True)
    pith.manual_seed(21)
    first = [b.tolist() for b in loader]
    second = [b.tolist() for b in loader]
    pith.manual_seed(21)
    assert [b.tolist() for b in loader] == first
    assert sorted(sum(first, [])) == list(range(20)) and first != second


def test_loader_with_a_sampler_or_a_batch_sampler_matches_torch():
    torch, TD = oracle()
    data = list(range(10, 20))
    for ours_kw, theirs_kw in [
            ({"sampler": [3, 1, 4, 1, 5], "batch_size": 2}, {"sampler": [3, 1, 4, 1, 5], "batch_size": 2}),
            ({"batch_sampler": [[0, 9], [5], [2, 2, 2]]}, {"batch_sampler": [[0, 9], [5], [2, 2, 2]]}),
            ({"batch_sampler": D.BatchSampler(range(7), 3, True)},
             {"batch_sampler": TD.BatchSampler(range(7), 3, True)})]:
        assert ([tree(b) for b in D.DataLoader(data, **ours_kw)]
                == [tree(b) for b in TD.DataLoader(data, **theirs_kw)])


def test_loader_calls_getitems_once_per_batch():
    class Batched(list):
        batches = []

        def __getitems__(self, indices):
            Batched.batches.append(list(indices))
            return [self[i] for i in indices]
    assert [b.tolist() for b in D.DataLoader(Batched(range(5)), batch_size=2)] == [[0, 1], [2, 3], [4]]
    assert Batched.batches == [[0, 1], [2, 3], [4]]


@pytest.mark.parametrize("options", [
    {}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True}, {"batch_size": None},
    {"batch_size": 4, "drop_last": True},
])
def test_iterable_loader_matches_torch(options):
    torch, TD = oracle()
    assert ([tree(b) for b in D.DataLoader(Stream(3, 10), **options)]
            == [tree(b) for b in TD.DataLoader(torch_stream(TD, 3, 10), **options)])


@pytest.mark.parametrize("length, options", [
    (7, {}), (7, {"batch_size": 2}), (7, {"batch_size": 2, "drop_last": True}),
    (7, {"batch_size": None}), (0, {"batch_size": 3}),
])
def test_loader_length_of_an_iterable_dataset_matches_torch(length, options):
    torch, TD = oracle()
    assert (len(D.DataLoader(Stream(0, 1, length=length), **options))
            == len(TD.DataLoader(torch_stream(TD, 0, 1, length=length), **options)))


def test_loader_length_of_an_iterable_dataset_without_one_is_a_type_error():
    with pytest.raises(TypeError):
        len(D.DataLoader(Stream(0, 3)))


def test_iterable_loader_warns_when_it_yields_more_than_its_length():
    torch, TD = oracle()
    messages = []
    for loader in [D.DataLoader(Stream(0, 4, length=2)),
                   TD.DataLoader(torch_stream(TD, 0, 4, length=2))]:
        assert len(loader) == 2
        with pytest.warns(UserWarning) as warned:
            list(loader)
        messages.append([str(w.message).replace(repr(loader.dataset), "<dataset>")
                         for w in warned])
    assert messages[0] == messages[1] and len(messages[0]) == 2


def test_pin_memory_is_accepted_and_warns_as_torch_does_without_an_accelerator():
    torch, TD = oracle()
    messages = []
    for lib in (D, TD):
        with pytest.warns(UserWarning) as warned:
            batches = [b.tolist() for b in lib.DataLoader(range(4), batch_size=2, pin_memory=True)]
        assert batches == [[0, 1], [2, 3]]
        messages.append([str(w.message) for w in warned])
    assert messages[0] == messages[1]


# Each case: DataLoader keyword arguments over a map-style dataset (or "iterable": an
# iterable one), pith's exception and a fragment of its message. torch, when installed,
# raises the same exception with the same message.
LOADER_ERRORS = [
    ("map", {"num_workers": -1}, ValueError, "num_workers option should be non-negative"),
    ("map", {"timeout": -1}, ValueError, "timeout option should be non-negative"),
    ("map", {"prefetch_factor": 2}, ValueError, "prefetch_factor option could only be specified in multiprocessing"),
    ("map", {"num_workers": 1, "prefetch_factor": -1}, ValueError, "prefetch_factor option should be non-negative"),
    ("map", {"persistent_workers": True}, ValueError, "persistent_workers option needs num_workers > 0"),
    ("map", {"sampler": [0], "shuffle": True}, ValueError, "sampler option is mutually exclusive with shuffle"),
    ("map", {"batch_sampler": [[0]], "batch_size": 2}, ValueError, "batch_sampler option is mutually exclusive"),
    ("map", {"batch_sampler": [[0]], "drop_last": True}, ValueError, "batch_sampler option is mutually exclusive"),
    ("map", {"batch_sampler": [[0]], "shuffle": True}, ValueError, "batch_sampler option is mutually exclusive"),
    ("map", {"batch_sampler": [[0]], "sampler": [0]}, ValueError, "batch_sampler option is mutually exclusive"),
    ("map", {"batch_size": None, "drop_last": True}, ValueError, "batch_size=None option disables auto-batching"),
    ("map", {"multiprocessing_context": "fork"}, ValueError, "multiprocessing_context can only be used with multi-process loading"),
    ("map", {"num_workers": 1, "multiprocessing_context": "nope"}, ValueError, "should specify a valid start method"),
    ("map", {"num_workers": 1, "multiprocessing_context": 3}, TypeError, "multiprocessing_context option should be a valid context"),
    ("map", {"batch_size": 0}, ValueError, "batch_size should be a positive integer value"),
    ("iterable", {"shuffle": True}, ValueError, "expected unspecified shuffle option, but got shuffle=True"),
    ("iterable", {"sampler": [0]}, ValueError, "expected unspecified sampler option, but got sampler=[0]"),
    ("iterable", {"batch_sampler": [[0]]}, ValueError, "expected unspecified batch_sampler option"),
]


@pytest.mark.parametrize("kind, options, exc, fragment", LOADER_ERRORS)
def test_loader_option_errors(kind, options, exc, fragment):
    with pytest.raises(exc) as ours:
        D.DataLoader(Stream(0, 2) if kind == "iterable" else range(3), **options)
    assert fragment in str(ours.value)
    torch = torch_or_none()
    if torch is not None:
        import torch.utils.data as TD
        with pytest.raises(exc) as theirs:
            TD.DataLoader(torch_stream(TD, 0, 2) if kind == "iterable" else range(3), **options)
        assert str(ours.value) == str(theirs.value)


def test_iterable_loader_accepts_shuffle_false():
    assert [b.tolist() for b in D.DataLoader(Stream(0, 2), shuffle=False)] == [[0], [1]]


def test_a_timeout_without_workers_fails_when_iterating_as_in_torch():
    loader = D.DataLoader(range(3), timeout=1)
    with pytest.raises(AssertionError, match="requires timeout == 0"):
        iter(loader)


@pytest.mark.parametrize("attr", ["batch_size", "batch_sampler", "sampler", "drop_last",
                                  "dataset", "persistent_workers"])
def test_loader_options_that_fix_the_samplers_cannot_change(attr):
    loader = D.DataLoader(range(3))
    with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader is initialized"):
        setattr(loader, attr, None)
    loader.num_workers = 0  # the others can


def test_loader_iterator_cannot_be_pickled():
    with pytest.raises(NotImplementedError, match="cannot be pickled"):
        pickle.dumps(iter(D.DataLoader(range(3))))


def test_loader_exposes_torchs_attributes():
    loader = D.DataLoader(range(6), batch_size=2, shuffle=True)
    assert isinstance(loader.sampler, D.RandomSampler)
    assert isinstance(loader.batch_sampler, D.BatchSampler)
    assert loader.collate_fn is D.default_collate and loader.prefetch_factor is None
    assert D.DataLoader(range(6), batch_size=None).collate_fn is D.default_convert
    assert D.DataLoader(range(6), num_workers=1).prefetch_factor == 2
