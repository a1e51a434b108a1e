"""default_collate and default_convert, as torch.utils.data._utils.collate: how a list of
samples becomes a batch (tensors stacked, Python numbers made tensors, containers
transposed), and how a single sample is converted when there is no batching.

NumPy is never imported here: its types join default_collate_fn_map once NumPy has been
imported by someone (a batch holding NumPy values implies that). See Note [NumPy in
default_collate_fn_map].
"""
import collections.abc
import copy
import re
import sys

import pith

__all__ = ["collate", "default_collate", "default_collate_fn_map", "default_convert",
           "collate_tensor_fn", "collate_numpy_array_fn", "collate_numpy_scalar_fn",
           "collate_float_fn", "collate_int_fn", "collate_str_fn"]

# NumPy dtype strings of arrays that cannot become tensors: bytes, str, void and object.
np_str_obj_array_pattern = re.compile(r"[SaUO]")

default_collate_err_msg_format = (
    "default_collate: batch must contain tensors, numpy arrays, numbers, "
    "dicts or lists; found {}")


def _is_numpy_value(data):
    kind = type(data)
    return kind.__module__ == "numpy" and kind.__name__ not in ("str_", "string_")


def _rebuild_mapping(mapping, values):
    """A mapping of `mapping`'s type with `values` (a dict), keeping the attributes of a
    mutable mapping type (copied, then updated); a dict when the type allows neither."""
    try:
        if isinstance(mapping, collections.abc.MutableMapping):
            clone = copy.copy(mapping)
            clone.update(values)
            return clone
        return type(mapping)(values)
    except TypeError:
        return values


def _rebuild_sequence(sequence, values):
    """A sequence of `sequence`'s type with `values` (a list), as _rebuild_mapping does;
    a list when the type allows neither (a range, say)."""
    try:
        if isinstance(sequence, collections.abc.MutableSequence):
            clone = copy.copy(sequence)
            for i, value in enumerate(values):
                clone[i] = value
            return clone
        return type(sequence)(values)
    except TypeError:
        return values


def default_convert(data):
    """Converts NumPy arrays and scalars in `data` (at any depth of mappings, named tuples
    and sequences) to tensors; arrays of strings or objects and everything else are kept.
    Tuples become lists, as in PyTorch. The DataLoader's collate_fn when batch_size=None."""
    if isinstance(data, pith.Tensor):
        return data
    if _is_numpy_value(data):
        if (type(data).__name__ == "ndarray"
                and np_str_obj_array_pattern.search(data.dtype.str) is not None):
            return data
        return pith.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild_mapping(data, {key: default_convert(data[key]) for key in data})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a named tuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild_sequence(data, [default_convert(d) for d in data])
    return data


def _collate_handler(elem, collate_fn_map):
    """The collate function of `elem`'s type: an exact key of the map first, then the first
    key (in insertion order) that `elem` is an instance of."""
    handler = collate_fn_map.get(type(elem))
    if handler is not None:
        return handler
    for kind, candidate in collate_fn_map.items():
        if isinstance(elem, kind):
            return candidate
    return None


def collate(batch, *, collate_fn_map=None):
    """Collates a list of samples: each sample's type picks a function of `collate_fn_map`
    (see _collate_handler); otherwise mappings are collated key by key, named tuples and
    sequences position by position (a tuple gives a list), and anything else is a
    TypeError."""
    elem = batch[0]
    handler = None if collate_fn_map is None else _collate_handler(elem, collate_fn_map)
    if handler is not None:
        return handler(batch, collate_fn_map=collate_fn_map)

    def inner(samples):
        return collate(samples, collate_fn_map=collate_fn_map)

    if isinstance(elem, collections.abc.Mapping):
        return _rebuild_mapping(elem, {key: inner([d[key] for d in batch]) for key in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a named tuple
        return type(elem)(*(inner(samples) for samples in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        size = len(elem)
        if any(len(sample) != size for sample in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        columns = [inner(samples) for samples in zip(*batch)]
        return columns if isinstance(elem, tuple) else _rebuild_sequence(elem, columns)
    raise TypeError(default_collate_err_msg_format.format(type(elem)))


def collate_tensor_fn(batch, *, collate_fn_map=None):
    # PyTorch stacks into shared memory inside a worker; pith stacks as usual and the batch
    # crosses to the main process by value (Note [Batches cross processes by value]).
    return pith.stack(batch, 0)


def collate_numpy_array_fn(batch, *, collate_fn_map=None):
    elem = batch[0]
    if np_str_obj_array_pattern.search(elem.dtype.str) is not None:
        raise TypeError(default_collate_err_msg_format.format(elem.dtype))
    return collate([pith.as_tensor(b) for b in batch], collate_fn_map=collate_fn_map)


def collate_numpy_scalar_fn(batch, *, collate_fn_map=None):
    return pith.as_tensor(batch)


def collate_float_fn(batch, *, collate_fn_map=None):
    return pith.tensor(batch, dtype=pith.float64)


def collate_int_fn(batch, *, collate_fn_map=None):
    return pith.tensor(batch)


def collate_str_fn(batch, *, collate_fn_map=None):
    return batch


default_collate_fn_map = {pith.Tensor: collate_tensor_fn, float: collate_float_fn,
                          int: collate_int_fn, str: collate_str_fn, bytes: collate_str_fn}

# Note [NumPy in default_collate_fn_map]
# PyTorch imports NumPy with torch and puts np.ndarray and the NumPy scalar types into
# default_collate_fn_map right after torch.Tensor. pith does not import NumPy (it costs
# import time and does not support sub-interpreters), so the NumPy entries are added, in
# PyTorch's place, by the first default_collate after NumPy has been imported: a batch
# holding NumPy values can only exist by then. Until that moment the map has no NumPy
# keys, which only a program that reads the map itself can see.
_numpy_entries_added = False


def _add_numpy_entries():
    global _numpy_entries_added
    numpy = sys.modules.get("numpy")
    if numpy is None or _numpy_entries_added:
        return
    _numpy_entries_added = True
    rest = [(k, v) for k, v in default_collate_fn_map.items() if k is not pith.Tensor]
    head = [(k, v) for k, v in default_collate_fn_map.items() if k is pith.Tensor]
    default_collate_fn_map.clear()
    default_collate_fn_map.update(head)
    default_collate_fn_map[numpy.ndarray] = collate_numpy_array_fn  # memmap is a subclass
    # The scalars, but not NumPy's string scalars (they are str and bytes subclasses).
    default_collate_fn_map[(numpy.bool_, numpy.number, numpy.object_)] = collate_numpy_scalar_fn
    default_collate_fn_map.update(rest)


_add_numpy_entries()


def default_collate(batch):
    """Collates a list of samples into a batch with PyTorch's rules: tensors are stacked
    along a new first dim, NumPy arrays and scalars become tensors (then stacked), floats
    a float64 tensor, ints an int64 tensor (bools a bool tensor), str and bytes stay a list;
    mappings, named tuples and sequences are collated field by field (a tuple gives a
    list). The DataLoader's collate_fn when it batches."""
    if not _numpy_entries_added:
        _add_numpy_entries()
    return collate(batch, collate_fn_map=default_collate_fn_map)
