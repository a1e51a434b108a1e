"""The type stubs (pith/__init__.pyi, pith/nn/*.pyi) and py.typed: they parse, declare every
public name of the live package, are what scripts/gen_stubs.py writes, and (when mypy is
installed) type-check typed code that uses pith and reject wrong code."""
import ast
import inspect
import os
import subprocess
import sys
import textwrap

import pytest

import pith
import pith.nn
from _scripts import load_script

PACKAGE = os.path.dirname(os.path.realpath(pith.__file__))
# The checkout these tests belong to (tests/python/ -> the repository), which holds the
# generator and the source stubs whether pith is installed or on PYTHONPATH.
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
SOURCE_PACKAGE = os.path.join(REPO, "python_bindings", "pith")

# Dunders of pith.Tensor that are not part of its typed API.
NOT_API_DUNDERS = {"__dict__", "__doc__", "__module__", "__new__", "__init__", "__repr__",
                   "__str__", "__weakref__", "__getattribute__", "__setattr__", "__delattr__",
                   "__sizeof__", "__reduce__", "__getstate__", "__dir__", "__init_subclass__",
                   "__subclasshook__", "__class__", "__slots__", "__slotnames__"}


def stub_tree(relative):
    with open(os.path.join(PACKAGE, relative)) as f:
        return ast.parse(f.read(), filename=relative)


def top_level_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, ast.Assign):
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update(a.asname for a in node.names if a.asname)
    return names


def class_members(tree, name):
    """Names declared in stub class `name`, including those of its bases in the same file."""
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    members, queue = set(), [name]
    while queue:
        node = classes.get(queue.pop())
        if node is None:
            continue
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.ClassDef)):
                members.add(item.name)
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                members.add(item.target.id)
            elif isinstance(item, ast.Assign):
                members.update(t.id for t in item.targets if isinstance(t, ast.Name))
        # Generic bases (Dataset[_T_co]) are followed too.
        bases = [b.value if isinstance(b, ast.Subscript) else b for b in node.bases]
        queue += [b.id for b in bases if isinstance(b, ast.Name)]
    return members


def public(names):
    return {n for n in names if not n.startswith("_")}


def stub_files():
    for root, _, files in os.walk(PACKAGE):
        for f in files:
            if f.endswith(".pyi"):
                yield os.path.relpath(os.path.join(root, f), PACKAGE)


# ---- the files ---------------------------------------------------------------------------

def test_stub_files_parse():
    files = sorted(stub_files())
    assert {"__init__.pyi", "_C.pyi", os.path.join("nn", "__init__.pyi"),
            os.path.join("nn", "functional.pyi")} <= set(files)
    for relative in files:
        stub_tree(relative)


def test_py_typed_marker_is_in_the_package():
    # scikit-build-core copies every file of python_bindings/pith into the wheel
    # (wheel.packages), so what is beside __init__.py here ships.
    assert os.path.isfile(os.path.join(PACKAGE, "py.typed"))
    assert os.path.isfile(os.path.join(PACKAGE, "__init__.pyi"))


# ---- completeness ------------------------------------------------------------------------

def test_every_public_name_of_pith_is_declared():
    missing = public(dir(pith)) - top_level_names(stub_tree("__init__.pyi"))
    assert not missing, f"run scripts/gen_stubs.py: {sorted(missing)}"


def test_every_public_tensor_attribute_is_declared():
    runtime = public(dir(pith.Tensor))
    runtime |= {n for n in vars(pith.Tensor) if n.startswith("__")} - NOT_API_DUNDERS
    missing = runtime - class_members(stub_tree("__init__.pyi"), "Tensor")
    assert not missing, f"run scripts/gen_stubs.py: {sorted(missing)}"


def test_every_public_name_of_pith_nn_is_declared():
    # Submodules imported as a side effect (pith.nn.modules) are not API unless in __all__.
    names = {n for n in public(dir(pith.nn))
             if not inspect.ismodule(getattr(pith.nn, n)) or n in pith.nn.__all__}
    missing = names - top_level_names(stub_tree(os.path.join("nn", "__init__.pyi")))
    assert not missing, f"add to pith/nn/__init__.pyi: {sorted(missing)}"


@pytest.mark.parametrize("module", ["functional", "init", "parallel"])
def test_every_public_function_of_nn_submodules_is_declared(module):
    runtime = getattr(pith.nn, module)
    names = {n for n in public(dir(runtime))
             if getattr(getattr(runtime, n), "__module__", None) == runtime.__name__}
    missing = names - top_level_names(stub_tree(os.path.join("nn", module + ".pyi")))
    assert not missing, f"add to pith/nn/{module}.pyi: {sorted(missing)}"


def nn_classes():
    return sorted(n for n in public(dir(pith.nn)) if inspect.isclass(getattr(pith.nn, n)))


@pytest.mark.parametrize("name", nn_classes())
def test_every_public_method_of_nn_classes_is_declared(name):
    cls = getattr(pith.nn, name)
    runtime = {n for n in public(dir(cls)) if not n.startswith("_")}
    if issubclass(cls, pith.Tensor):
        runtime -= public(dir(pith.Tensor))  # declared on Tensor
    runtime |= {n for c in cls.__mro__ if c.__module__.startswith("pith.nn")
                for n in vars(c) if n in ("__call__", "__getitem__", "__len__", "__iter__",
                                          "__contains__", "__setitem__", "__delitem__")}
    missing = runtime - class_members(stub_tree(os.path.join("nn", "__init__.pyi")), name)
    assert not missing, f"add to class {name} in pith/nn/__init__.pyi: {sorted(missing)}"


def data_module():
    import pith.utils.data
    return pith.utils.data


def test_every_public_name_of_pith_overrides_is_declared():
    import pith.overrides
    names = public(dir(pith.overrides)) - {"Tensor"}
    tree = stub_tree("overrides.pyi")
    missing = names - top_level_names(tree)
    assert not missing, f"add to pith/overrides.pyi: {sorted(missing)}"
    assert set(pith.overrides.__all__) <= top_level_names(tree)


def test_every_public_name_of_pith_utils_and_pith_utils_data_is_declared():
    utils = public(dir(pith.utils)) | {"data"}  # pith.utils.data is imported on first use
    missing = utils - top_level_names(stub_tree(os.path.join("utils", "__init__.pyi")))
    assert not missing, f"add to pith/utils/__init__.pyi: {sorted(missing)}"
    data = data_module()
    names = {n for n in public(dir(data)) if not inspect.ismodule(getattr(data, n))}
    missing = names - top_level_names(stub_tree(os.path.join("utils", "data", "__init__.pyi")))
    assert not missing, f"add to pith/utils/data/__init__.pyi: {sorted(missing)}"


@pytest.mark.parametrize("name", sorted(n for n in public(dir(data_module()))
                                        if inspect.isclass(getattr(data_module(), n))))
def test_every_public_method_of_data_classes_is_declared(name):
    cls = getattr(data_module(), name)
    runtime = public(dir(cls)) | {n for c in cls.__mro__ if c.__module__.startswith("pith.utils")
                                  for n in vars(c) if n in ("__getitem__", "__getitems__",
                                                            "__len__", "__iter__", "__add__")}
    stub = stub_tree(os.path.join("utils", "data", "__init__.pyi"))
    missing = runtime - class_members(stub, name)
    assert not missing, f"add to class {name} in pith/utils/data/__init__.pyi: {sorted(missing)}"


def test_generated_stubs_are_up_to_date():
    generated = load_script("gen_stubs").generate(pith)
    for name, text in generated.items():
        for package in {PACKAGE, SOURCE_PACKAGE}:  # the source, and what was installed
            with open(os.path.join(package, name)) as f:
                assert f.read() == text, f"{package}/{name} is stale: run scripts/gen_stubs.py"


# ---- mypy --------------------------------------------------------------------------------

GOOD = '''
import copy
import pickle

import pith
from pith import nn
from pith.nn import functional as F

x: pith.Tensor = pith.zeros(2, 3)
y = pith.ones((2, 3), dtype=pith.float64)
z = (x + y) * 2 - 1.5
z += 1
shape: pith.Size = z.shape
rows: int = z.size(0)
total = z.view(3, 2).sum(dim=0, keepdim=True).reshape(-1)
values, indices = z.max(dim=1)
first: float = float(z[0, 1])
positive: bool = bool((z > 0).all())
kind: pith.dtype = z.dtype
parts: tuple[pith.Tensor, ...] = z.split(1)
as_list: object = z.tolist()
w = pith.cat([x, y], dim=0).t() @ pith.randn(2, 4)
c = copy.deepcopy(z)
p = pickle.loads(pickle.dumps(z))
pith.set_printoptions(precision=2, sci_mode=False)

model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
out: pith.Tensor = model(x)
probs = F.softmax(out, dim=-1)
loss: pith.Tensor = F.cross_entropy(out, pith.tensor([0, 1]))
weights: list[nn.Parameter] = list(model.parameters())
state = model.state_dict()
model.load_state_dict(state)
model.eval()
model.requires_grad_(False).zero_grad()
handle = model.register_forward_hook(lambda module, args, output: None, always_call=True)
handle.remove()
criterion = nn.CrossEntropyLoss(label_smoothing=0.1)
loss2: pith.Tensor = criterion(out, pith.tensor([0, 1])) + F.mse_loss(out, out)
attended: pith.Tensor = F.scaled_dot_product_attention(x, x, x, is_causal=True, scale=0.5)
wrapped = nn.DataParallel(model)
inner: nn.Sequential = wrapped.module

device = pith.device("cuda" if pith.cuda.is_available() else "cpu")
on_device: pith.Tensor = pith.zeros(2, device=device).to(device).cpu()
kind_name: str = on_device.type()
with pith.no_grad():
    out = model(x)
with pith.inference_mode():
    inferred: bool = model(x).is_inference()


@pith.no_grad()
def predict(input: pith.Tensor) -> pith.Tensor:
    return input * 2


@pith.inference_mode
def infer(input: pith.Tensor) -> pith.Tensor:
    return input + 1


predicted: pith.Tensor = predict(x) + infer(x)
enabled: bool = pith.is_grad_enabled() and pith.backends.mps.is_available()
pith.backends.cudnn.benchmark = True


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 1)

    def forward(self, input: pith.Tensor) -> pith.Tensor:
        return pith.sigmoid(self.fc(input))
'''

BAD = '''
import pith

x = pith.zeros(2, 3)
a: str = x.sum()
b = x.view("2, 3")
c: int = x.shape[0:1]
d = pith.zeros(2).no_such_method()
e = pith.nn.Linear("3", 4)
'''


def run_mypy(tmp_path, source):
    pytest.importorskip("mypy")
    (tmp_path / "usage.py").write_text(textwrap.dedent(source))
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    # An installed pith (site-packages, with py.typed) is found by mypy itself, which refuses
    # site-packages in MYPYPATH; a development layout on PYTHONPATH is given explicitly.
    if "site-packages" not in PACKAGE:
        env["MYPYPATH"] = os.path.dirname(PACKAGE)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", "--show-error-codes",
         "--cache-dir", str(tmp_path / "cache"), "usage.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True)
    return result.stdout + result.stderr


def test_mypy_accepts_typed_code_using_pith(tmp_path):
    output = run_mypy(tmp_path, GOOD)
    assert output.strip() == ""


def test_mypy_rejects_wrong_uses_of_pith(tmp_path):
    output = run_mypy(tmp_path, BAD)
    flagged = {int(line.split(":")[1]) for line in output.splitlines()
               if line.startswith("usage.py:") and ": error:" in line}
    # Lines 5 to 9 of BAD each misuse the API; nothing else is an error.
    assert flagged == {5, 6, 7, 8, 9}, output


# ---- pith.nn.utils and pith.optim.lr_scheduler -------------------------------------------

@pytest.mark.parametrize("module", ["", ".parametrize", ".parametrizations"])
def test_every_public_name_of_pith_nn_utils_is_declared(module):
    import importlib
    runtime = importlib.import_module("pith.nn.utils" + module)
    relative = os.path.join("nn", "utils", (module[1:] or "__init__") + ".pyi")
    missing = set(runtime.__all__) - top_level_names(stub_tree(relative))
    assert not missing, f"add to pith/{relative}: {sorted(missing)}"


# Listed rather than read from the package at collection: importing pith.optim then would
# change dir(pith) for the tests above.
LR_SCHEDULERS = ["LRScheduler", "_LRScheduler", "LambdaLR", "MultiplicativeLR", "StepLR",
                 "MultiStepLR", "ConstantLR", "LinearLR", "ExponentialLR", "SequentialLR",
                 "CosineAnnealingLR", "ChainedScheduler", "ReduceLROnPlateau", "CyclicLR",
                 "CosineAnnealingWarmRestarts", "OneCycleLR", "PolynomialLR"]


def test_the_lr_scheduler_list_is_complete():
    import pith.optim.lr_scheduler as lr_scheduler
    assert sorted(LR_SCHEDULERS) == sorted([*lr_scheduler.__all__, "_LRScheduler"])


@pytest.mark.parametrize("name", LR_SCHEDULERS)
def test_every_public_method_of_lr_schedulers_is_declared(name):
    import pith.optim.lr_scheduler as lr_scheduler
    stub = stub_tree(os.path.join("optim", "lr_scheduler.pyi"))
    assert name in top_level_names(stub)
    cls = getattr(lr_scheduler, name)
    runtime = {n for c in cls.__mro__ if c is not object for n, v in vars(c).items()
               if not n.startswith("_") and callable(v)}
    missing = runtime - class_members(stub, name)
    assert not missing, f"add to class {name} in pith/optim/lr_scheduler.pyi: {sorted(missing)}"
