"""The Python surface derived from the op table is complete (Note [The Python surface of the
op table], python_bindings/_C/op_surface.c): every built-in op name has a row in pith._C._surface() (or
is the in-place form of one); every function and method row is a pith._C.Function or
pith._C.Method; every public function and method is in the type stubs and in
docs/python.md; every built-in op has a meta-parity case (tests/kernels/
meta_parity_cases.cc).

Where something is missing today, the list of what is missing is spelled out below: the
`..._but_the_known_missing` tests fail when anything new goes missing, and the strict xfails
flip when the list is worked off (then delete the list)."""
import os
import re

import pytest

import pith
from pith import _C
from test_stubs import class_members, stub_tree, top_level_names

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))

SURFACE = _C._surface()
ROWS = dict(SURFACE)
OPS = _C._op_overloads()
BUILTIN = sorted({op.name.partition("::")[2].partition(".")[0] for op in OPS
                  if op.name.startswith("pith::")})
FUNCTIONS = sorted(n for n, v in SURFACE if v in ("both", "function"))
METHODS = sorted(n for n, v in SURFACE if v in ("both", "method"))
# Tensor.<name>_ for the in-place ops of method rows without a row of their own
IN_PLACE = sorted(n + "_" for n in METHODS if n + "_" in BUILTIN and n + "_" not in ROWS)

# Ops without a Python row: the metadata ops that Tensor's attributes call (x.size(),
# x.stride(), x.device, x.is_contiguous()) and __pith_dispatch__ handlers see.
METADATA = {"size", "stride", "device", "is_contiguous"}

def test_surface_rows_are_well_formed():
    names = [n for n, _ in SURFACE]
    assert len(names) == len(set(names))
    assert {v for _, v in SURFACE} <= {"both", "function", "method", "internal"}
    assert "add" in FUNCTIONS and "add" in METHODS and ROWS["view"] == "method"
    assert ROWS["gelu"] == "function" and ROWS["slice"] == "internal"


def test_every_builtin_op_name_has_a_row():
    missing = [n for n in BUILTIN if n not in ROWS and n not in METADATA and
               not (n.endswith("_") and ROWS.get(n[:-1]) in ("both", "method"))]
    assert missing == []
    assert not [n for n in ROWS if n not in BUILTIN]  # and every row is an op
    assert METADATA <= set(BUILTIN)


def _surface_objects():
    wrong = set()
    for name in FUNCTIONS:
        if not isinstance(getattr(pith, name, None), _C.Function):
            wrong.add(("function", name))
    for name in METHODS + IN_PLACE:
        if not isinstance(pith.Tensor.__dict__.get(name), _C.Method):
            wrong.add(("method", name))
    return wrong


def test_every_function_and_method_row_is_a_c_function_or_method():
    # Nothing is written in Python over an op's Function: the call forms the schemas do not
    # spell (as_tuple=, the factories' requires_grad=) are the binder's (Note [Python-only
    # arguments]).
    assert _surface_objects() == set()


def test_functions_and_methods_bind_the_ops_of_their_name():
    for name in FUNCTIONS:
        f = getattr(pith, name)
        if isinstance(f, _C.Function):
            assert f.overloads and all(ov.name.partition(".")[0] == "pith::" + name
                                       for ov in f.overloads), name
    for name in METHODS + IN_PLACE:
        m = pith.Tensor.__dict__[name]
        if isinstance(m, _C.Method):
            assert all(ov.name.partition(".")[0] == "pith::" + name for ov in m.overloads)
    assert "pith::add_.Tensor" in [ov.name for ov in pith.Tensor.add_.overloads]


def test_internal_rows_are_not_functions_or_methods():
    for name, variant in SURFACE:
        if variant == "internal":
            assert not isinstance(getattr(pith, name, None), _C.Function), name
            assert not isinstance(pith.Tensor.__dict__.get(name), _C.Method), name
        if variant == "function":
            assert not isinstance(pith.Tensor.__dict__.get(name), _C.Method), name
        if variant == "method":
            assert not isinstance(getattr(pith, name, None), _C.Function), name


# ---- the type stubs ------------------------------------------------------------------------

def stub_names():
    """The top-level names and the Tensor members of pith/__init__.pyi (test_stubs.py's
    readers)."""
    tree = stub_tree("__init__.pyi")
    return top_level_names(tree), class_members(tree, "Tensor")


def test_every_function_and_method_is_in_the_stubs():
    top, members = stub_names()
    assert [n for n in FUNCTIONS if n not in top] == []
    assert [n for n in METHODS + IN_PLACE if n not in members] == []


# ---- the docs ------------------------------------------------------------------------------

def docs_missing():
    with open(os.path.join(REPO, "docs", "python.md")) as f:
        docs = f.read()
    public = sorted(set(FUNCTIONS) | set(METHODS) | set(IN_PLACE))
    return {n for n in public if not re.search(r"(?<![\w.])" + re.escape(n) + r"(?!\w)", docs)
            and not re.search(r"\." + re.escape(n) + r"\b", docs)}


def test_docs_name_every_public_op():
    """docs/python.md names every one (its ops list is scripts/gen_ops.py's; test_op_docs.py
    checks the list itself)."""
    assert sorted(docs_missing()) == []


# ---- meta parity ---------------------------------------------------------------------------

def meta_parity_missing():
    """Built-in ops without a case in tests/kernels/meta_parity_cases.cc: the unary and binary
    elementwise ops (with their in-place forms) get generated cases where the file includes
    tests/kernels/generated/elementwise_cases.inc (written from the op file by
    scripts/gen_ops.py); the others need a row naming them ("name" or "name.overload")."""
    with open(os.path.join(REPO, "tests", "kernels", "meta_parity_cases.cc")) as f:
        cases = f.read()
    generated = os.path.join("tests", "kernels", "generated", "elementwise_cases.inc")
    covered = set()
    if generated in cases:
        with open(os.path.join(REPO, generated)) as f:
            for name in re.findall(r'"(\w+)[."]', f.read()):
                covered.update({name, name + "_"})
    return sorted(n for n in BUILTIN if n not in covered and n not in METADATA and
                  not re.search(r'"(pith::)?' + re.escape(n) + r'[."]', cases))


# The metadata ops (METADATA) are defined by the bindings for __pith_dispatch__ handlers
# (python_bindings/_C/python_library.c) and have no kernels, so no meta-parity case.
def test_meta_parity_covers_every_op():
    assert meta_parity_missing() == []
    assert "add" in BUILTIN and "sum" in BUILTIN
