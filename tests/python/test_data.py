"""pith.utils.data against torch.utils.data (when installed): default_collate and
default_convert (structures, dtypes, errors), datasets, samplers, random_split, and the
DataLoader in the main process and with worker processes (order, errors, seeding,
get_worker_info, iterable datasets, timeouts, shutdown). Worker tests use tiny datasets and
never depend on timing: a worker that must not answer waits on an Event set by the test."""
import collections
import gc
import math
import multiprocessing
import os
import pickle
import random
import subprocess
import sys
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
    if isinstance(x, (np.ndarray, np.generic)):
        return (type(x).__name__, str(x.dtype), x.tolist())
    if hasattr(x, "dtype") and hasattr(x, "shape"):  # a pith or torch tensor
        return ("tensor", dtype_name(x.dtype), tuple(x.shape), x.tolist())
    if isinstance(x, collections.abc.Mapping):
        return (type(x).__name__, [(k, tree(v)) for k, v in x.items()])
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, [tree(v) for v in x])
    return (type(x).__name__, x)


def identity(batch):
    return batch


def test_pith_utils_data_is_imported_on_first_use_and_does_not_import_numpy():
    code = ("import sys, pith\n"
            "assert 'pith.utils.data' not in sys.modules\n"
            "assert pith.utils.data.DataLoader is sys.modules['pith.utils.data'].DataLoader\n"
            "assert 'numpy' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True)


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
    "transposed_tensors": lambda T: [T.arange(6).reshape(2, 3).t(),
                                     T.arange(6, 12).reshape(2, 3).t()],
    "bool_tensors": lambda T: [T.tensor([True, False]), T.tensor([False, False])],
    "numpy_float32": lambda T: [np.arange(6, dtype=np.float32).reshape(2, 3),
                                np.ones((2, 3), np.float32)],
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
    "ordered_dicts": lambda T: [collections.OrderedDict(b=1, a=2.0),
                                collections.OrderedDict(b=3, a=4.0)],
    "defaultdicts": lambda T: [collections.defaultdict(list, a=1),
                               collections.defaultdict(list, a=2)],
    "dict_subclass": lambda T: [Record(a=1), Record(a=2)],
    "mapping_proxies": lambda T: [types.MappingProxyType({"a": 1}),
                                  types.MappingProxyType({"a": 2})],
    "nested": lambda T: [
        {"x": (1, [2.5, "s"]), "p": Point(np.float32(1), [True]), "t": T.ones(2)},
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
                "batch must contain tensors, numpy arrays, numbers, dicts or lists; "
                "found <class 'object'>"),
    "none": (lambda T: [None, None], TypeError, "found <class 'NoneType'>"),
    "sets": (lambda T: [{1}, {2}], TypeError, "found <class 'set'>"),
    "nested_objects": (lambda T: [{"a": [object()]}, {"a": [object()]}], TypeError,
                       "found <class 'object'>"),
    "unequal_lists": (lambda T: [[1, 2], [3]], RuntimeError,
                      "each element in list of batch should be of equal size"),
    "unequal_tuples": (lambda T: [(1, 2), (3,)], RuntimeError,
                       "each element in list of batch should be of equal size"),
    "unequal_tensors": (lambda T: [T.zeros(2), T.zeros(3)], RuntimeError,
                        "stack expects each tensor to be equal size, but got [2] at entry 0 "
                        "and [3] at entry 1"),
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
    with pytest.raises(ValueError, match="absolute value of index should not exceed"):
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
    with pytest.raises(ValueError, match="output size mismatch. Expected 2, got 1"):
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
    ("BatchSampler", (range(3), 0, False), ValueError,
     "batch_size should be a positive integer value, but got batch_size=0"),
    ("BatchSampler", (range(3), True, False), ValueError, "batch_size=True"),
    ("BatchSampler", (range(3), 1.5, False), ValueError, "batch_size=1.5"),
    ("BatchSampler", (range(3), 2, 1), ValueError,
     "drop_last should be a boolean value, but got drop_last=1"),
    ("RandomSampler", (range(3), 1), TypeError,
     "replacement should be a boolean value, but got replacement=1"),
    ("RandomSampler", (range(3), False, 0), ValueError,
     "num_samples should be a positive integer value, but got num_samples=0"),
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


def test_a_generator_that_is_not_a_pith_generator_is_a_type_error():
    for make in [lambda: list(D.RandomSampler(range(3), generator=object())),
                 lambda: D.random_split(range(4), [2, 2], generator=object()),
                 lambda: iter(D.DataLoader(range(4), generator=object()))]:
        with pytest.raises(TypeError, match="Generator"):
            make()


def seeded(seed):
    g = pith.Generator()
    g.manual_seed(seed)
    return g


def test_samplers_with_a_generator_are_reproducible():
    for make in [lambda g: D.RandomSampler(range(20), generator=g),
                 lambda g: D.RandomSampler(range(20), True, 40, generator=g),
                 lambda g: D.SubsetRandomSampler(list(range(5, 25)), generator=g)]:
        assert list(make(seeded(1))) == list(make(seeded(1)))
        assert list(make(seeded(1))) != list(make(seeded(2)))


def test_random_sampler_with_a_generator_leaves_the_global_generator_alone():
    pith.manual_seed(4)
    expected = pith.rand(3).tolist()
    pith.manual_seed(4)
    list(D.RandomSampler(range(10), generator=seeded(0)))
    assert pith.rand(3).tolist() == expected


def test_random_split_with_a_generator_is_reproducible():
    first = [p.indices for p in D.random_split(range(30), [0.3, 0.7], generator=seeded(9))]
    again = [p.indices for p in D.random_split(range(30), [0.3, 0.7], generator=seeded(9))]
    assert first == again


def test_shuffling_loader_with_a_generator_is_reproducible():
    def epoch(g):
        loader = D.DataLoader(range(20), batch_size=4, shuffle=True, generator=g)
        return [b.tolist() for b in loader]
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
            ({"sampler": [3, 1, 4, 1, 5], "batch_size": 2},
             {"sampler": [3, 1, 4, 1, 5], "batch_size": 2}),
            ({"batch_sampler": [[0, 9], [5], [2, 2, 2]]},
             {"batch_sampler": [[0, 9], [5], [2, 2, 2]]}),
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
    loader = D.DataLoader(Batched(range(5)), batch_size=2)
    assert [b.tolist() for b in loader] == [[0, 1], [2, 3], [4]]
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
    ("map", {"prefetch_factor": 2}, ValueError,
     "prefetch_factor option could only be specified in multiprocessing"),
    ("map", {"num_workers": 1, "prefetch_factor": -1}, ValueError,
     "prefetch_factor option should be non-negative"),
    ("map", {"persistent_workers": True}, ValueError,
     "persistent_workers option needs num_workers > 0"),
    ("map", {"sampler": [0], "shuffle": True}, ValueError,
     "sampler option is mutually exclusive with shuffle"),
    ("map", {"batch_sampler": [[0]], "batch_size": 2}, ValueError, "batch_sampler option is"),
    ("map", {"batch_sampler": [[0]], "drop_last": True}, ValueError, "batch_sampler option is"),
    ("map", {"batch_sampler": [[0]], "shuffle": True}, ValueError, "batch_sampler option is"),
    ("map", {"batch_sampler": [[0]], "sampler": [0]}, ValueError, "mutually exclusive with"),
    ("map", {"batch_size": None, "drop_last": True}, ValueError,
     "batch_size=None option disables auto-batching"),
    ("map", {"multiprocessing_context": "fork"}, ValueError,
     "multiprocessing_context can only be used with multi-process loading"),
    ("map", {"num_workers": 1, "multiprocessing_context": "nope"}, ValueError,
     "should specify a valid start method"),
    ("map", {"num_workers": 1, "multiprocessing_context": 3}, TypeError,
     "multiprocessing_context option should be a valid context"),
    ("map", {"batch_size": 0}, ValueError, "batch_size should be a positive integer value"),
    ("iterable", {"shuffle": True}, ValueError,
     "expected unspecified shuffle option, but got shuffle=True"),
    ("iterable", {"sampler": [0]}, ValueError,
     "expected unspecified sampler option, but got sampler=[0]"),
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
    with pytest.raises(ValueError, match=f"{attr} attribute should not be set after DataLoader"):
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


# ---- DataLoader with worker processes ----------------------------------------------------

class Probe(D.Dataset):
    """Sample i tells which process read it and what that process's generators gave."""

    def __init__(self, n):
        self.n = n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        info = D.get_worker_info()
        return {"i": i, "pid": os.getpid(), "worker": info.id, "num_workers": info.num_workers,
                "seed": info.seed, "pith": pith.rand(2).tolist(), "random": random.random(),
                "numpy": float(np.random.rand()),
                "numpy_state": np.random.get_state()[1][:4].tolist()}


class Failing(D.Dataset):
    """Raises `error(message)` for index `bad`."""

    def __init__(self, n, bad, error, message="bad index"):
        self.n, self.bad, self.error, self.message = n, bad, error, message

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise self.error(f"{self.message} {i}")
        return i


class TwoArgumentError(Exception):
    def __init__(self, first, second):
        super().__init__(first, second)


def first_answer_only(loader):
    it = iter(loader)
    try:
        return next(it)
    finally:
        del it


@pytest.mark.parametrize("options", [
    {}, {"batch_size": 3}, {"batch_size": 4, "drop_last": True}, {"batch_size": None},
    {"batch_size": 2, "prefetch_factor": 1}, {"batch_size": 2, "num_workers": 1},
])
def test_workers_give_the_batches_of_the_main_process_in_order(options):
    options = {"num_workers": 2, **options}
    expected = [tree(b) for b in D.DataLoader(tensor_dataset(pith), **{
        k: v for k, v in options.items() if k not in ("num_workers", "prefetch_factor")})]
    assert [tree(b) for b in D.DataLoader(tensor_dataset(pith), **options)] == expected


def test_workers_read_tasks_in_round_robin_order():
    batches = list(D.DataLoader(Probe(6), batch_size=None, num_workers=2))
    assert [b["i"] for b in batches] == list(range(6))
    assert [b["worker"] for b in batches] == [0, 1, 0, 1, 0, 1]
    assert len({b["pid"] for b in batches} | {os.getpid()}) == 3


def test_workers_out_of_order_give_every_batch_once():
    loader = D.DataLoader(range(9), batch_size=2, num_workers=2, in_order=False)
    assert sorted(b.tolist() for b in loader) == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]


def test_a_shuffling_loader_with_workers_gives_the_order_of_the_main_process():
    pith.manual_seed(8)
    alone = [b.tolist() for b in D.DataLoader(range(12), batch_size=3, shuffle=True)]
    pith.manual_seed(8)
    assert [b.tolist() for b in D.DataLoader(range(12), batch_size=3, shuffle=True,
                                             num_workers=2)] == alone


def test_tensors_of_every_dtype_and_layout_cross_from_the_workers():
    base = pith.arange(24).reshape(4, 6)
    samples = [{"t": base.t()[1:5:2].to(getattr(pith, name)), "zero_dim": pith.tensor(2.5),
                "empty": pith.zeros(0, 2, dtype=getattr(pith, name))} for name in DTYPE_NAMES]
    for options in [{"batch_size": None}, {"batch_size": 2}]:
        expected = [tree(b) for b in D.DataLoader(samples, **options)]
        assert [tree(b) for b in D.DataLoader(samples, num_workers=2, **options)] == expected


def test_a_tensor_subclass_crosses_from_a_worker_with_its_class():
    samples = [pith.nn.Parameter(pith.ones(2) * i) for i in range(2)]
    batches = list(D.DataLoader(samples, batch_size=None, num_workers=1))
    assert [type(b) for b in batches] == [pith.nn.Parameter] * 2
    assert [b.tolist() for b in batches] == [[0.0, 0.0], [1.0, 1.0]]


def test_get_worker_info_is_none_in_the_main_process():
    assert D.get_worker_info() is None
    list(D.DataLoader(range(2), num_workers=1))
    assert D.get_worker_info() is None


def test_get_worker_info_in_a_worker_gives_its_id_count_and_seed():
    batches = list(D.DataLoader(Probe(4), batch_size=None, num_workers=2))
    assert [(b["worker"], b["num_workers"]) for b in batches] == [(0, 2), (1, 2)] * 2
    seeds = {b["worker"]: b["seed"] for b in batches}
    assert seeds[1] == seeds[0] + 1 and 0 <= seeds[0] < 2**63


def test_worker_seeds_are_reproducible_under_manual_seed():
    def draws():
        return [{k: b[k] for k in ("seed", "pith", "random", "numpy")}
                for b in D.DataLoader(Probe(4), batch_size=None, num_workers=2)]
    pith.manual_seed(13)
    first = draws()
    pith.manual_seed(13)
    assert draws() == first
    assert first[0]["pith"] != first[1]["pith"] and first[0]["random"] != first[1]["random"]
    assert first[0]["numpy"] != first[1]["numpy"]
    assert draws() != first  # a new base seed each pass


def test_workers_seed_numpy_as_torch_does_for_their_seed():
    torch, TD = oracle()
    from torch.utils.data._utils.worker import _generate_state
    for b in D.DataLoader(Probe(2), batch_size=None, num_workers=2):
        expected = np.random.RandomState(_generate_state(b["seed"] - b["worker"], b["worker"]))
        # Probe drew one value from NumPy's stream before reading the state.
        expected.rand()
        assert b["numpy_state"] == expected.get_state()[1][:4].tolist()


def test_the_worker_seed_is_drawn_from_the_global_generator():
    loader = D.DataLoader(Probe(1), batch_size=None, num_workers=1)
    pith.manual_seed(2)
    seed = list(loader)[0]["seed"]
    pith.manual_seed(2)
    assert pith.randint(2**63 - 1, ()).item() == seed


def test_the_worker_seed_is_drawn_from_the_loaders_generator():
    def seed(g):
        return list(D.DataLoader(Probe(1), batch_size=None, num_workers=1, generator=g))[0]["seed"]
    assert seed(seeded(6)) == seed(seeded(6)) != seed(seeded(7))


def record_worker_id(worker_id):
    os.environ["PITH_TEST_WORKER_INIT"] = f"{worker_id}/{D.get_worker_info().id}"


class InitProbe(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        return os.environ.get("PITH_TEST_WORKER_INIT", "")


def test_worker_init_fn_runs_in_each_worker_with_its_id():
    batches = list(D.DataLoader(InitProbe(), batch_size=None, num_workers=2,
                                worker_init_fn=record_worker_id))
    assert batches == ["0/0", "1/1", "0/0", "1/1"]
    assert "PITH_TEST_WORKER_INIT" not in os.environ


def failing_init(worker_id):
    raise ZeroDivisionError(f"init of {worker_id}")


def test_an_error_in_worker_init_fn_is_raised_in_the_main_process():
    with pytest.raises(ZeroDivisionError,
                       match="Caught ZeroDivisionError in DataLoader worker process 0") as caught:
        list(D.DataLoader(range(4), num_workers=2, worker_init_fn=failing_init))
    assert "init of 0" in str(caught.value)


def test_an_error_in_a_worker_is_raised_in_the_main_process_with_the_worker_id():
    loader = D.DataLoader(Failing(6, 3, ValueError), num_workers=2)
    with pytest.raises(ValueError) as caught:
        list(loader)
    message = str(caught.value)
    assert message.startswith("Caught ValueError in DataLoader worker process 1.\n"
                              "Original Traceback (most recent call last):\n")
    assert message.rstrip().endswith("ValueError: bad index 3")


def test_a_worker_error_reads_as_torchs():
    torch, TD = oracle()

    class TorchFailing(TD.Dataset):
        __init__, __len__, __getitem__ = Failing.__init__, Failing.__len__, Failing.__getitem__
    messages = []
    for lib, ds in [(D, Failing(4, 2, ValueError)), (TD, TorchFailing(4, 2, ValueError))]:
        it = iter(lib.DataLoader(ds, num_workers=2))
        try:
            with pytest.raises(ValueError) as caught:
                list(it)
        finally:
            it._shutdown_workers()  # at once: torch's would wait for the next collection
        lines = str(caught.value).splitlines()
        messages.append(lines[:2] + lines[-1:])
    assert messages[0] == messages[1]


def test_a_key_error_in_a_worker_keeps_a_readable_message():
    with pytest.raises(KeyError) as caught:
        list(D.DataLoader(Failing(2, 0, KeyError, "missing"), num_workers=1))
    assert str(caught.value).startswith("Caught KeyError in DataLoader worker process 0.\n")


def test_an_error_that_takes_other_arguments_becomes_a_runtime_error():
    failing = Failing(2, 0, lambda message: TwoArgumentError(message, 1))
    with pytest.raises(RuntimeError, match="Caught TwoArgumentError in DataLoader worker"):
        list(D.DataLoader(failing, num_workers=1))


def test_an_error_of_a_class_pickle_cannot_name_becomes_a_runtime_error():
    class LocalError(Exception):
        pass
    with pytest.raises(RuntimeError,
                       match="Caught RuntimeError in DataLoader worker process 0") as caught:
        list(D.DataLoader(Failing(2, 1, LocalError, "local"), num_workers=1))
    assert "LocalError" in str(caught.value) and "local 1" in str(caught.value)


def test_a_batch_that_cannot_be_pickled_is_an_error_of_its_worker():
    with pytest.raises(Exception, match="in DataLoader worker process 0"):
        list(D.DataLoader(range(2), num_workers=1, collate_fn=lambda batch: lambda: batch))


def test_a_stop_iteration_from_a_map_style_dataset_in_a_worker_ends_the_pass_as_in_torch():
    # Raised again by __next__, a StopIteration ends the iteration (in PyTorch too).
    torch, TD = oracle()

    class TorchFailing(TD.Dataset):
        __init__, __len__, __getitem__ = Failing.__init__, Failing.__len__, Failing.__getitem__
    passes = []
    for lib, ds in [(D, Failing(4, 2, StopIteration)), (TD, TorchFailing(4, 2, StopIteration))]:
        it = iter(lib.DataLoader(ds, num_workers=2))
        passes.append([b.tolist() for b in it])
        it._shutdown_workers()  # at once: torch's would wait for the next collection
    assert passes[0] == passes[1] == [[0], [1]]


class Exits(D.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 1:
            os._exit(3)
        return i


def test_a_worker_that_dies_is_reported():
    it = iter(D.DataLoader(Exits(), num_workers=2))
    pid = it._workers[1].pid
    with pytest.raises(RuntimeError,
                       match=rf"DataLoader worker \(pid\(s\) {pid}\) exited unexpectedly"):
        list(it)
    del it


class Blocks(D.Dataset):
    """Each sample waits until the test sets `release`."""

    def __init__(self, release):
        self.release = release

    def __len__(self):
        return 2

    def __getitem__(self, i):
        self.release.wait()
        return i


def test_timeout_is_a_runtime_error():
    release = multiprocessing.Event()
    it = iter(D.DataLoader(Blocks(release), num_workers=1, timeout=0.2))
    try:
        with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
            next(it)
    finally:
        release.set()
    assert [b.tolist() for b in it] == [[0], [1]]  # the worker goes on once released


def test_workers_exit_at_the_end_of_a_pass():
    it = iter(D.DataLoader(range(5), batch_size=2, num_workers=2))
    workers = list(it._workers)
    assert len(list(it)) == 3
    assert [w.exitcode for w in workers] == [0, 0]


def test_workers_exit_when_the_iterator_is_dropped_early():
    it = iter(D.DataLoader(range(50), num_workers=2))
    workers = list(it._workers)
    assert next(it).tolist() == [0]
    del it
    assert [w.exitcode for w in workers] == [0, 0]


def test_workers_exit_when_the_garbage_collector_frees_the_iterator():
    # In a cycle, the iterator is freed by gc.collect(), which first clears the weak
    # references multiprocessing cleans up through (Note [Shutting the workers down]).
    it = iter(D.DataLoader(range(50), num_workers=2))
    it.cycle = it
    workers = list(it._workers)
    assert next(it).tolist() == [0]
    del it
    gc.collect()
    assert [w.exitcode for w in workers] == [0, 0]  # left their loop: not terminated


def test_persistent_workers_serve_every_pass():
    loader = D.DataLoader(Probe(6), batch_size=None, num_workers=2, persistent_workers=True)
    first = list(loader)
    it = iter(loader)
    assert next(it)["i"] == 0  # a pass left unfinished
    second = list(iter(loader))
    assert iter(loader) is it
    assert [b["i"] for b in first] == [b["i"] for b in second] == list(range(6))
    assert {b["pid"] for b in first} == {b["pid"] for b in second}
    workers = list(it._workers)
    del it, loader
    assert [w.exitcode for w in workers] == [0, 0]


@pytest.mark.parametrize("options", [{}, {"batch_size": 2}, {"batch_size": 2, "drop_last": True},
                                     {"batch_size": None}])
def test_each_worker_iterates_over_its_own_copy_of_an_iterable_dataset(options):
    torch, TD = oracle()
    for shard in (False, True):
        ours = [tree(b) for b in D.DataLoader(Stream(3, 10, shard), num_workers=2, **options)]
        theirs = [tree(b) for b in TD.DataLoader(torch_stream(TD, 3, 10, shard), num_workers=2,
                                                 **options)]
        assert ours == theirs


def split_the_stream(worker_id):
    info = D.get_worker_info()
    stream = info.dataset
    per_worker = int(math.ceil((stream.end - stream.start) / float(info.num_workers)))
    stream.start = stream.start + worker_id * per_worker
    stream.end = min(stream.start + per_worker, stream.end)


def test_worker_init_fn_can_configure_the_workers_copy_of_the_dataset():
    stream = Stream(3, 7)
    assert [b.item() for b in D.DataLoader(stream, num_workers=2,
                                           worker_init_fn=split_the_stream)] == [3, 5, 4, 6]
    assert (stream.start, stream.end) == (3, 7)


def test_an_iterable_dataset_with_more_workers_than_samples_ends():
    assert [b.item() for b in D.DataLoader(Stream(0, 1, shard=True), num_workers=2)] == [0]


def test_a_loader_can_use_the_spawn_start_method():
    loader = D.DataLoader(tensor_dataset(pith), batch_size=4, num_workers=1,
                          multiprocessing_context="spawn")
    assert isinstance(loader.multiprocessing_context, multiprocessing.context.SpawnContext)
    expected = [tree(b) for b in D.DataLoader(tensor_dataset(pith), batch_size=4)]
    assert [tree(b) for b in loader] == expected


def test_too_many_workers_warn_as_torch_does():
    with pytest.warns(UserWarning, match="This DataLoader will create 100000 worker processes"):
        D.DataLoader(range(2), num_workers=100000)


# ---- type stubs --------------------------------------------------------------------------

TYPED_USE = '''
import pith
from pith.utils.data import (
    BatchSampler, DataLoader, Dataset, RandomSampler, Subset, TensorDataset, default_collate,
    get_worker_info, random_split,
)


class Squares(Dataset[int]):
    def __len__(self) -> int:
        return 10

    def __getitem__(self, index: int) -> int:
        return index * index


def init(worker_id: int) -> None:
    info = get_worker_info()
    first: int = info.id if info is not None else worker_id


ds = TensorDataset(pith.arange(10), pith.ones(10))
x, y = ds[0]
parts: list[Subset[tuple[pith.Tensor, ...]]] = random_split(ds, [0.8, 0.2])
loader = DataLoader(ds, batch_size=4, shuffle=True, num_workers=2, worker_init_fn=init,
                    prefetch_factor=2, persistent_workers=True)
batches: int = len(loader)
for batch in loader:
    pass
squares = DataLoader(Squares(), batch_size=None, collate_fn=default_collate)
indices: list[list[int]] = list(BatchSampler(RandomSampler(range(5)), 2, False))
'''

TYPED_MISUSE = '''
import pith
from pith.utils.data import DataLoader, RandomSampler, TensorDataset

ds = TensorDataset(pith.arange(10))
a = DataLoader(ds, batch_size="4")
b = RandomSampler(range(3), replacement="yes")
c: str = len(DataLoader(ds))
d = DataLoader(ds, 4, False, None, None, 0, None, False, False, 0, None, None, None, 2)
'''


def test_mypy_accepts_typed_code_using_pith_utils_data(tmp_path):
    from test_stubs import run_mypy
    assert run_mypy(tmp_path, TYPED_USE).strip() == ""


def test_mypy_rejects_wrong_uses_of_pith_utils_data(tmp_path):
    from test_stubs import run_mypy
    output = run_mypy(tmp_path, TYPED_MISUSE)
    flagged = {int(line.split(":")[1]) for line in output.splitlines()
               if line.startswith("usage.py:") and ": error:" in line}
    assert flagged == {6, 7, 8, 9}, output
