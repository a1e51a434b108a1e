"""scripts/gen_ops.py, the op file's generator: it derives the out= and in-place forms, and it
refuses an op file that is wrong (an unknown key or kind, a schema type the C parser does not
know, a duplicate, a derivative that names what the overload does not have, an overload the
derivatives section leaves unaccounted for) with a message that names the op or overload;
and it writes the Python API's text (scripts/gen_ops_python.py): the signatures of
docs/python.md's ops list as the binder's __doc__ spells them, in its overload order, and the
stubs' declarations of each op function and method. Note [The op file]
(ops/ops.toml) describes the format."""
import os

import pytest

from _scripts import load_script

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


@pytest.fixture(scope="module")
def gen():
    return load_script("gen_ops")


@pytest.fixture
def load(gen, tmp_path, monkeypatch):
    """Loads an op file made of `text` (in a scratch tree) and returns (ops, rows)."""
    def run(text, account=False):
        (tmp_path / "ops").mkdir(exist_ok=True)
        (tmp_path / "ops" / "ops.toml").write_text(text)
        monkeypatch.setattr(gen, "ROOT", str(tmp_path))
        return gen.load(account=account)
    return run


MUL = '''
[op.mul]
family = "binary"
python = "both"
test = { numpy = "np.multiply(a, b)" }
[[op.mul.overload]]
schema = "mul.Tensor(Tensor self, Tensor other) -> Tensor"
out = "mul.out"
inplace = "mul_.Tensor"
'''


def test_the_checked_in_op_file_loads_and_its_rows_are_unique(gen):
    ops, rows = gen.load()
    assert len({r.id for r in rows}) == len(rows)
    assert len({r.schema.full_name for r in rows}) == len(rows)
    assert {"add", "add_out", "add_", "expm1", "leaky_relu_"} <= {r.id for r in rows}


def test_out_and_in_place_forms_are_derived_from_the_functional_schema(load):
    ops, rows = load(MUL)
    assert [(r.id, r.schema.text) for r in rows] == [
        ("mul", "mul.Tensor(Tensor self, Tensor other) -> Tensor"),
        ("mul_out", "mul.out(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)"),
        ("mul_", "mul_.Tensor(Tensor(a!) self, Tensor other) -> Tensor(a!)"),
    ]
    assert [t for t, _ in rows[1].schema.args] == ["TENSOR", "TENSOR", "TENSOR"]


def test_a_unary_op_derives_its_three_forms(load):
    ops, rows = load('[op.neg]\nfamily = "unary"\npython = "both"\ntest = { numpy = "-x" }\n')
    assert [r.schema.full_name for r in rows] == ["neg", "neg.out", "neg_"]


@pytest.mark.parametrize("text,message", [
    ('[op.f]\nkernel = 1\n[[op.f.overload]]\nschema = "f(Tensor self) -> Tensor"\n',
     "[op.f]: unknown keys ['kernel']"),
    ('[op.f]\n[[op.f.overload]]\nschema = "f(Tensor self) -> Tensor"\nkind = "fast"\n',
     "[op.f] f: kind must be one of"),
    ('[op.f]\n[[op.f.overload]]\nschema = "f(Tensor self, Quux q) -> Tensor"\n',
     "argument type 'Quux' is not in PITH_FORALL_ARG_TYPES"),
    ('[op.f]\n[[op.f.overload]]\nschema = "g(Tensor self) -> Tensor"\n',
     "is not an overload of f"),
    ('[op.f]\n[[op.f.overload]]\nschema = "f(Tensor self) -> Tensor"\n'
     '[[op.f.overload]]\nid = "f2"\nschema = "f(Tensor self) -> Tensor"\n',
     "the overload 'f' is declared twice"),
    ('[op.f]\n[[op.f.overload]]\nschema = "f(Tensor self) -> (Tensor a, Tensor b)"\n'
     'out = "f.out"\n', "only a schema returning one Tensor has a derived out= form"),
    ('[op.f]\nfamily = "unary"\n', "a unary op needs test.numpy"),
    (MUL.replace('test = { numpy = "np.multiply(a, b)" }\n', ""),
     "[op.mul]: a binary op's test is { numpy = ... }"),
    ('[op.f]\n[[op.f.overload]]\nschema = "f(Tensor self) -> Tensor"\nkind = "composite_implicit"'
     '\ndevice_kernel = true\n', "only a backend overload has a device_kernel"),
    ('[op.f]\n[[op.f.overload]]\nschema = "f(Tensor self) -> Tensor"\nfusion = "magic"\n',
     "fusion is one of"),
    ('[op.f]\nvecmath = { f = [1.0] }\n[[op.f.overload]]\nschema = "f(Tensor self) -> Tensor"\n',
     "vecmath.f is [float32 bound, float64 bound]"),
])
def test_a_wrong_op_file_is_refused_naming_the_op(load, text, message):
    with pytest.raises(SystemExit, match=None) as raised:
        load(text)
    assert message in str(raised.value)


MUL_D = '[derivatives."mul.Tensor"]\nself = "mul(grad, other)"\nother = "mul(grad, self)"\n' \
    'saves = ["self", "other"]\n'
NUMEL = '[backward_helper.numel]\nsignature = "numel(Tensor t) -> int"\nmetadata = ["t"]\n' \
    'meaning = "t\'s number of elements"\n'
F_IMPLICIT = '[op.f]\n[[op.f.overload]]\nschema = "f(Tensor self) -> Tensor"\n' \
    'kind = "composite_implicit"\n'
G_INPLACE = '[op.g_]\n[[op.g_.overload]]\nschema = "g_(Tensor(a!) self) -> Tensor(a!)"\n'
ZEROS_LIKE = '[backward_helper.zeros_like]\nsignature = "zeros_like(Tensor t) -> Tensor"\n' \
    'metadata = ["t"]\nmeaning = "zeros of t\'s sizes, dtype and device"\n'
H = '[op.h]\n[[op.h.overload]]\nschema = "h(Tensor self) -> Tensor"\n'


@pytest.mark.parametrize("entry,message", [
    (MUL_D, None),
    (ZEROS_LIKE + '[derivatives."mul.Tensor"]\nnot_differentiable = "for the test"\n'
     'inplace = "zeros"\ninplace_node = "MulBackward1"\n', None),
    ('[derivatives."mul.Tensor"]\nnot_differentiable = "x"\ninplace = "zeros"\n',
     "'zeros_like' is not an op (of this file, functional) or a backward helper"),
    ('[derivatives."mul.Tensor"]\nnot_differentiable = "x"\ninplace = "not_implemented"\n', None),
    ('[derivatives."mul.Tensor"]\nnot_differentiable = "for the test"\n',
     "mul_.Tensor writes self, whose history must not go stale: say inplace = \"zeros\""),
    ('[derivatives."mul.Tensor"]\nnot_differentiable = "x"\ninplace = "ones"\n',
     "mul_.Tensor writes self, whose history must not go stale"),
    ('[derivatives."mul.Tensor"]\nnot_differentiable = "x"\ninplace = "not_implemented"\n'
     'inplace_node = "MulBackward1"\n', "inplace_node names the node of inplace = \"zeros\""),
    (H + MUL_D + '[derivatives."h"]\nnot_differentiable = "x"\ninplace = "zeros"\n',
     "[derivatives.'h']: inplace is for an overload that derives an in-place form"),
    ('[derivatives."mul.Scalar"]\nself = "grad"\n', "no such overload"),
    ('[derivatives."mul.Tensor"]\nalpha = "grad"\n', "'alpha' is not a Tensor argument"),
    ('[derivatives."mul.Tensor"]\nself = "frobnicate(grad, other)"\nother = false\n'
     'saves = ["other"]\n', "'frobnicate' is not an op"),
    ('[derivatives."mul.Tensor"]\nself = "mul(grad, weight)"\nother = false\n',
     "unknown name 'weight'"),
    ('[derivatives."mul.Tensor"]\nself = "mul(grad, other)"\nother = false\n',
     "saves [] but the formulas read ['other']"),
    ('[derivatives."mul.Tensor"]\nself = "mul(grad, other)"\nsaves = ["other"]\n',
     "no formula for the Tensor inputs ['other']"),
    ('[derivatives."mul.Tensor"]\nself = false\nother = false\n',
     "no input has a formula; say not_differentiable"),
    ('[derivatives."mul.Tensor"]\nself = "mul(grad)"\nother = false\n',
     "the call of mul fits no overload"),
    ('[derivatives."mul.Tensor"]\nself = "mul(grad, other"\nother = false\n',
     "expected ',' or ')'"),
    ('[derivatives."mul.Tensor"]\nself = "sizes(grad)"\nother = false\n',
     "'sizes' is not an op (of this file, functional) or a backward helper"),
    (MUL_D + '[derivatives."mul.out"]\nself = "grad"\n',
     "[derivatives.'mul.out']: mul.out is the out form of mul.Tensor, whose entry covers it"),
    ('[derivatives."mul.Tensor"]\nnot_differentiable = "x"\nself = "grad"\n',
     "not_differentiable stands alone in its entry"),
    ('[derivatives."mul.Tensor"]\nnot_differentiable = ""\n',
     "not_differentiable is the reason, a sentence"),
    ('[derivatives."mul.Tensor"]\ncomposite_implicit = true\n',
     "composite_implicit = true, but its kind is backend"),
    ('[derivatives."mul.Tensor"]\nform_of = "mul.Tensor"\n',
     "form_of is for an in-place or out= overload; mul.Tensor is functional"),
    (NUMEL + '[derivatives."mul.Tensor"]\nself = "mul(grad, numel(self))"\nother = false\n',
     "saves_metadata [] but the formulas read only the metadata of ['self']"),
    (NUMEL + MUL_D, "backward helpers that no formula calls: ['numel']"),
    (NUMEL.replace('["t"]', '["u"]') + MUL_D, "[backward_helper.numel]: metadata lists"),
    ('[derivatives."mul.Tensor"]\nlet = { other = "grad" }\nself = "grad"\nother = false\n',
     "let 'other' hides a name of the overload"),
    ('[derivatives."mul.Tensor"]\nself = "case(other, grad, grad)"\nother = false\n',
     "a case's values are literals"),
    ('[derivatives."mul.Tensor"]\nself = "grad"\nother = false\n'
     'differentiable_outputs = ["result"]\n', "differentiable_outputs is a proper subset"),
    (F_IMPLICIT + MUL_D + '[derivatives."f"]\nnot_differentiable = "x"\n',
     "[derivatives.'f']: a composite_implicit overload takes its gradient from its parts"),
    (G_INPLACE + MUL_D + '[derivatives."g_"]\nself = "grad"\n',
     "g_ writes its argument; say form_of = \"<functional overload>\", or hand_written"),
    (G_INPLACE + MUL_D + '[derivatives."g_"]\nform_of = "mul.Tensor"\n',
     "form_of names 'mul.Tensor', which is not a functional overload of g"),
    (MUL, "the derivatives section does not account for 1 overloads: mul.Tensor"),
    (F_IMPLICIT + MUL_D, "does not account for 1 overloads: f "),
])
def test_the_derivatives_section_is_checked(load, entry, message):
    text = entry if "[op.mul]" in entry else MUL + entry
    if message is None:
        load(text, account=True)
        return
    with pytest.raises(SystemExit) as raised:
        load(text, account=True)
    assert message in str(raised.value)


def test_every_overload_is_in_the_listing_once(gen, capsys):
    assert gen.main(["--derivatives"]) == 0
    lines = capsys.readouterr().out.splitlines()
    _, rows = gen.load()
    listed = [line[20:].split(":")[0] for line in lines[:-1]]
    assert listed == [r.schema.full_name for r in rows]
    assert lines[-1].endswith("none unaccounted for")


def test_a_formula_parses_into_calls_and_literals(gen):
    parse = gen.gen_derivatives.parse_formula
    assert parse("sum(grad, [dim], True, dtype=None)") == (
        "call", "sum", [("name", "grad"), ("list", [("name", "dim")]), ("const", True)],
        [("dtype", ("const", None))])
    assert parse("squeeze.dim(x, -1)") == ("call", "squeeze.dim", [("name", "x"), ("num", -1)], [])
    assert parse("case(approximate, 'tanh', 0.5, 1e-3)")[2][1:] == [
        ("str", "tanh"), ("num", 0.5), ("num", 0.001)]


def test_the_generated_files_are_current(gen):
    """What ctest's Ops.GeneratedFilesAreCurrent checks, from Python too."""
    assert gen.main(["--check"]) == 0


# ---- the Python API's text: docs/python.md's ops list and the stubs' op blocks -------------
# (scripts/gen_ops_python.py; tests/python/test_op_docs.py and test_stubs.py compare them
# with a built package)

SUM = '''
[op.sum]
python = "both"
[[op.sum.overload]]
schema = "sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"
[[op.sum.overload]]
id = "sum_dim"
schema = "sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
out = "sum.IntList_out"
[[op.sum.overload]]
id = "sum_dims"
schema = "sum.dims(Tensor self, int[] dims, float eps=1e-05, str mode='none', Scalar alpha=1, bool? stable=None) -> Tensor"
'''


@pytest.fixture
def python_api(gen, load):
    """(ops, named) of an op file made of `text`, for gen_ops_python's functions."""
    def run(text):
        ops, _ = load(text)
        return ops, gen.gen_ops_python.overloads_of(ops, gen.split_top_level)
    return run


def test_docs_signatures_are_spelled_as_the_binders_doc(gen, python_api):
    ops, named = python_api(SUM)
    table = gen.gen_ops_python.docs_table(ops, named).splitlines()
    assert table[2] == (
        "| `sum` | yes | yes | `(Tensor input, *, dtype dtype = None)`<br>"
        "`(Tensor input, tuple of ints? dim = None, bool keepdim = False, *, dtype dtype = None)`<br>"
        "`(Tensor input, tuple of ints dims, float eps = 1e-05, str mode = 'none', "
        "Number alpha = 1, bool? stable = None)`<br>"
        "`(Tensor input, tuple of ints? dim = None, bool keepdim = False, *, dtype dtype = None, "
        "Tensor out)` |")


def test_docs_list_overloads_in_the_binders_order(gen, python_api):
    """Note [Overload order]: a Scalar overload after the Tensor one it shadows, out= last."""
    ops, named = python_api('''
[op.mul]
python = "both"
[[op.mul.overload]]
id = "mul_scalar"
schema = "mul.Scalar(Tensor self, Scalar other) -> Tensor"
[[op.mul.overload]]
schema = "mul.Tensor(Tensor self, Tensor other) -> Tensor"
out = "mul.out"
inplace = "mul_.Tensor"
''')
    row = gen.gen_ops_python.docs_table(ops, named).splitlines()[2]
    assert row == ("| `mul` | yes | yes, `mul_` | `(Tensor input, Tensor other)`<br>"
                   "`(Tensor input, Number other)`<br>`(Tensor input, Tensor other, *, "
                   "Tensor out)` |")


def test_docs_show_a_method_only_name_without_self(gen, python_api):
    ops, named = python_api('''
[op.view]
python = "method"
[[op.view.overload]]
schema = "view(Tensor(a) self, int[] size) -> Tensor(a)"
''')
    assert gen.gen_ops_python.docs_table(ops, named).splitlines()[2] == \
        "| `view` | - | yes | `(tuple of ints size)` |"


def test_a_default_the_docs_cannot_spell_is_refused_naming_the_op(gen, python_api):
    ops, named = python_api(SUM.replace("float eps=1e-05", "ScalarType kind=float"))
    with pytest.raises(SystemExit) as raised:
        gen.gen_ops_python.docs_table(ops, named)
    assert "sum.dims(" in str(raised.value) and "cannot spell the default kind=float" in \
        str(raised.value)


def test_stubs_declare_each_overload_but_the_out_ones(gen, python_api):
    ops, named = python_api(MUL + '''
[op.view]
python = "method"
[[op.view.overload]]
schema = "view(Tensor(a) self, int[] size) -> Tensor(a)"

[op.topk]
python = "function"
[[op.topk.overload]]
schema = "topk(Tensor self, int k, int[1] dim=-1) -> (Tensor values, Tensor indices)"
''')
    methods, functions = gen.gen_ops_python.stub_blocks(ops, named)
    assert methods.splitlines() == [
        "    def mul(self, other: _TensorOrNumber) -> Tensor: ...",
        "    def mul_(self, other: _TensorOrNumber) -> Tensor: ...",
        "    @overload",
        "    def view(self, size: _size) -> Tensor: ...",
        "    @overload",
        "    def view(self, *size: _int) -> Tensor: ...",
    ]
    assert functions.splitlines() == [
        "def mul(input: Tensor, other: _TensorOrNumber) -> Tensor: ...",
        "def topk(input: Tensor, k: _int, dim: _int | _size = ...) -> tuple[Tensor, Tensor]: ...",
    ]


def test_stubs_take_tensors_as_varargs_where_the_op_file_says_so(gen, python_api):
    ops, named = python_api('''
[op.meshgrid]
python = "function"
varargs = true
[[op.meshgrid.overload]]
schema = "meshgrid(Tensor[] tensors) -> Tensor[]"
''')
    _, functions = gen.gen_ops_python.stub_blocks(ops, named)
    assert functions.splitlines() == [
        "@overload", "def meshgrid(tensors: Sequence[Tensor]) -> tuple[Tensor, ...]: ...",
        "@overload", "def meshgrid(*tensors: Tensor) -> tuple[Tensor, ...]: ...",
    ]


def test_stubs_leave_out_the_names_gen_stubs_header_declares(gen, python_api):
    """max's call forms are hand-written in scripts/gen_stubs.py's HEADER."""
    ops, named = python_api('''
[op.max]
python = "both"
[[op.max.overload]]
schema = "max(Tensor self) -> Tensor"
''')
    assert gen.gen_ops_python.stub_blocks(ops, named) == ("", "")


def test_a_file_without_its_markers_is_refused(gen, python_api):
    ops, named = python_api(MUL)
    with pytest.raises(SystemExit) as raised:
        gen.gen_ops_python.with_stub_blocks(ops, named, "class Tensor: ...\n")
    assert "python_bindings/pith/__init__.pyi has no '# @begin ops-methods" in str(raised.value)
    with pytest.raises(SystemExit) as raised:
        gen.gen_ops_python.doc_with_ops_list(ops, named, "no list here\n")
    assert "docs/python.md has no '<!-- ops-list -->'" in str(raised.value)


def test_the_op_blocks_are_rewritten_in_place(gen, python_api):
    py = gen.gen_ops_python
    ops, named = python_api(MUL)
    text = (f"class Tensor:\n{py.METHODS_BEGIN}\n    def stale(self) -> None: ...\n"
            f"{py.METHODS_END}    def kept(self) -> None: ...\n{py.FUNCTIONS_BEGIN}\n"
            f"{py.FUNCTIONS_END}def kept() -> None: ...\n")
    assert py.with_stub_blocks(ops, named, text) == (
        f"class Tensor:\n{py.METHODS_BEGIN}\n"
        "    def mul(self, other: _TensorOrNumber) -> Tensor: ...\n"
        "    def mul_(self, other: _TensorOrNumber) -> Tensor: ...\n"
        f"{py.METHODS_END}    def kept(self) -> None: ...\n{py.FUNCTIONS_BEGIN}\n"
        "def mul(input: Tensor, other: _TensorOrNumber) -> Tensor: ...\n"
        f"{py.FUNCTIONS_END}def kept() -> None: ...\n")


# ---- the public C functions (Note [The C surface of an op]) ------------------------------

VIEW = '''
[op.view]
[[op.view.overload]]
schema = "view(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a)"
'''
VIEW_C = '''[op.view.c_api.pith_view]
params = "const pith_tensor *x, int ndim, const int64_t *sizes"
check = 'int_list_check("view", ndim)'
args = { self = "x", size = "sizes_list(ndim, sizes)" }
'''


def test_a_c_api_table_becomes_a_checked_converting_call(gen, load):
    ops, rows = load(VIEW + VIEW_C)
    assert gen.gen_c_function(ops[0].c_api[0]) == [
        "/* view(Tensor(a) self, int[] size, *, bool implicit=False) -> Tensor(a) */",
        "PITH_API pith_tensor *pith_view(const pith_tensor *x, int ndim, const int64_t *sizes)",
        "{",
        "    pith_value ret[1];",
        '    if (!int_list_check("view", ndim))',
        "        return NULL;",
        "    pith_status status = pith_call_view(ret, x, sizes_list(ndim, sizes), false);",
        "    return op_call_result(status, ret);",
        "}",
        "",
    ]


def test_an_argument_takes_the_c_parameter_of_its_name_and_a_local_is_cleaned_up(gen, load):
    ops, rows = load('''
[op.sum]
[[op.sum.overload]]
schema = "sum.dim_IntList(Tensor self, int[1]? dim=None, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor"
[op.sum.c_api.pith_sum]
params = "const pith_tensor *x, int ndims, const int *dims, bool keepdim"
local = "dims_buffer b"
check = 'dims_convert("sum", ndims, dims, &b)'
args = { self = "x", dim = "dims_optional(&b)" }
cleanup = "dims_free(&b)"
''')
    body = gen.gen_c_function(ops[0].c_api[0])
    assert body[3:10] == [
        "    pith_value ret[1];",
        "    dims_buffer b;",
        '    if (!dims_convert("sum", ndims, dims, &b))',
        "        return NULL;",
        "    pith_status status = pith_call_sum(ret, x, dims_optional(&b), keepdim, -1);",
        "    dims_free(&b);",
        "    return op_call_result(status, ret);",
    ]


def test_the_out_and_in_place_forms_return_a_status(gen, load):
    ops, rows = load(MUL.replace('family = "binary"\n', "") + """
[op.mul.c_api.pith_mul_out]
overload = "mul.out"
params = "pith_tensor *out, const pith_tensor *a, const pith_tensor *b"
args = { self = "a", other = "b" }
[op.mul.c_api.pith_mul_]
overload = "mul_.Tensor"
params = "pith_tensor *self, const pith_tensor *other"
check = 'pointer_check("mul_", "other", other, 1)'
""")
    out, inplace = (gen.gen_c_function(f) for f in ops[0].c_api)
    assert out[1:] == [
        "PITH_API pith_status pith_mul_out(pith_tensor *out, const pith_tensor *a, "
        "const pith_tensor *b)",
        "{",
        "    pith_value ret[1];",
        "    pith_status status = pith_call_mul_out(ret, a, b, out);",
        "    return call_status(status, ret);",
        "}",
        "",
    ]
    assert inplace[4:6] == ['    if (!pointer_check("mul_", "other", other, 1))',
                            "        return pith_last_status();"]


def test_a_list_result_returns_its_count_through_n(gen, load):
    ops, rows = load('''
[op.unbind]
[[op.unbind.overload]]
schema = "unbind.int(Tensor(a) self, int dim=0) -> Tensor[]"
[op.unbind.c_api.pith_unbind]
params = "const pith_tensor *x, int dim, size_t *n"
check = 'list_count_reset("unbind", n)'
args = { self = "x" }
''')
    body = gen.gen_c_function(ops[0].c_api[0])
    assert body[1] == "PITH_API pith_tensor **pith_unbind(const pith_tensor *x, int dim, size_t *n)"
    assert body[-3] == "    return tensor_list_result(status, ret, n);"


@pytest.mark.parametrize("table,message", [
    (VIEW_C + 'param = "int x"\n',
     "[op.view.c_api.pith_view]: unknown keys ['param']"),
    (VIEW_C + 'result = "tensors"\n', "[op.view.c_api.pith_view]: result must be one of"),
    (VIEW_C + 'result = "status"\n',
     "[op.view.c_api.pith_view]: view returns Tensor(a), which is no 'status' result"),
    (VIEW_C + 'overload = "view.out"\n',
     "[op.view.c_api.pith_view]: view has no overload 'view.out'"),
    (VIEW_C.replace('size = ', 'shape = '),
     "[op.view.c_api.pith_view]: args.shape: view has no argument 'shape'"),
    (VIEW_C.replace('self = "x", ', ''),
     "[op.view.c_api.pith_view]: nothing is passed for view's argument 'self'"),
    (VIEW_C.replace('params = "const pith_tensor *x, int ndim, const int64_t *sizes"\n', ''),
     "[op.view.c_api.pith_view]: params, the C parameter list, is missing"),
    (VIEW_C.replace('int ndim,', 'int (*ndim)(void),'),
     "[op.view.c_api.pith_view]: cannot read the C parameter"),
    (VIEW_C.replace("""check = 'int_list_check("view", ndim)'""", "check = [1]"),
     "[op.view.c_api.pith_view]: check is a C expression or a list of them"),
    (VIEW_C + 'cleanup = ["a", "b"]\n',
     "[op.view.c_api.pith_view]: cleanup is one C statement"),
    (VIEW_C.replace('size = "sizes_list(ndim, sizes)"', 'size = 3'),
     "[op.view.c_api.pith_view]: args.size is a C expression"),
    (VIEW_C.replace("pith_view]", "view_of]"),
     "[op.view.c_api.view_of]: a public C function is named pith_<something>"),
    (VIEW_C + '[op.view.c_api.pith_view_list]\nparams = "const pith_tensor *x"\n'
     'args = { self = "x", size = "sizes_list(0, NULL)" }\nresult = "list"\n',
     "[op.view.c_api.pith_view_list]: view returns Tensor(a), which is no 'list' result"),
])
def test_a_wrong_c_api_table_is_refused_naming_the_op(load, table, message):
    with pytest.raises(SystemExit) as raised:
        load(VIEW + table)
    assert message in str(raised.value)


def test_an_overload_whose_results_no_c_function_returns_is_refused(load):
    with pytest.raises(SystemExit) as raised:
        load('[op.aminmax]\n[[op.aminmax.overload]]\n'
             'schema = "aminmax(Tensor self) -> (Tensor min, Tensor max)"\n'
             '[op.aminmax.c_api.pith_aminmax]\nparams = "const pith_tensor *self"\n')
    assert ("[op.aminmax.c_api.pith_aminmax]: aminmax returns (Tensor min, Tensor max), which "
            "no public C function returns") in str(raised.value)


def test_a_list_result_needs_its_count_parameter(load):
    with pytest.raises(SystemExit) as raised:
        load('[op.unbind]\n[[op.unbind.overload]]\n'
             'schema = "unbind.int(Tensor(a) self, int dim=0) -> Tensor[]"\n'
             '[op.unbind.c_api.pith_unbind]\nparams = "const pith_tensor *self, int dim"\n')
    assert "[op.unbind.c_api.pith_unbind]: a list result needs a C parameter named 'n'" in \
        str(raised.value)


def test_a_family_op_takes_no_c_api_and_public_names_are_unique(load):
    with pytest.raises(SystemExit) as raised:
        load(MUL + '[op.mul.c_api.pith_mul]\nparams = "const pith_tensor *self"\n')
    assert "[op.mul]: a binary op's public C functions are derived; give no c_api" in \
        str(raised.value)
    with pytest.raises(SystemExit) as raised:
        load(MUL + VIEW + VIEW_C.replace("pith_view]", "pith_mul_out]"))
    assert "the public C function 'pith_mul_out' is declared twice" in str(raised.value)


def test_every_public_function_of_the_op_headers_is_generated_or_written_by_hand(gen):
    """Each function pith/ops.h and pith/ops_shape.h declare is a c_api table's or
    ops/c_api_manual.c's, and each of those is a public function; the file of each is
    checked in, so grep finds each definition."""
    import re
    ops, rows = gen.load()
    tables = [f.name for op in ops for f in op.c_api]
    with open(os.path.join(REPO, "ops", "c_api_manual.c"), encoding="utf-8") as f:
        manual = set(re.findall(r"^\w[^(\n]*?\b(pith_\w+)\(", f.read(), re.M))
    declared = {}
    for header in os.listdir(os.path.join(REPO, "include", "pith")):
        with open(os.path.join(REPO, "include", "pith", header), encoding="utf-8") as f:
            declared[header] = set(re.findall(r"PITH_API\s+[^;(]*?\b(pith_\w+)\s*\(", f.read()))
    assert len(tables) == len(set(tables))
    assert not set(tables) & manual
    assert declared["ops.h"] | declared["ops_shape.h"] <= set(tables) | manual
    assert set(tables) | manual <= set().union(*declared.values())
    with open(os.path.join(REPO, "ops", "generated", "api_ops.c"), encoding="utf-8") as f:
        generated = f.read()
    assert all(re.search(rf"^PITH_API [^(]*\b{name}\(", generated, re.M) for name in tables)
