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
