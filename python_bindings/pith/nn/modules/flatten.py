"""Flatten and Unflatten, as in torch.nn."""
from .module import Module

__all__ = ["Flatten", "Unflatten"]


class _SizesDoNotMultiply(ValueError):
    pass


def _infer_sizes(sizes, numel):
    """PyTorch's infer_size: the list `sizes` with its one -1 resolved so that the sizes
    multiply to numel. Raises ValueError with PyTorch's message, _SizesDoNotMultiply when
    the sizes cannot multiply to numel."""
    inferred, product = None, 1
    for index, size in enumerate(sizes):
        if size == -1:
            if inferred is not None:
                raise ValueError("only one dimension can be inferred")
            inferred = index
        elif size >= 0:
            product *= size
        else:
            raise ValueError(f"invalid shape dimension {size} at index {index} of shape "
                             f"{sizes}")
    if numel == product and inferred is None:
        return sizes
    if inferred is not None and (numel == product or (product > 0 and numel % product == 0)):
        if product == 0:
            raise ValueError(f"cannot reshape tensor of 0 elements into shape {sizes} because "
                             "the unspecified dimension size -1 can be any value and is "
                             "ambiguous")
        return sizes[:inferred] + [numel // product] + sizes[inferred + 1:]
    raise _SizesDoNotMultiply()


def _unflatten(input, dim, sizes):
    """input.unflatten(dim, sizes): dim `dim` viewed as the dims `sizes` (one may be -1)."""
    length = input.size(dim)  # raises PyTorch's IndexError for a dim out of range
    dim %= input.dim()
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    sizes = [int(size) for size in sizes]
    try:
        resolved = _infer_sizes(sizes, length)
    except _SizesDoNotMultiply:
        raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size "
                           f"of dim {dim} ({length}) in the input tensor") from None
    except ValueError as error:
        raise RuntimeError(f"unflatten got an unexpected error:\n{error}") from None
    shape = tuple(input.shape)
    return input.view(shape[:dim] + tuple(resolved) + shape[dim + 1:])


class Flatten(Module):
    """Flattens dims start_dim..end_dim into one: (N, *) -> (N, prod(*)) by default."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Views dim `dim` as the dims `unflattened_size` (a tuple or list of ints, one of which
    may be -1)."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim, unflattened_size):
        super().__init__()
        self._require_tuple_int(unflattened_size)
        self.dim = dim
        self.unflattened_size = unflattened_size

    def _require_tuple_int(self, input):
        if isinstance(input, (tuple, list)):
            for index, element in enumerate(input):
                if not isinstance(element, int):
                    raise TypeError(f"unflattened_size must be tuple of ints, but found "
                                    f"element of type {type(element).__name__} at pos {index}")
            return
        raise TypeError(f"unflattened_size must be a tuple of ints, but found type "
                        f"{type(input).__name__}")

    def forward(self, input):
        return _unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
