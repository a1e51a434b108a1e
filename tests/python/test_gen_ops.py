"""scripts/gen_ops.py, the op file's generator: it derives the out= and in-place forms, and it
refuses an op file that is wrong (an unknown key or kind, a schema type the C parser does not
know, a duplicate, a derivative that names what the overload does not have) with a message
that names the op. Note [The op file] (ops/ops.toml) describes the format."""
import importlib.util
import os

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


@pytest.fixture(scope="module")
def gen():
    spec = importlib.util.spec_from_file_location(
        "gen_ops", os.path.join(REPO, "scripts", "gen_ops.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def load(gen, tmp_path, monkeypatch):
    """Loads an op file made of `text` (in a scratch tree) and returns (ops, rows)."""
    def run(text):
        (tmp_path / "ops").mkdir(exist_ok=True)
        (tmp_path / "ops" / "ops.toml").write_text(text)
        monkeypatch.setattr(gen, "ROOT", str(tmp_path))
        return gen.load()
    return run


MUL = '''
[op.mul]
family = "binary"
python = "both"
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


@pytest.mark.parametrize("entry,message", [
    ('[derivatives."mul.Tensor"]\nself = "mul(grad, other)"\nother = "mul(grad, self)"\n'
     'saves = ["self", "other"]\n', None),
    ('[derivatives."mul.Scalar"]\nself = "grad"\n', "no such overload"),
    ('[derivatives."mul.Tensor"]\nalpha = "grad"\n', "'alpha' is not a Tensor argument"),
    ('[derivatives."mul.Tensor"]\nself = "frobnicate(grad, other)"\nsaves = ["other"]\n',
     "'frobnicate' is not an op"),
    ('[derivatives."mul.Tensor"]\nself = "mul(grad, weight)"\n', "unknown name 'weight'"),
    ('[derivatives."mul.Tensor"]\nself = "mul(grad, other)"\n',
     "saves [] but the formulas read ['other']"),
])
def test_the_derivatives_section_is_checked(load, entry, message):
    if message is None:
        load(MUL + entry)
        return
    with pytest.raises(SystemExit) as raised:
        load(MUL + entry)
    assert message in str(raised.value)


def test_the_generated_files_are_current(gen):
    """What ctest's Ops.GeneratedFilesAreCurrent checks, from Python too."""
    assert gen.main(["--check"]) == 0


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
