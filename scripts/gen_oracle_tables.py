#!/usr/bin/env python3
"""gen_oracle_tables.py — writes the PyTorch oracle tables of tests/data/ from a live torch.

    python scripts/gen_oracle_tables.py [--check] [--out DIR]   # a Python with torch 2.13.0

The C++ tests (which have no torch) and the torch-less fallbacks of the Python property
tests read these tables as PyTorch's word on type promotion, result dtypes and integer
division. Every cell is computed here by running the op in torch (CPU); nothing is typed
in by hand, so re-running this script is the only way to change a table. The file formats
(columns, row order, CRLF line ends of the csv module) are what the tests parse; see
tests/data/README.md for the meaning of each column.

--check writes nothing and exits 1 when a file on disk differs from what it would write.
"""
import argparse
import csv
import io
import os
import sys

import torch

TORCH_VERSION = "2.13.0"  # the version tests/data/README.md names; change both together
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# pith's 10 dtypes, in the order of the rows.
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64"]
# One Python scalar of each kind of the promotion table's "scalar" rows.
SCALARS = {"bool": True, "int": 3, "float": 2.5}
# The operand pairs of int_division.csv: every sign combination, a zero dividend, and a
# small negative dividend (whose floor quotient and remainder differ from C's).
DIVISION_OPERANDS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (-1, 3)]
# torch's way of refusing an op for a dtype.
TORCH_ERRORS = (RuntimeError, TypeError, NotImplementedError)


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def ones(name, shape=(2,)):
    return torch.ones(shape, dtype=getattr(torch, name))


def add_result_dtype(lhs, rhs):
    """The dtype of lhs + rhs, which torch.result_type must agree with."""
    got = dtype_name(torch.add(lhs, rhs).dtype)
    other = dtype_name(torch.result_type(lhs, rhs))
    if got != other:
        raise AssertionError(f"add gives {got} but result_type says {other}")
    return got


def promotion_rows():
    yield ["lhs_kind", "lhs_dtype", "rhs_kind", "rhs_dtype_or_scalar", "result_dtype"]
    for lhs in DTYPES:
        for rhs in DTYPES:
            yield ["tensor", lhs, "tensor", rhs, add_result_dtype(ones(lhs), ones(rhs))]
            yield ["tensor", lhs, "0dim", rhs, add_result_dtype(ones(lhs), ones(rhs, ()))]
        for kind, value in SCALARS.items():
            yield ["tensor", lhs, "scalar", kind, add_result_dtype(ones(lhs), value)]


# The columns of op_result_dtypes.csv: each op applied to a 1-dim tensor of the row's dtype
# (full reductions; the binary ops take the tensor twice).
OPS = {
    "true_div": lambda x: torch.div(x, x),
    "exp": torch.exp,
    "sum": torch.sum,
    "mean": torch.mean,
    "prod": torch.prod,
    "neg": torch.neg,
    "floor_divide": lambda x: torch.floor_divide(x, x),
    "argmax": torch.argmax,
    "eq": lambda x: torch.eq(x, x),
}


def result_dtype(op, x):
    try:
        return dtype_name(op(x).dtype)
    except TORCH_ERRORS:
        return "error"


def op_result_rows():
    yield ["input_dtype", *OPS]
    for name in DTYPES:
        # Nonzero values, so that integer floor_divide does not divide by zero.
        x = torch.tensor([1, 2, 3]).to(getattr(torch, name))
        yield [name, *(result_dtype(op, x) for op in OPS.values())]


def int_division_rows():
    yield ["a", "b", "floor_divide", "remainder", "fmod", "true_div"]
    for a, b in DIVISION_OPERANDS:
        ta, tb = torch.tensor([a]), torch.tensor([b])  # int64
        quotient = torch.div(ta, tb)
        if quotient.dtype != torch.float32:
            raise AssertionError(f"int64 true division gives {quotient.dtype}")
        yield [a, b, torch.floor_divide(ta, tb).item(), torch.remainder(ta, tb).item(),
               torch.fmod(ta, tb).item(), quotient.item()]


TABLES = {
    "promotion.csv": promotion_rows,
    "op_result_dtypes.csv": op_result_rows,
    "int_division.csv": int_division_rows,
}


def render(rows):
    buf = io.StringIO(newline="")
    csv.writer(buf).writerows(rows)  # the csv module's \r\n line ends
    return buf.getvalue()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", default=os.path.join(REPO, "tests", "data"),
                        help="the folder of the tables (default: tests/data)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a table on disk differs")
    args = parser.parse_args()
    version = torch.__version__.split("+")[0]
    if version != TORCH_VERSION:
        sys.exit(f"gen_oracle_tables.py: torch {torch.__version__} is not {TORCH_VERSION}, "
                 "the version tests/data/README.md documents")
    if torch.get_default_dtype() != torch.float32:
        sys.exit("gen_oracle_tables.py: torch's default dtype is not float32")
    stale = []
    for filename, rows in TABLES.items():
        path = os.path.join(args.out, filename)
        text = render(rows())
        if args.check:
            try:
                with open(path, newline="") as f:
                    current = f.read()
            except FileNotFoundError:
                current = None
            if current != text:
                stale.append(path)
            continue
        os.makedirs(args.out, exist_ok=True)
        with open(path, "w", newline="") as f:
            f.write(text)
        print(f"wrote {path}")
    if stale:
        sys.exit("out of date (re-run scripts/gen_oracle_tables.py): " + ", ".join(stale))


if __name__ == "__main__":
    main()
