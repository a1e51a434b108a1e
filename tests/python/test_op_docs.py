"""docs/python.md's list of op functions and methods: scripts/gen_ops.py writes it from the
op file (scripts/gen_ops_python.py, no build needed), and it must agree with the live
package: every public op function and method is listed, with the signatures the binder
gives as its __doc__. A disagreement is drift between the binder and the op file (or the
generator's copy of how the binder spells a signature)."""
import os
import re
import sys

import pytest

import pith
from pith import _C

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
sys.path.insert(0, os.path.join(REPO, "scripts"))
import gen_ops  # noqa: E402
import gen_ops_python  # noqa: E402

SURFACE = _C._surface()
BUILTIN = {op.name.partition("::")[2].partition(".")[0] for op in _C._op_overloads()
           if op.name.startswith("pith::")}
ROWS = dict(SURFACE)
FUNCTIONS = sorted(n for n, v in SURFACE if v in ("both", "function"))
METHODS = sorted(n for n, v in SURFACE if v in ("both", "method"))
IN_PLACE = sorted(n + "_" for n in METHODS if n + "_" in BUILTIN and n + "_" not in ROWS)


def docs_text():
    with open(os.path.join(REPO, gen_ops_python.DOC), encoding="utf-8") as f:
        return f.read()


def listed():
    """{name: (function, method, in-place name or None, [signature])} of the docs' table."""
    table = docs_text().split("<!-- ops-list -->")[1].split("<!-- /ops-list -->")[0]
    rows = {}
    for line in table.strip().splitlines()[2:]:
        name, function, method, sigs = [c.strip() for c in line.strip("|").split(" | ")]
        inplace = re.search(r", `(\w+)`", method)
        rows[name.strip("`")] = (function == "yes", method.startswith("yes"),
                                 inplace and inplace.group(1), re.findall(r"`([^`]*)`", sigs))
    return rows


def test_the_ops_list_in_the_docs_is_current():
    ops, _ = gen_ops.load()
    named = gen_ops_python.overloads_of(ops, gen_ops.split_top_level)
    text = docs_text()
    assert gen_ops_python.doc_with_ops_list(ops, named, text) == text, \
        "run python3 scripts/gen_ops.py"


def test_every_public_op_function_and_method_is_listed():
    rows = listed()
    assert [n for n in FUNCTIONS if not rows.get(n, (False,))[0]] == []
    assert [n for n in METHODS if not (n in rows and rows[n][1])] == []
    inplace = {row[2] for row in rows.values() if row[2]} | {n for n in rows if n.endswith("_")}
    assert [n for n in IN_PLACE if n not in inplace] == []
    assert sorted(rows) == sorted(FUNCTIONS + [n for n in METHODS if n not in FUNCTIONS])


@pytest.mark.parametrize("name", sorted(set(FUNCTIONS) | set(METHODS)))
def test_the_listed_signatures_are_the_binders(name):
    function, method, inplace, signatures = listed()[name]
    shown = getattr(pith, name) if function else pith.Tensor.__dict__[name]
    assert isinstance(shown, _C.Function if function else _C.Method)
    assert signatures == [line[len(name):] for line in shown.__doc__.splitlines()]
    if inplace:
        assert isinstance(pith.Tensor.__dict__.get(inplace), _C.Method)
