"""gen_ops_python.py — what the op file (ops/ops.toml) says of pith's Python API, written by
scripts/gen_ops.py beside its C (no build needed):

  - docs/python.md, between `<!-- ops-list -->` and `<!-- /ops-list -->`: the table of the
    op functions and methods, each name's signatures spelled as the binder's __doc__ spells
    them (signature_text, python_bindings/_C/binder_errors.c; tests/python/test_op_docs.py
    compares the two with a built package);
  - python_bindings/pith/__init__.pyi, between `# @begin ops-methods` / `# @end
    ops-methods` (in class Tensor) and `# @begin ops-functions` / `# @end ops-functions`:
    one declaration per overload of each op function and method, with PyTorch's stub
    types. scripts/gen_stubs.py writes the rest of that file (its hand-written HEADER, and
    the names Python defines, from the live package) and fills these blocks with
    with_stub_blocks(), so either script leaves the file the same. A name that HEADER declares
    by hand (max, zeros, ...) is left out of the blocks.

gen_ops.py hands it the op file's ops, its file reader and its schema splitter, so this
module imports no other script at load time. Standard library only.
"""
import ast
import keyword
import os
import re

DOC = "docs/python.md"
STUBS = "python_bindings/pith/__init__.pyi"


def fail(message):
    raise SystemExit(f"gen_ops.py: {message}")


# ---- schemas: the parts the Python API shows ----------------------------------------------

class Param:
    """One schema argument: `int[1]? dim=None` is type "int[]?", sized, default "None"."""

    def __init__(self, part, token, kwarg_only):
        spelling, _, default = part.partition("=")
        spelling, self.name = spelling.strip().rsplit(" ", 1)
        self.type = re.sub(r"\[\d+\]", "[]", re.sub(r"\([a-z]!?\)", "", spelling))
        self.token = token  # PITH_FORALL_ARG_TYPES' name of it, as gen_ops.py read it
        self.sized = re.search(r"\[\d+\]", spelling) is not None
        self.mutable = "!" in spelling
        self.kwarg_only = kwarg_only
        self.default = default.strip() if default else None


class Overload:
    """One row as Python binds it (overload_new, python_bindings/_C/op_objects.c)."""

    def __init__(self, row, split):
        text = row.schema.text
        self.name, self.text = row.schema.base, text
        self.returns = text[text.rindex(") -> ") + 5:].strip()
        self.params, kwarg_only = [], False
        tokens = [token for token, _ in row.schema.args]
        for part in split(text[text.index("(") + 1:text.rindex(") -> ")]):
            if part == "*":
                kwarg_only = True
            else:
                self.params.append(Param(part, tokens[len(self.params)], kwarg_only))
        self.has_self = any(p.name == "self" for p in self.params)
        # The out arguments: keyword-only mutable tensors, last (else ordinary keywords).
        outs = [i for i, p in enumerate(self.params) if p.kwarg_only and p.mutable and
                p.token in ("TENSOR", "OPT_TENSOR")]
        self.nout = len(outs) if outs and outs[0] + len(outs) == len(self.params) else 0


def overloads_of(ops, split):
    """{name: [Overload]} of every schema base name, in the op file's (the registry's)
    order; `split` is gen_ops.py's split_top_level."""
    named = {}
    for op in ops:
        for row in op.rows:
            named.setdefault(row.schema.base, []).append(Overload(row, split))
    return named


def surface(ops, named):
    """[(name, is function, is method, has Tensor.<name>_)] of every name Python shows
    (Note [The Python surface of the op table], python_bindings/_C/op_surface.c), by name."""
    rows = {op.name: op.python for op in ops if op.python}
    shown = []
    for name, variants in sorted(rows.items()):
        if variants == "internal":
            continue
        method = variants in ("both", "method")
        inplace = method and (rows.get(name + "_") in ("both", "method") or
                              (name + "_" not in rows and name + "_" in named))
        shown.append((name, variants in ("both", "function"), method, inplace))
    return shown


def method_names(ops, named):
    """Every Tensor method the binder makes: the method rows and their in-place names."""
    return sorted({n for n, _, method, _ in surface(ops, named) if method} |
                  {n + "_" for n, _, _, inplace in surface(ops, named) if inplace})


def function_names(ops, named):
    return [n for n, function, _, _ in surface(ops, named) if function]


# ---- the docs' table: signatures as the binder spells them --------------------------------

DOC_TYPES = {
    "TENSOR": "Tensor", "OPT_TENSOR": "Tensor", "TENSOR_LIST": "tuple of Tensors",
    "LIST_OPT_TENSOR": "tuple of (Tensor or None)", "INT": "int", "OPT_INT": "int",
    "INT_LIST": "tuple of ints", "OPT_INT_LIST": "tuple of ints", "FLOAT": "float",
    "OPT_FLOAT": "float", "BOOL": "bool", "OPT_BOOL": "bool", "SCALAR": "Number",
    "OPT_SCALAR": "Number", "DTYPE": "dtype", "OPT_DTYPE": "dtype", "OPT_DEVICE": "Device",
    "STR": "str", "OPT_STR": "str", "FLOAT_LIST": "tuple of floats",
    "OPT_FLOAT_LIST": "tuple of floats", "OPT_GENERATOR": "Generator",
}
# Optional types whose signature shows no `?` (signature_text).
NO_QUESTION_MARK = {"OPT_TENSOR", "OPT_DEVICE", "OPT_DTYPE", "OPT_GENERATOR"}

# Note [Overload order] (python_bindings/_C/op_objects.c): (a, b) where a is weaker than b.
WEAKER = {("SCALAR", "TENSOR"), ("OPT_SCALAR", "OPT_TENSOR"), ("INT_LIST", "INT"),
          ("INT_LIST", "OPT_INT"), ("TENSOR_LIST", "INT_LIST"), ("TENSOR_LIST", "OPT_INT_LIST"),
          ("TENSOR_LIST", "LIST_OPT_TENSOR"), ("INT", "TENSOR")}


def default_repr(ov, p):
    """repr() of the Python value the binder makes of a schema default (default_as_python)."""
    text = p.default
    if text == "None" or p.token in ("TENSOR", "OPT_TENSOR"):
        return "None"
    try:
        if p.token in ("BOOL", "OPT_BOOL") and text in ("True", "False"):
            return text
        if p.token in ("INT", "OPT_INT"):
            return repr(int(text))
        if p.token in ("FLOAT", "OPT_FLOAT"):
            return repr(float(text))
        if p.token in ("SCALAR", "OPT_SCALAR"):
            return repr(int(text) if re.fullmatch(r"-?\d+", text) else float(text))
        if p.token in ("STR", "OPT_STR"):
            return repr(ast.literal_eval(text))
        if p.token in ("INT_LIST", "OPT_INT_LIST") and text.startswith("["):
            return repr([int(v) for v in text[1:-1].split(",") if v.strip()])
    except ValueError:
        pass
    fail(f"{ov.text!r}: the docs cannot spell the default {p.name}={text}")


def doc_signature(ov, method):
    parts, star = [], False
    for p in ov.params:
        if method and p.name == "self":
            continue
        if p.kwarg_only and not star:
            star = True
            parts.append("*")
        name = "input" if (not method and p.name == "self") else p.name
        optional = p.token.startswith("OPT_")
        mark = "?" if optional and p.token not in NO_QUESTION_MARK else ""
        if p.default is not None:
            parts.append(f"{DOC_TYPES[p.token]}{mark} {name} = {default_repr(ov, p)}")
        elif optional:
            parts.append(f"{DOC_TYPES[p.token]}{mark} {name} = None")
        else:
            parts.append(f"{DOC_TYPES[p.token]} {name}")
    return "(" + ", ".join(parts) + ")"


def overload_weaker(a, b):
    na, nb = len(a.params) - a.nout, len(b.params) - b.nout
    if na != nb:
        return False
    pairs = [(a.params[i].token, b.params[i].token) for i in range(na)]
    return (all(ta == tb or (ta, tb) in WEAKER for ta, tb in pairs) and
            any(ta != tb for ta, tb in pairs))


def overloads_sort(v):
    """overloads_sort of op_objects.c, step for step (its order is what __doc__ shows)."""
    moved = True
    while moved:
        moved = False
        for i in range(len(v) - 1):
            for j in range(i + 1, len(v)):
                if overload_weaker(v[i], v[j]):
                    v.insert(j, v.pop(i))
                    moved = True
                    break
    return v


def bound_overloads(named, name, method):
    """A function's or method's overloads in the order it tries them (function_new): the
    plain ones, then the out= ones, each sorted by Note [Overload order]."""
    mine = [ov for ov in named.get(name, []) if not method or ov.has_self]
    return (overloads_sort([ov for ov in mine if not ov.nout]) +
            overloads_sort([ov for ov in mine if ov.nout]))


def docs_table(ops, named):
    lines = ["| op | `pith.` | `Tensor.` | signatures (as a function) |",
             "| --- | --- | --- | --- |"]
    for name, function, method, inplace in surface(ops, named):
        sigs = "<br>".join(f"`{doc_signature(ov, not function)}`"
                           for ov in bound_overloads(named, name, not function))
        lines.append(f"| `{name}` | {'yes' if function else '-'} | "
                     f"{'yes' if method else '-'}{f', `{name}_`' if inplace else ''} | "
                     f"{sigs} |")
    return "\n".join(lines)


def between(path, text, begin, end, body):
    """`text` with what lies between the lines `begin` and `end` replaced by `body`."""
    pattern = re.compile(re.escape(begin) + r"\n.*?" + re.escape(end), re.S)
    if not pattern.search(text):
        fail(f"{path} has no {begin.strip()!r} ... {end.strip()!r} markers")
    return pattern.sub(lambda m: f"{begin}\n{body}{end}", text, count=1)


def doc_with_ops_list(ops, named, text):
    """docs/python.md's `text` with its ops list rewritten."""
    return between(DOC, text, "<!-- ops-list -->", "<!-- /ops-list -->",
                   docs_table(ops, named) + "\n")


# ---- the stubs -----------------------------------------------------------------------------

# Schema types -> stub types. `Tensor other` also takes a Python number (weak scalar).
STUB_TYPES = {
    "Tensor": "Tensor", "Tensor[]": "Sequence[Tensor]", "Tensor?[]": "Sequence[Tensor | None]",
    "int": "_int", "int[]": "_size", "SymInt": "_int", "SymInt[]": "_size",
    "float": "_float", "float[]": "Sequence[_float]", "bool": "_bool", "str": "builtins.str",
    "Scalar": "Number", "ScalarType": "_dtype", "Device": "_device",
}
TENSOR_ONLY_OTHER = {"matmul"}  # ops whose `other` is not a weak scalar

METHODS_BEGIN = "    # @begin ops-methods: generated by scripts/gen_ops.py from ops/ops.toml"
METHODS_END = "    # @end ops-methods\n"
FUNCTIONS_BEGIN = "# @begin ops-functions: generated by scripts/gen_ops.py from ops/ops.toml"
FUNCTIONS_END = "# @end ops-functions\n"


def stub_type(ov, p):
    base, optional = p.type.rstrip("?"), p.type.endswith("?")
    text = STUB_TYPES.get(base, "Any")
    if base == "Tensor" and p.name == "other" and ov.name not in TENSOR_ONLY_OTHER:
        text = "_TensorOrNumber"
    if base == "int[]" and p.sized:
        text = "_int | _size"  # int[1] dim: one int binds it, as in PyTorch
    if optional and text != "Any":
        text += " | None"
    return text


def stub_return(ov):
    returns = ov.returns
    if returns == "()":  # before the tuples: an op that returns nothing returns None
        return "None"
    if returns.startswith("("):
        n = len([r for r in returns[1:-1].split(",") if r.strip()])
        return "tuple[" + ", ".join(["Tensor"] * n) + "]"
    if returns.startswith("Tensor") and returns.endswith("[]"):
        return "tuple[Tensor, ...]"
    if returns.startswith("Tensor"):
        return "Tensor"
    return STUB_TYPES.get(returns, "Any")


def stub_params(ov, method, varargs=False):
    """The parameter list of one overload, as a method (receiver dropped) or a function;
    with varargs, its last positional argument becomes `*name: _int` (an int[]) or `*name:
    Tensor` (a Tensor[]: See Note [Tensors as varargs])."""
    params = list(ov.params)
    out = []
    if method:
        # The receiver is the argument named self (where(condition, self, other) is
        # x.where(condition, other)).
        params = [p for p in params if p.name != "self"]
        out.append("self")
    last_positional = max((i for i, p in enumerate(params) if not p.kwarg_only), default=-1)
    keyword_only = False
    for i, p in enumerate(params):
        name = "input" if (not method and p.name == "self") else p.name
        if keyword.iskeyword(name):
            # uniform_'s `from`: callable only positionally or by **{"from": ...}, so the
            # stub names it as torch's does (from_).
            name += "_"
        if varargs and i == last_positional:
            out.append(f"*{name}: {'Tensor' if p.type == 'Tensor[]' else '_int'}")
            keyword_only = True
            continue
        if p.kwarg_only and not keyword_only:
            out.append("*")
            keyword_only = True
        out.append(f"{name}: {stub_type(ov, p)}" + (" = ..." if p.default is not None else ""))
    return out


def stub_forms(ov, method, tensor_varargs):
    """The declarations of one overload: itself, and its varargs spelling where the binder
    takes one (x.view(2, 3) for x.view((2, 3)): the int[] is the method's one positional
    argument besides self, bind_match in python_bindings/_C/binder.c; meshgrid(a, b))."""
    positional = [p for p in ov.params if not p.kwarg_only]
    forms = [stub_params(ov, method)]
    if method and len(positional) == 2 and positional[-1].type == "int[]":
        forms.append(stub_params(ov, method, varargs=True))
    if not method and tensor_varargs and positional and positional[-1].type == "Tensor[]":
        forms.append(stub_params(ov, method, varargs=True))
    return forms


def render_def(name, params, returns, indent, overload):
    lines = [indent + "@overload"] if overload else []
    return lines + [f"{indent}def {name}({', '.join(params)}) -> {returns}: ..."]


def stub_lines(named, name, method, tensor_varargs, indent):
    """The declarations of a function or method: one per overload of its name, in the op
    file's order, without the out= ones (as the Python API) and, for a method, without
    those that have no `self` (as the binder's function_new)."""
    forms = []
    for ov in named[name]:
        if any(p.kwarg_only and p.mutable for p in ov.params) or (method and not ov.has_self):
            continue
        forms += [(params, stub_return(ov)) for params in stub_forms(ov, method, tensor_varargs)]
    lines = []
    for params, returns in forms:
        lines += render_def(name, params, returns, indent, len(forms) > 1)
    return lines


def hand_written_names():
    """(top-level names, Tensor members) that scripts/gen_stubs.py's HEADER declares by hand:
    the call forms the schemas do not spell (max, split, the factories, ...)."""
    import sys
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import gen_stubs  # standard library only at load time
    return gen_stubs.defined_names(gen_stubs.HEADER), \
        gen_stubs.defined_names(gen_stubs.HEADER, "Tensor")


def stub_blocks(ops, named):
    """(methods block, functions block): the lines between the markers, each ending in a
    newline (or empty)."""
    varargs = {op.name for op in ops if op.varargs}
    top, members = hand_written_names()
    methods, functions = [], []
    for name in method_names(ops, named):
        if name not in members:
            methods += stub_lines(named, name, True, False, "    ")
    for name in function_names(ops, named):
        if name not in top:
            functions += stub_lines(named, name, False, name in varargs, "")
    return ("".join(line + "\n" for line in methods),
            "".join(line + "\n" for line in functions))


def with_stub_blocks(ops, named, text):
    """The stub file's `text` with its two op blocks rewritten."""
    methods, functions = stub_blocks(ops, named)
    text = between(STUBS, text, METHODS_BEGIN, METHODS_END, methods)
    return between(STUBS, text, FUNCTIONS_BEGIN, FUNCTIONS_END, functions)


def outputs(ops, read, split):
    """{path: text} of the files gen_ops.py writes for Python; `read` and `split` are its
    read and split_top_level."""
    named = overloads_of(ops, split)
    return {DOC: doc_with_ops_list(ops, named, read(DOC)),
            STUBS: with_stub_blocks(ops, named, read(STUBS))}
