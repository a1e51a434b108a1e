"""gen_autograd.py — writes the autograd layer's kernels and nodes from the op file's
derivatives section (See Note [The derivatives section], ops/ops.toml, and Note [Generated
autograd kernels], autograd/register.c).

gen_ops.py calls outputs(), so `python3 scripts/gen_ops.py` writes these files with the
others and `--check` finds them stale. For each overload with formulas it writes a node (a
struct named as PyTorch names the class, MulBackward0, with its apply, release_saved and
vtable) and the autograd kernel <id>_autograd of the overload and of its in-place form;
an out= form gets a kernel that refuses to record. Standard library only.

    python3 scripts/gen_autograd.py                 # what gets a node, a kernel, a record
    python3 scripts/gen_autograd.py --torch-names   # compares every node name with the
                                                    # grad_fn name torch gives the overload
                                                    # on the formula test's samples (needs
                                                    # torch)
"""
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_derivatives import Helper, outputs_of, parse_formula, reads, token_kind  # noqa: E402

# A generated file is split when it passes this many lines (one op's code stays together).
FILE_BUDGET = 2500

# What this script takes from gen_ops.py: its error exit, and how it writes C signatures,
# argument lists and file headers.
CWriting = collections.namedtuple("CWriting", "fail c_names signature c_file")

# ---- which overload gets what -----------------------------------------------------------


def camel(name):
    return "".join(part[:1].upper() + part[1:] for part in name.strip("_").split("_"))


def node_name(d):
    """PyTorch's class name of the node of a formula entry: `node` of the entry, else
    CamelCase(base) + "Backward0"."""
    return d.node or camel(d.row.schema.base) + "Backward0"


def kernel_node_name(row, d):
    """The name of the node that the kernel of `row` records with d's formulas: a derived
    in-place form's may be its own (inplace_node: EluBackward1 of elu_)."""
    return d.inplace_node if row.form == "inplace" and d.inplace_node else node_name(d)


def is_inplace(row):
    """An overload that writes `self` (add_, gelu_, copy_), as against an out= form."""
    return row.schema.mutates and row.schema.base.endswith("_")


class Plan:
    """What each overload gets: a node (the formula entries), an autograd kernel (the
    formula entries and their in-place and out= forms, and the in-place forms of the
    not_differentiable ones), or its composite record at Autograd (composite_implicit and
    its forms)."""

    def __init__(self, rows, fail):
        by_name = {r.schema.full_name: r for r in rows}
        self.nodes = []       # formula Derivatives, in the op file's order
        self.kernels = []     # (row, "functional" | "inplace" | "out", Derivative)
        self.not_implemented = []  # in-place rows that record PyTorch's NotImplemented
        self.composite = []   # rows registered with their CPU record
        self.skipped = []     # (row, reason)
        for row in rows:
            d = row.derivative
            if d.kind == "formula":
                self.nodes.append(d)
                form = "inplace" if row.schema.mutates else "functional"
                if row.schema.mutates and not is_inplace(row):
                    fail(f"[derivatives.{row.schema.full_name!r}]: an out= overload takes the "
                         f"formulas of its functional overload (form_of)")
                self.kernels.append((row, form, d))
                continue
            target = by_name[d.target].derivative if d.kind in ("derived", "form_of") else d
            if target.kind == "composite_implicit":
                self.composite.append(row)
            elif target.kind == "formula":
                self.kernels.append((row, "inplace" if is_inplace(row) else "out", target))
            elif is_inplace(row) and target.inplace == "zeros":
                self.nodes.append(target.inplace_formulas)
                self.kernels.append((row, "inplace", target.inplace_formulas))
            elif is_inplace(row) and target.inplace == "not_implemented":
                self.not_implemented.append(row)
            else:
                self.skipped.append((row, target.reason))
        names = {}
        for name, d in [(node_name(d), d) for d in self.nodes] + \
                [(d.inplace_node, d) for d in self.nodes if d.inplace_node]:
            if name in names:
                fail(f"[derivatives.{d.overload!r}]: its node is {name}, as {names[name]}'s is; "
                     f"give one of them node = \"<PyTorch's class name>\"")
            names[name] = d.overload


# ---- C values of a formula --------------------------------------------------------------
# A formula expression becomes a C expression of one representation:
#   tensor   pith_tensor *            tensors  pith_tensor_list
#   int      int64_t                  double   double          bool  bool
#   scalar   pith_scalar (kind NONE for a None Scalar?)
#   optint   pith_opt_int             optdouble pith_opt_double optbool pith_opt_bool
#   ints     pith_int_list            optints  pith_opt_int_list
#   str      const char * (NULL: None) dtype    pith_dtype      optdtype pith_opt_dtype
#   none     the literal None
REP_OF_TOKEN = {
    "TENSOR": "tensor", "OPT_TENSOR": "tensor", "TENSOR_LIST": "tensors",
    "LIST_OPT_TENSOR": "tensors", "INT": "int", "OPT_INT": "optint", "FLOAT": "double",
    "OPT_FLOAT": "optdouble", "BOOL": "bool", "OPT_BOOL": "optbool", "SCALAR": "scalar",
    "OPT_SCALAR": "scalar", "INT_LIST": "ints", "OPT_INT_LIST": "optints", "STR": "str",
    "OPT_STR": "str", "DTYPE": "dtype", "OPT_DTYPE": "optdtype",
}
# A node's field for a by-value argument, and how apply reads it (the field is n->x_).
FIELD = {
    "INT": ("int64_t", "{f}"), "OPT_INT": ("pith_opt_int", "{f}"),
    "FLOAT": ("double", "{f}"), "OPT_FLOAT": ("pith_opt_double", "{f}"),
    "BOOL": ("bool", "{f}"), "OPT_BOOL": ("pith_opt_bool", "{f}"),
    "SCALAR": ("pith_scalar", "{f}"), "OPT_SCALAR": ("pith_scalar", "{f}"),
    "DTYPE": ("pith_dtype", "{f}"), "OPT_DTYPE": ("pith_opt_dtype", "{f}"),
    "INT_LIST": ("ag_ints", "ag_ints_list(&{f})"),
    "OPT_INT_LIST": ("ag_ints", "ag_ints_opt(&{f})"),
    "STR": ("ag_str", "ag_str_get(&{f})"), "OPT_STR": ("ag_str", "ag_str_get(&{f})"),
}
# How the kernel copies a by-value argument into the node: a statement, or a call that
# returns a status.
SAVE_BY_VALUE = {"INT_LIST": "ag_ints_copy", "OPT_INT_LIST": "ag_ints_copy_opt",
                 "STR": "ag_str_copy", "OPT_STR": "ag_str_copy"}
# A let's C type in the values struct, by its kind, and how it is read.
LET_TYPES = {"tensor": ("pith_tensor *", "tensor"), "number": ("pith_scalar", "scalar"),
             "ints": ("ag_ints", "ints")}
RESERVED = {"node", "grads", "out", "n", "v", "status"}


class V:
    """A formula value in C: its representation, a C expression, and the temporaries it
    owns (released once the value is consumed)."""

    def __init__(self, rep, expr, temps=(), owner=None):
        self.rep, self.expr, self.temps = rep, expr, list(temps)
        self.owner = owner  # of a new list: the ag_tensors that holds it


def c_string(text):
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def c_double(value):
    text = repr(float(value))
    return text if re.search(r"[.eEn]", text) else text + ".0"


class GenError(Exception):
    pass


class Function:
    """The body of one C function of a node (apply, or a let): statements, temporaries and
    what it reads. Every failing step sets `status` and jumps to `done`, which releases the
    temporaries."""

    def __init__(self, node, indent=1):
        self.node = node          # the NodeGen
        self.lines = []
        self.indent = indent
        self.decls = []           # (declaration, release statement or None)
        self.counter = 0
        self.gotos = False
        self.calls = False        # uses res_[]
        self.uses = set()         # 'n', 'grad...' names
        # The lets and saved tensors made ready on every path to the current line: a later
        # read in the same block needs no second check (a branch's are forgotten after it).
        self.ready = set()

    # -- emission --
    def emit(self, line):
        self.lines.append("    " * self.indent + line)

    def check(self, call):
        self.emit(f"if ((status = {call}) != PITH_OK)")
        self.emit("    goto done;")
        self.gotos = True

    def temp(self, kind, prefix=None):
        self.counter += 1
        if kind == "tensor":
            name = f"{prefix or 'tmp'}{self.counter}"
            self.decls.append((f"pith_tensor *{name} = NULL;", f"pith_release({name});"))
        elif kind == "tensors":
            name = f"list{self.counter}"
            self.decls.append((f"ag_tensors {name} = {{0}};", f"ag_tensors_release(&{name});"))
        elif kind == "ints":
            name = f"ints{self.counter}"
            self.decls.append((f"ag_ints {name} = {{0}};", f"ag_ints_release(&{name});"))
        else:
            name = f"{prefix}{self.counter}"
            self.decls.append((f"{kind}{'' if kind.endswith('*') else ' '}{name};", None))
        return name

    def array(self, ctype, count, prefix):
        self.counter += 1
        name = f"{prefix}{self.counter}"
        self.decls.append((f"{ctype}{'' if ctype.endswith('*') else ' '}{name}[{count}];", None))
        return name

    def release(self, temps):
        for kind, name in temps:
            if kind == "tensor":
                self.emit(f"ag_drop(&{name});")
            elif kind == "tensors":
                self.emit(f"ag_tensors_release(&{name});")
            elif kind == "ints":
                self.emit(f"ag_ints_release(&{name});")

    def n(self):
        self.uses.add("n")
        return "n"

    # -- names --
    def name(self, name):
        ng = self.node
        if name in ng.grad_names:
            self.uses.add(name)
            return V("tensor", name)
        if name == "grads":
            return V("tensors", "ag_grads_list(grads, node->num_inputs)")
        ready = name in self.ready
        self.ready.add(name)
        if name in ng.let_kinds:
            ctype, rep = LET_TYPES[ng.let_kinds[name]]
            if not ready:
                self.check(f"{ng.name}_let_{name}(node, grads, v)")
            return V(rep, f"v->{name}" if rep != "ints" else f"ag_ints_list(&v->{name})")
        if name in ng.saved_tensors:
            var = ng.ref(name)
            if not ready:
                self.check_unpack(f"!{var} && ", f"ag_unpack(&{self.n()}->{name}_, node, &{var})")
            return V("tensor", var)
        if name in ng.saved_lists:
            var = ng.ref(name)
            if not ready:
                self.check_unpack(f"!{var}.data && ",
                                  f"ag_unpack_list(&{self.n()}->{name}_, node, &{var})")
            return V("tensors", f"ag_tensors_list(&{var})")
        if name in ng.by_value:
            token = ng.by_value[name]
            return V(REP_OF_TOKEN[token], FIELD[token][1].format(f=f"{self.n()}->{name}_"))
        raise GenError(f"{ng.d.overload}: {name!r} is read but neither saved nor a gradient")

    def check_unpack(self, guard, call):
        self.emit(f"if ({guard}(status = {call}) != PITH_OK)")
        self.emit("    goto done;")
        self.gotos = True

    # -- expressions --
    def compile(self, node):
        tag = node[0]
        if tag == "num":
            if isinstance(node[1], float):
                return V("double", c_double(node[1]))
            return V("int", str(node[1]))
        if tag == "const":
            return V("none", None) if node[1] is None else V("bool", "true" if node[1] else "false")
        if tag == "str":
            return V("str", c_string(node[1]))
        if tag == "name":
            return self.name(node[1])
        if tag == "list":
            kind = self.node.kind(node)
            return self.list_value(node, "TENSOR_LIST" if kind == "tensors" else "INT_LIST")
        if node[1] == "case":
            token = {"tensor": "TENSOR", "number": "SCALAR"}.get(self.node.kind(node))
            if token is None:
                raise GenError(f"{self.node.d.overload}: a case giving {self.node.kind(node)}")
            return self.case(node, token)
        target, _ = self.node.calls[id(node)]
        if isinstance(target, Helper):
            return self.helper(node)
        return self.op(node)

    def list_value(self, node, token):
        items = node[1]
        if not items:
            return V("ints" if token == "INT_LIST" else "tensors",
                     "(pith_int_list){NULL, 0}" if token == "INT_LIST" else
                     "(pith_tensor_list){NULL, 0}")
        element = "INT" if token in ("INT_LIST", "OPT_INT_LIST") else "OPT_TENSOR"
        ctype = "int64_t" if element == "INT" else "const pith_tensor *"
        values = [self.arg(item, element) for item in items]
        array = self.array(ctype, len(items), "items")
        for i, (expr, _) in enumerate(values):
            self.emit(f"{array}[{i}] = {expr};")
        temps = [t for _, ts in values for t in ts]
        if element == "INT":
            return V("ints", f"(pith_int_list){{{array}, {len(items)}}}", temps)
        return V("tensors", f"(pith_tensor_list){{{array}, {len(items)}}}", temps)

    def arg(self, node, token):
        """(C expression of `node` as an argument of type `token`, its temporaries)."""
        if node[0] == "call" and node[1] == "case":
            return self.convert(self.case(node, token), token)
        if node[0] == "list" and token in ("INT_LIST", "OPT_INT_LIST", "TENSOR_LIST",
                                           "LIST_OPT_TENSOR"):
            return self.convert(self.list_value(node, token), token)
        return self.convert(self.compile(node), token)

    def convert(self, v, token):
        rep, e, temps = v.rep, v.expr, v.temps
        want = REP_OF_TOKEN.get(token)
        if token in ("TENSOR", "OPT_TENSOR"):
            if rep == "tensor":
                return e, temps
            if rep == "none" and token == "OPT_TENSOR":
                return "NULL", temps
            scalar, _ = self.convert(v, "SCALAR")
            name = self.temp("tensor", "number")
            self.check(f"ag_wrap(&{name}, {scalar})")
            return name, temps + [("tensor", name)]
        if token in ("SCALAR", "OPT_SCALAR"):
            if rep == "none" and token == "OPT_SCALAR":
                return "scalar_none()", temps
            wrap = {"int": "scalar_from_int({})", "double": "scalar_from_double({})",
                    "bool": "ag_scalar_from_bool({})", "scalar": "{}"}
            if rep in wrap:
                return wrap[rep].format(e), temps
        if token == "INT":
            # An int? reaches an int parameter only inside a case() that ruled None out.
            wrap = {"int": "{}", "scalar": "ag_scalar_to_int({})", "bool": "(int64_t)({})",
                    "optint": "{}.value"}
            if rep in wrap:
                return wrap[rep].format(e), temps
        if token == "FLOAT":
            wrap = {"double": "{}", "int": "(double)({})", "scalar": "scalar_to_double({})"}
            if rep in wrap:
                return wrap[rep].format(e), temps
        if token == "BOOL":
            wrap = {"bool": "{}", "scalar": "ag_scalar_to_bool({})"}
            if rep in wrap:
                return wrap[rep].format(e), temps
        optional = {"OPT_INT": ("pith_opt_int", "int", "INT"),
                    "OPT_FLOAT": ("pith_opt_double", "double", "FLOAT"),
                    "OPT_BOOL": ("pith_opt_bool", "bool", "BOOL")}
        if token in optional:
            ctype, plain, inner = optional[token]
            if rep == want:
                return e, temps
            if rep == "none":
                return f"({ctype}){{false, 0}}", temps
            value, _ = self.convert(v, inner)
            return f"({ctype}){{true, {value}}}", temps
        if token in ("INT_LIST", "OPT_INT_LIST"):
            if rep == want:
                return e, temps
            if rep == "none" and token == "OPT_INT_LIST":
                return "(pith_opt_int_list){false, {NULL, 0}}", temps
            if rep in ("int", "scalar"):
                value, _ = self.convert(v, "INT")
                array = self.array("int64_t", 1, "one")
                self.emit(f"{array}[0] = {value};")
                e, rep = f"(pith_int_list){{{array}, 1}}", "ints"
            if rep == "ints":
                return (e if token == "INT_LIST" else f"(pith_opt_int_list){{true, {e}}}"), temps
        if token in ("STR", "OPT_STR"):
            if rep == "str":
                return e, temps
            if rep == "none" and token == "OPT_STR":
                return "NULL", temps
        if token in ("TENSOR_LIST", "LIST_OPT_TENSOR") and rep == "tensors":
            return e, temps
        if token == "DTYPE" and rep == "dtype":
            return e, temps
        if token == "OPT_DTYPE":
            if rep in ("optdtype", "dtype"):
                return (e if rep == "optdtype" else f"(pith_opt_dtype)({e})"), temps
            if rep == "none":
                return "-1", temps
        if token == "OPT_DEVICE" and rep == "none":
            return "-1", temps
        if token == "OPT_GENERATOR" and rep == "none":
            return "NULL", temps
        raise GenError(f"{self.node.d.overload}: cannot pass a {rep} value as {token}")

    def default(self, schema, token, name):
        if name not in schema.defaults:
            raise GenError(f"{self.node.d.overload}: {schema.full_name}'s {name} has no value")
        return self.arg(parse_formula(schema.defaults[name]), token)

    def op(self, node, dest=None):
        row, bound = self.node.calls[id(node)]
        args, temps = [], []
        for token, name in row.schema.args:
            expr, ts = (self.arg(bound[name], token) if name in bound else
                        self.default(row.schema, token, name))
            args.append(expr)
            temps += ts
        self.calls = True
        self.check(f"pith_call_{row.id}(res_{''.join(', ' + a for a in args)})")
        returns = re.sub(r"\([a-z]!?\)", "", row.schema.returns)
        if returns == "Tensor":
            target = dest or self.temp("tensor")
            self.emit(f"{target} = res_[0].u.t;")
            result = V("tensor", target, [] if dest else [("tensor", target)])
        else:
            target = self.temp("tensors")
            self.emit(f"{target}.data = res_[0].u.tensors.data;")
            self.emit(f"{target}.n = res_[0].u.tensors.n;")
            result = V("tensors", f"ag_tensors_list(&{target})", [("tensors", target)], target)
        self.release(temps)
        return result

    def helper(self, node, dest=None):
        helper, bound = self.node.calls[id(node)]
        args, temps = [], []
        for token, name in helper.schema.args:
            if name in helper.metadata:
                expr, ts = self.metadata_arg(bound[name], token)
            else:
                expr, ts = self.arg(bound[name], token)
            args.append(expr)
            temps += ts
        call = f"ag_{helper.name}"
        if helper.kind == "number":
            target = self.temp("int64_t", "count")
            self.emit(f"{target} = {call}({', '.join(args)});")
            self.release(temps)
            return V("int", target)
        kind = {"ints": "ints", "tensor": "tensor", "tensors": "tensors"}[helper.kind]
        target = dest or self.temp(kind)
        self.check(f"{call}(&{target}, {', '.join(args)})")
        self.release(temps)
        owned = [] if dest else [(kind, target)]
        if kind == "ints":
            return V("ints", f"ag_ints_list(&{target})", owned)
        if kind == "tensors":
            return V("tensors", f"ag_tensors_list(&{target})", owned, target)
        return V("tensor", target, owned)

    def metadata_arg(self, node, token):
        """A helper's metadata parameter: a saved ag_saved_metadata's Meta tensor and
        device, or any tensor and its own device (See Note [Backward helpers in C])."""
        ng = self.node
        if node[0] == "name" and node[1] in ng.saved_metadata:
            field = f"{self.n()}->{node[1]}_"
            if token == "TENSOR":
                return f"{field}.meta, {field}.device", []
            return f"ag_metadata_list(&{field})", []
        expr, temps = self.arg(node, token)
        if token == "TENSOR":
            return f"{expr}, {expr}->device", temps
        return expr, temps

    def case(self, node, token):
        """case(subject, value, formula, ..., [default]) as an if-chain that sets one
        variable of type `token`; only the chosen formula runs."""
        _, _, args, _ = node
        subject = self.compile(args[0])
        pairs = [(args[i], args[i + 1]) for i in range(1, len(args) - 1, 2)]
        default = args[-1] if (len(args) - 1) % 2 else None
        if token in ("TENSOR", "OPT_TENSOR"):
            result = self.temp("tensor", "chosen")
            owned = [("tensor", result)]
        else:
            ctype = {"SCALAR": "pith_scalar", "OPT_SCALAR": "pith_scalar", "INT": "int64_t",
                     "FLOAT": "double", "BOOL": "bool"}.get(token)
            if ctype is None:
                raise GenError(f"{self.node.d.overload}: a case giving {token}")
            result = self.temp(ctype, "chosen")
            owned = []
        branches = [(self.condition(subject, value), formula) for value, formula in pairs]
        if default is not None:
            branches.append((None, default))
        before = set(self.ready)
        for i, (cond, formula) in enumerate(branches):
            self.emit(("if" if i == 0 else "} else if") + f" ({cond}) {{" if cond else "} else {")
            self.ready = set(before)
            self.indent += 1
            value = (self.convert(self.case(formula, token), token)
                     if formula[0] == "call" and formula[1] == "case" else
                     self.arg(formula, token))
            self.assign(result, value, token)
            self.indent -= 1
        if default is None:
            self.emit("} else {")
            self.emit(f'    status = pith_set_error(PITH_ERR_RUNTIME, "{self.node.name}: no case '
                      f'of the formula matched");')
            self.emit("    goto done;")
            self.gotos = True
        self.emit("}")
        self.ready = before
        self.release(subject.temps)
        return V(REP_OF_TOKEN[token], result, owned)

    def store(self, node, dest):
        """Computes a Tensor formula into `dest` (an owned reference)."""
        if node[0] == "call" and node[1] != "case":
            target, _ = self.node.calls[id(node)]
            if not isinstance(target, Helper) and self.node.kind(node) == "tensor":
                return self.op(node, dest=dest)
            if isinstance(target, Helper) and target.kind == "tensor":
                return self.helper(node, dest=dest)
        self.assign(dest, self.arg(node, "TENSOR"), "TENSOR")

    def assign(self, target, value, token):
        expr, temps = value
        if token in ("TENSOR", "OPT_TENSOR"):
            owned = [t for t in temps if t == ("tensor", expr)]
            if owned:
                self.emit(f"{target} = {expr};")
                self.emit(f"{expr} = NULL;")
                temps = [t for t in temps if t != ("tensor", expr)]
            else:
                self.emit(f"{target} = ag_retain({expr});")
        else:
            self.emit(f"{target} = {expr};")
        self.release(temps)

    def condition(self, subject, value):
        rep, s = subject.rep, subject.expr
        tag, literal = value[0], value[1]
        if tag == "const" and literal is None:
            none = {"tensor": "!{s}", "str": "!{s}", "scalar": "{s}.kind == PITH_SCALAR_NONE",
                    "optint": "!{s}.present", "optdouble": "!{s}.present",
                    "optbool": "!{s}.present", "optints": "!{s}.present"}
            if rep in none:
                return none[rep].format(s=s)
        elif tag == "str" and rep == "str":
            return f"{s} && strcmp({s}, {c_string(literal)}) == 0"
        elif tag == "const" and rep in ("bool", "optbool"):
            truth = "" if literal else "!"
            return f"{truth}{s}" if rep == "bool" else f"{s}.present && {truth}{s}.value"
        elif tag == "num":
            c = c_double(literal) if isinstance(literal, float) else str(literal)
            if rep in ("int", "double"):
                return f"{s} == {c}"
            if rep in ("optint", "optdouble"):
                return f"{s}.present && {s}.value == {c}"
            if rep == "scalar":
                return f"ag_scalar_equals({s}, {c})"
        raise GenError(f"{self.node.d.overload}: case compares a {rep} with {value}")


# ---- one node -----------------------------------------------------------------------------

class NodeGen:
    """The C of one formula entry's node: its struct, lets, apply, release_saved, vtable."""

    def __init__(self, d):
        self.d, self.row = d, d.row
        self.name = node_name(d)
        self.calls = d.calls
        schema = self.row.schema
        self.types = {n: t for t, n in schema.args}
        results, grads, outputs = outputs_of(self.row)
        self.results, self.outputs = results, outputs
        self.grad_names = {g_: i for i, g_ in enumerate(grads) if g_ != "grads"}
        self.list_output = "grads" in grads
        # The differentiable Tensor inputs in schema order: (name, token).
        self.inputs = [(n, t) for t, n in schema.args
                       if n in d.formulas and d.formulas[n] is not False]
        lists = [n for n, t in self.inputs if token_kind(t) == "tensors"]
        if len(lists) > 1:
            raise GenError(f"{d.overload}: more than one differentiable Tensor[] input")
        self.list_input = lists[0] if lists else None
        self.saved_tensors, self.saved_lists, self.by_value = [], [], {}
        for name in d.saves:
            token = self.types.get(name, "TENSOR")  # an output is a Tensor
            if name in results or token in ("TENSOR", "OPT_TENSOR"):
                self.saved_tensors.append(name)
            elif token in ("TENSOR_LIST", "LIST_OPT_TENSOR"):
                self.saved_lists.append(name)
            elif token in FIELD:
                self.by_value[name] = token
            else:
                raise GenError(f"{d.overload}: cannot save {name} ({token})")
        self.saved_metadata = {n: self.types[n] for n in d.saves_metadata}
        # Which inputs' formulas read each forward name: a value is saved only when one of
        # them takes a gradient, as PyTorch's should_compute_output guards its saves.
        self.readers = {}
        for name, formula in d.formulas.items():
            for read in (reads(formula, dict(d.lets), d.calls) if formula is not False else {}):
                self.readers.setdefault(read, set()).add(name)
        self.let_kinds = {}
        self.let_nodes = dict(d.lets)
        self.use_values = bool(d.lets)
        names = set(self.types) | set(results) | set(self.let_nodes)
        if names & RESERVED:
            raise GenError(f"{d.overload}: the names {sorted(names & RESERVED)} are the "
                           f"generator's own")
        for name, node in d.lets:
            kind = self.kind(node)
            if kind not in LET_TYPES:
                raise GenError(f"{d.overload}: let {name} gives {kind}")
            self.let_kinds[name] = kind

    def kind(self, node):
        """The kind of an expression, as gen_derivatives.Checker found it."""
        return self.d.kinds[id(node)]

    def ref(self, name):
        """The C variable of an unpacked saved tensor in apply and the lets."""
        return f"v->{name}" if self.use_values else name

    # -- the struct --
    def struct(self):
        out = [f"/* {self.d.overload}: {self.row.schema.text} */", "typedef struct {",
               "    ag_node node;"]
        for name in self.saved_tensors:
            out.append(f"    ag_saved {name}_;")
        for name in self.saved_lists:
            out.append(f"    ag_saved_list {name}_;")
        for name, token in self.saved_metadata.items():
            kind = "ag_saved_metadata" if token == "TENSOR" else "ag_saved_metadata_list"
            out.append(f"    {kind} {name}_;")
        for name, token in self.by_value.items():
            out.append(f"    {FIELD[token][0]} {name}_;")
        out.append(f"}} {self.name};")
        return out

    # -- apply and lets --
    def function_text(self, head, fn, prologue, epilogue):
        out = [head, "{"]
        if "n" in fn.uses:
            out.append(f"    {self.name} *n = ({self.name} *)node;")
        for g_, i in sorted(self.grad_names.items(), key=lambda x: x[1]):
            if g_ in fn.uses:
                out.append(f"    pith_tensor *{g_} = grads[{i}];")
        out += ["    " + line for line in prologue]
        out += ["    " + decl for decl, _ in fn.decls]
        if fn.calls:
            out.append("    pith_value res_[1];")
        out.append("    pith_status status = PITH_OK;")
        out += fn.lines
        if fn.gotos:
            out.append("done:")
        out += ["    " + release for _, release in fn.decls if release]
        out += ["    " + line for line in epilogue]
        out += ["    return status;", "}", ""]
        return out

    def let_function(self, name, node):
        kind = self.let_kinds[name]
        fn = Function(self)
        ctype, _ = LET_TYPES[kind]
        if kind == "tensor":
            fn.store(node, f"v->{name}")
            guard, done = f"v->{name}", []
        elif kind == "number":
            expr, temps = fn.arg(node, "SCALAR")
            fn.emit(f"v->{name} = {expr};")
            fn.release(temps)
            fn.emit(f"v->have_{name} = true;")
            guard, done = f"v->have_{name}", []
        else:
            expr, temps = fn.arg(node, "INT_LIST")
            fn.check(f"ag_ints_copy(&v->{name}, {expr})")
            fn.release(temps)
            fn.emit(f"v->have_{name} = true;")
            guard, done = f"v->have_{name}", []
        text = ", ".join(_formula_text(node))
        head = (f"/* let {name} = {text} */\n"
                f"static pith_status {self.name}_let_{name}(ag_node *node, pith_tensor *const *grads, "
                f"{self.name}_values *v)")
        return self.function_text(head, fn, [f"if ({guard})", "    return PITH_OK;"], done)

    def values_struct(self):
        out = ["/* What apply reads, each unpacked or computed once, when first needed. */",
               "typedef struct {"]
        for name in self.saved_tensors:
            out.append(f"    pith_tensor *{name};")
        for name in self.saved_lists:
            out.append(f"    ag_tensors {name};")
        for name, kind in self.let_kinds.items():
            ctype, _ = LET_TYPES[kind]
            out.append(f"    {ctype}{'' if ctype.endswith('*') else ' '}{name};")
            if kind != "tensor":
                out.append(f"    bool have_{name};")
        out.append(f"}} {self.name}_values;")
        return out

    def values_release(self, prefix):
        out = []
        for name in self.saved_tensors:
            out.append(f"pith_release({prefix}{name});")
        for name in self.saved_lists:
            out.append(f"ag_tensors_release(&{prefix}{name});")
        for name, kind in self.let_kinds.items():
            if kind == "tensor":
                out.append(f"pith_release({prefix}{name});")
            elif kind == "ints":
                out.append(f"ag_ints_release(&{prefix}{name});")
        return out

    def edge_bases(self, list_count):
        """[(input, token, first edge as C, edge count as C or None)] in schema order; the
        edges of the Tensor[] input (at most one) number list_count(input)."""
        out, base, after = [], 0, None
        for name, token in self.inputs:
            first = str(base) if after is None else after if base == 0 else f"{base} + {after}"
            if token_kind(token) == "tensors":
                count = list_count(name)
                out.append((name, token, first, count))
                after, base = count, 0 if after is None else base
            else:
                out.append((name, token, first, None))
                base += 1
        return out

    def apply_list_count(self, name):
        singles = sum(1 for _, t in self.inputs if token_kind(t) != "tensors")
        return f"(node->num_next - {singles})" if singles else "node->num_next"

    def apply(self):
        fn = Function(self)
        for name, token, first, count in self.edge_bases(self.apply_list_count):
            formula = self.d.formulas[name]
            text = ", ".join(_formula_text(formula))
            if count is None:
                fn.emit(f"if (ag_needs_grad(node, {first})) {{")
            else:
                fn.emit(f"if (ag_any_needs_grad(node, {first}, {count})) {{")
            fn.indent += 1
            before = set(fn.ready)
            fn.emit(f"/* {name}: {text} */")
            if count is not None:
                v = fn.compile(formula)
                if v.rep != "tensors" or v.owner is None:
                    raise GenError(f"{self.d.overload}: {name}'s formula must make a new list")
                fn.check(f"ag_grads_distribute(node, out, {first}, {count}, &{v.owner})")
            else:
                fn.store(formula, f"out[{first}]")
            fn.ready = before
            fn.indent -= 1
            fn.emit("}")
        prologue = ["ag_grads_init(out, node->num_next);"]
        if self.use_values:
            prologue.insert(0, f"{self.name}_values values_ = {{0}}, *v = &values_;")
        else:
            for name in self.saved_tensors:
                prologue.insert(0, f"pith_tensor *{name} = NULL;")
            for name in self.saved_lists:
                prologue.insert(0, f"ag_tensors {name} = {{0}};")
        epilogue = (self.values_release("v->") if self.use_values else
                    self.values_release(""))
        epilogue += ["if (status != PITH_OK)", "    ag_grads_clear(out, node->num_next);"]
        head = (f"static pith_status {self.name}_apply(ag_node *node, pith_tensor *const *grads, "
                f"pith_tensor **out)")
        return self.function_text(head, fn, prologue, epilogue)

    def release_saved(self):
        """Saved tensors go after a backward without retain_graph; the rest only with the
        node (See Note [By-value arguments of a node], autograd/helpers.h)."""
        tensors, kept = [], []
        for name in self.saved_tensors:
            tensors.append(f"ag_saved_release(&n->{name}_);")
        for name in self.saved_lists:
            tensors.append(f"ag_saved_list_release(&n->{name}_);")
            kept.append(f"ag_saved_list_free(&n->{name}_);")
        for name, token in self.saved_metadata.items():
            kind = "ag_saved_metadata_release" if token == "TENSOR" else \
                "ag_saved_metadata_list_release"
            kept.append(f"{kind}(&n->{name}_);")
        for name, token in self.by_value.items():
            if token in ("INT_LIST", "OPT_INT_LIST"):
                kept.append(f"ag_ints_release(&n->{name}_);")
            elif token in ("STR", "OPT_STR"):
                kept.append(f"ag_str_release(&n->{name}_);")
        if not tensors and not kept:
            return [], "NULL"
        out = [f"static void {self.name}_release_saved(ag_node *node)", "{",
               f"    {self.name} *n = ({self.name} *)node;"]
        out += ["    " + line for line in tensors]
        if kept:
            out += ["    if (!ag_node_freeing(node))", "        return;"]
            out += ["    " + line for line in kept]
        out += ["}", ""]
        return out, f"{self.name}_release_saved"

    def text(self):
        out = self.struct() + [""]
        if self.use_values:
            out += self.values_struct() + [""]
            for name, node in self.d.lets:
                out += self.let_function(name, node)
        out += self.apply()
        release, release_name = self.release_saved()
        out += release
        for name in [self.name] + ([self.d.inplace_node] if self.d.inplace_node else []):
            out += [f"static const ag_node_vtable {name}_vtable = {{",
                    f'    "{name}", {self.name}_apply, {release_name}, sizeof({self.name})}};', ""]
        return out


def _formula_text(node):
    """A formula written back as text, for the comments beside its C."""
    tag = node[0]
    if tag == "num":
        return [repr(node[1])]
    if tag == "const":
        return [repr(node[1])]
    if tag == "str":
        return [f"'{node[1]}'"]
    if tag == "name":
        return [node[1]]
    if tag == "list":
        return ["[" + ", ".join(", ".join(_formula_text(i)) for i in node[1]) + "]"]
    args = [", ".join(_formula_text(a)) for a in node[2]]
    args += [f"{k}={', '.join(_formula_text(v))}" for k, v in node[3]]
    return [f"{node[1]}({', '.join(args)})"]


# ---- kernels ------------------------------------------------------------------------------

def chain(steps, indent="    "):
    """`if ((status_ = a) != PITH_OK || ...) goto fail;` over the calls `steps`."""
    if not steps:
        return []
    out = []
    for i, step in enumerate(steps):
        head = f"{indent}if (" if i == 0 else f"{indent}    "
        tail = " ||" if i + 1 < len(steps) else ")"
        out.append(f"{head}(status_ = {step}) != PITH_OK{tail}")
    out.append(f"{indent}    goto fail;")
    return out


def emit_steps(steps, indent="    ", failure=("goto fail;",)):
    """The C of (condition or None, [status calls]) steps: unconditional calls chained, a
    conditional one in an if of its own; the first failure runs the `failure` lines."""
    out, run = [], []

    def on_failure(lines):
        if len(failure) == 1:
            return lines + [f"{indent}    {failure[0]}"]
        lines[-1] += " {"
        return lines + [f"{indent}    {line}" for line in failure] + [f"{indent}}}"]

    def flush():
        if run:
            out.extend(on_failure(chain(run, indent)[:-1]))
            run.clear()
    for condition, calls in steps:
        if condition is None:
            run.extend(calls)
            continue
        flush()
        if len(calls) == 1:
            test = f"({condition})" if "||" in condition else condition
            out.extend(on_failure([f"{indent}if ({test} &&",
                                   f"{indent}    (status_ = {calls[0]}) != PITH_OK)"]))
        else:
            out += [f"{indent}if ({condition}) {{"] + emit_steps(
                [(None, calls)], indent + "    ", failure) + [f"{indent}}}"]
    flush()
    return out


def inplace_prologue(row, test, below):
    """The start of an in-place form's autograd kernel: self's checks, then the op below
    Autograd when nothing records."""
    # A tensor with autograd state is checked even when nothing records: a view made in
    # no_grad may not be written with grad mode on (Note [Views and in-place]); so is an
    # inference tensor (Note [Inference tensors reach the autograd kernels]).
    check = f'ag_check_inplace(self, "{row.schema.base}")'
    return [f"    pith_status status_ = ag_inplace_checked(self) ? {check}",
            "                                                  : PITH_OK;",
            "    if (status_ != PITH_OK)", "        return status_;",
            f"    if (!{test})", f"        return {below};"]


def record_test(singles, tensor_list):
    """(declarations, C condition): whether the op records, over its tensors."""
    decl = ([f"    const pith_tensor *const inputs_[] = {{{', '.join(singles)}}};"]
            if singles else [])
    array = "inputs_" if singles else "NULL"
    if tensor_list:
        return decl, f"ag_should_record_list({array}, {len(singles)}, {tensor_list})"
    return decl, f"ag_should_record(inputs_, {len(singles)})"


class KernelGen:
    """The autograd kernel <id>_autograd of one overload: functional, in-place or out=."""

    def __init__(self, row, form, ng, g):
        self.row, self.form, self.ng, self.g = row, form, ng, g
        self.args = g.c_names(row)
        self.below = f"pith_redispatch_{row.id}(ks & ~PITH_KEYSET(PITH_KEY_AUTOGRAD), ret{self.args})"

    def head(self):
        return [f"/* {self.row.schema.text} */",
                self.g.signature(f"{self.row.id}_autograd", self.row), "{"]

    def inputs(self):
        singles = [n for n, t in self.ng.inputs if token_kind(t) != "tensors"]
        return record_test(singles, self.ng.list_input)

    def num_next(self):
        singles = sum(1 for _, t in self.ng.inputs if token_kind(t) != "tensors")
        if self.ng.list_input:
            count = f"(uint32_t){self.ng.list_input}.n"
            return f"{singles} + {count}" if singles else count
        return str(singles)

    def node_new(self, num_outputs):
        name, vtable = self.ng.name, kernel_node_name(self.row, self.ng.d)
        return [f"    {name} *n_ = ({name} *)ag_node_new(&{vtable}_vtable, {self.num_next()}, "
                f"{num_outputs});",
                "    if (!n_) {", "        status_ = pith_last_status();", "        goto fail;",
                "    }"]

    def needed(self, name):
        """The C condition under which the node needs the forward value `name`: one of the
        inputs whose formulas read it has an edge. None: always (every input's formula
        reads it, and a node has an edge to at least one)."""
        readers = self.ng.readers.get(name, set())
        if readers >= {n for n, _ in self.ng.inputs}:
            return None
        conditions = [f"ag_any_edge(&n_->node, {first}, {count})" if count else
                      f"ag_has_edge(&n_->node, {first})"
                      for n, _, first, count in self.edges if n in readers]
        return " || ".join(conditions) or "false"

    def save_inputs(self, clone=False):
        """(statements, steps) that give the node its edges and saved inputs; a step is
        (condition or None, [calls]). clone: an in-place form saves a copy of self."""
        ng, statements, steps = self.ng, [], []
        self.edges = ng.edge_bases(lambda n: f"(uint32_t){n}.n")
        steps.append((None, [f"ag_set_next_edges(&n_->node, {first}, {name})" if count else
                             f"ag_set_next_edge(&n_->node, {first}, {name})"
                             for name, _, first, count in self.edges]))
        for name in ng.saved_tensors:
            if name in ng.results:
                continue
            if clone and name == "self":
                steps.append((self.needed(name), ["ag_clone(&original_, self)",
                                                  "ag_save(&n_->self_, original_, false)"]))
            else:
                steps.append((self.needed(name), [f"ag_save(&n_->{name}_, {name}, false)"]))
        for name in ng.saved_lists:
            steps.append((self.needed(name), [f"ag_save_list(&n_->{name}_, {name})"]))
        for name, token in ng.saved_metadata.items():
            save = "ag_save_metadata" if token == "TENSOR" else "ag_save_metadata_list"
            steps.append((self.needed(name), [f"{save}(&n_->{name}_, {name})"]))
        for name, token in ng.by_value.items():
            if token in SAVE_BY_VALUE:
                steps.append((None, [f"{SAVE_BY_VALUE[token]}(&n_->{name}_, {name})"]))
            else:
                statements.append(f"    n_->{name}_ = {name};")
        return statements, steps

    def saved_outputs(self, outputs, differentiable):
        return [(self.needed(name), [f"ag_save(&n_->{name}_, {outputs[name]}, "
                                     f"{'true' if name in differentiable else 'false'})"])
                for name in self.ng.saved_tensors if name in self.ng.results]

    def functional(self):
        ng, row = self.ng, self.row
        decl, test = self.inputs()
        out = self.head() + decl
        view = re.search(r"\bTensor\(a\) (\w+)", row.schema.text)
        view_of = view.group(1) if view and re.fullmatch(r"Tensor\(a\)(\[\])?",
                                                          row.schema.returns) else None
        if view_of:
            # See Note [Views and in-place] (autograd/views.c): a view of a tensor with
            # autograd state remembers its base, recorded or not.
            out += [f"    if (!{test}) {{",
                    f"        pith_status below_status_ = {self.below};",
                    f"        return below_status_ == PITH_OK && {view_of}->autograd",
                    f"                   ? ag_note_view_result(ret, {view_of})",
                    "                   : below_status_;", "    }"]
        else:
            out += [f"    if (!{test})", f"        return {self.below};"]
        out += ["    ag_below_guard below_;",
                f"    pith_status status_ = pith_redispatch_{row.id}(ag_below_enter(ks, &below_), "
                f"ret{self.args});",
                "    ag_below_exit(&below_);", "    if (status_ != PITH_OK)", "        return status_;"]
        returns = re.sub(r"\([a-z]!?\)", "", row.schema.returns)
        differentiable = ng.d.differentiable_outputs or ng.outputs
        if returns == "Tensor[]":
            num_outputs, clears = "(uint32_t)ret[0].u.tensors.n", ["    value_clear(&ret[0]);"]
            history = ["ag_set_history_list(&n_->node, ret[0].u.tensors.data, ret[0].u.tensors.n)"]
            outputs = {}
        else:
            outputs = {name: f"ret[{i}].u.t" for i, name in enumerate(ng.outputs)}
            num_outputs = str(len(outputs))
            clears = [f"    value_clear(&ret[{i}]);" for i in range(len(outputs))]
            history = [f"ag_set_history(&n_->node, {i}, {outputs[name]})"
                       for i, name in enumerate(ng.outputs) if name in differentiable]
        if row.kind in ("composite_explicit", "every_device") and returns == "Tensor":
            same = " || ".join(f"ret[0].u.t == {n}" for n, t in ng.inputs
                               if token_kind(t) == "tensor")
            out += ["    /* The op returned an input itself, which keeps its own history. */",
                    f"    if ({same})", "        return PITH_OK;"]
        out += self.node_new(num_outputs)
        statements, steps = self.save_inputs()
        out += statements
        steps.append((None, history))
        if view_of:
            steps.append((None, [f"ag_note_view_result(ret, {view_of})"]))
        out += emit_steps(steps + self.saved_outputs(outputs, differentiable))
        out += ["    ag_node_release(&n_->node);", "    return PITH_OK;", "fail:", "    if (n_)",
                "        ag_node_release(&n_->node);"] + clears + ["    return status_;", "}", ""]
        return out

    def inplace(self):
        ng, row = self.ng, self.row
        decl, test = self.inputs()
        clone = "self" in ng.saved_tensors
        out = self.head() + decl + inplace_prologue(row, test, self.below)
        if clone:
            out += ["    /* What the formulas read of self: its values from before the write. */",
                    "    pith_tensor *original_ = NULL;"]
        out += self.node_new("1")
        statements, steps = self.save_inputs(clone)
        out += statements + emit_steps(steps)
        out += ["    ag_below_guard below_;",
                f"    status_ = pith_redispatch_{row.id}(ag_below_enter(ks, &below_), ret{self.args});",
                "    ag_below_exit(&below_);", "    if (status_ != PITH_OK)", "        goto fail;"]
        after = emit_steps([(None, ["ag_rebase_history(&n_->node, (pith_tensor *)self)"])] +
                           self.saved_outputs({"result": "self"}, ["result"]), "    ",
                           ("value_clear(&ret[0]);", "goto fail;"))
        out += after
        out += ["    ag_node_release(&n_->node);"]
        if clone:
            out.append("    pith_release(original_);")
        out += ["    return PITH_OK;", "fail:", "    if (n_)", "        ag_node_release(&n_->node);"]
        if clone:
            out.append("    pith_release(original_);")
        out += ["    return status_;", "}", ""]
        return out

    def out_form(self):
        row = self.row
        singles = [n for t, n in row.schema.args if t in ("TENSOR", "OPT_TENSOR")]
        lists = [n for t, n in row.schema.args if t in ("TENSOR_LIST", "LIST_OPT_TENSOR")]
        if len(lists) > 1:
            raise GenError(f"{row.schema.full_name}: more than one Tensor[] argument")
        decl, test = record_test(singles, lists[0] if lists else None)
        base = row.schema.base
        # the targets (Tensor(a!) arguments): an inference tensor is written only in
        # inference mode (Note [Inference tensors reach the autograd kernels])
        targets = [name for _, name in row.schema.args
                   if re.search(rf"Tensor\([a-z]!\)\?? {re.escape(name)}\b", row.schema.text)]
        checks = [line for name in targets for line in (
            f"    if ({name} && (status_ = ag_check_inference_write({name})) != PITH_OK)",
            "        return status_;")]
        status = ["    pith_status status_;"] if checks else []
        return self.head() + decl + status + checks + [
            f"    if ({test})", f"        return ag_out_error(\"{base}\");",
            f"    return {self.below};", "}", ""]

    def text(self):
        return {"functional": self.functional, "inplace": self.inplace,
                "out": self.out_form}[self.form]()



class NotImplementedGen:
    """The autograd kernel of the in-place form of a not_differentiable overload that PyTorch
    has no derivative for (floor_divide_, inplace = "not_implemented"): it records PyTorch's
    NotImplemented node, with an edge to each Tensor input, whose backward raises, so that
    self's history never goes stale."""

    def __init__(self, row, g):
        self.row, self.g = row, g
        if any(t not in ("TENSOR", "OPT_TENSOR") for t, _ in row.schema.args
               if token_kind(t) in ("tensor", "tensors")):
            raise GenError(f"{row.schema.full_name}: a NotImplemented node takes Tensor inputs "
                           f"only")

    def node(self):
        row, i = self.row, self.row.id
        return [f"/* {row.schema.full_name}: PyTorch's NotImplemented node (no derivative). */",
                f"static pith_status {i}_not_implemented(ag_node *node, "
                f"pith_tensor *const *grads, pith_tensor **out)",
                "{", "    (void)grads;", "    ag_grads_init(out, node->num_next);",
                f"    return pith_set_error(PITH_ERR_RUNTIME,",
                f'                          "derivative for pith::{row.schema.base} is not '
                f'implemented");', "}", "",
                f"static const ag_node_vtable {i}_not_implemented_vtable = {{",
                f'    "NotImplemented", {i}_not_implemented, NULL, sizeof(ag_node)}};', ""]

    def kernel(self):
        row, i, args = self.row, self.row.id, self.g.c_names(self.row)
        tensors = [n for t, n in row.schema.args if t in ("TENSOR", "OPT_TENSOR")]
        decl, test = record_test(tensors, None)
        below = f"pith_redispatch_{i}(ks & ~PITH_KEYSET(PITH_KEY_AUTOGRAD), ret{args})"
        edges = [f"ag_set_next_edge(n_, {k}, {n})" for k, n in enumerate(tensors)]
        return [f"/* {row.schema.text} */", self.g.signature(f"{i}_autograd", row), "{", *decl,
                *inplace_prologue(row, test, below),
                f"    ag_node *n_ = ag_node_new(&{i}_not_implemented_vtable, {len(tensors)}, 1);",
                "    if (!n_)", "        return pith_last_status();", *chain(edges),
                "    ag_below_guard below_;",
                f"    status_ = pith_redispatch_{i}(ag_below_enter(ks, &below_), ret{args});",
                "    ag_below_exit(&below_);", "    if (status_ != PITH_OK)", "        goto fail;",
                "    if ((status_ = ag_rebase_history(n_, (pith_tensor *)self)) != PITH_OK) {",
                "        value_clear(&ret[0]);", "        goto fail;", "    }",
                "    ag_node_release(n_);", "    return PITH_OK;", "fail:",
                "    ag_node_release(n_);", "    return status_;", "}", ""]

    def text(self):
        return self.node() + self.kernel()


# ---- the files ----------------------------------------------------------------------------

def op_texts(plan, g):
    """[(op, lines)] in the op file's order: each op's nodes, then the kernels and records of
    the overloads that use them (an in-place overload of its own, as gelu_, goes with the
    node of its functional overload, whose vtable is static)."""
    nodes = {d.overload: NodeGen(d) for d in plan.nodes}
    by_op = {}
    for d in plan.nodes:
        by_op.setdefault(d.row.op.name, ([], []))[0].append(nodes[d.overload])
    for row, form, d in plan.kernels:
        by_op.setdefault(d.row.op.name, ([], []))[1].append(KernelGen(row, form, nodes[d.overload], g))
    for row in plan.not_implemented:
        by_op.setdefault(row.op.name, ([], []))[1].append(NotImplementedGen(row, g))
    out = []
    for op_name, (ngs, kernels) in by_op.items():
        lines = [f"/* ---- {op_name} ---- */", ""]
        for ng in ngs:
            lines += ng.text()
        for k in kernels:
            lines += k.text()
        out.append((ngs[0].row.op if ngs else kernels[0].row.op, lines))
    return out


def split_files(texts):
    """{file name: [lines]}: per family (unary, binary, the rest), split at FILE_BUDGET."""
    files = {}
    for family in ("unary", "binary", None):
        base = f"autograd_{family or 'ops'}"
        part, current = 1, []
        for op, lines in texts:
            if op.family != family:
                continue
            if current and len(current) + len(lines) > FILE_BUDGET:
                files[f"{base}{'' if part == 1 else f'_{part}'}.c"] = current
                part, current = part + 1, []
            current = current + lines
        if current:
            files[f"{base}{'' if part == 1 else f'_{part}'}.c"] = current
    return files


def gen_kernels_header(plan, g):
    out = ["#ifndef PITH_AUTOGRAD_GENERATED_AUTOGRAD_KERNELS_H",
           "#define PITH_AUTOGRAD_GENERATED_AUTOGRAD_KERNELS_H", "",
           '#include "autograd/helpers.h"', '#include "ops/op_runtime.h"', "",
           "/* The autograd kernels, with their ops' typed signatures (pith_sig_<id>). */"]
    rows = [row for row, _, _ in plan.kernels] + plan.not_implemented
    out += [g.signature(f"{row.id}_autograd", row) + ";" for row in rows]
    out += ["", "/* The overloads registered at Autograd with a generated kernel: _(id). */",
            "#define AG_FORALL_KERNELS(_) \\"]
    out += [f"    _({row.id}) \\" for row in rows]
    out += ["", "/* The composite implicit overloads and their forms: their CPU record (op_rows) is",
            " * registered at Autograd too, so that their parts record: _(id). */",
            "#define AG_FORALL_COMPOSITE_IMPLICIT(_) \\"]
    out += [f"    _({row.id}) \\" for row in plan.composite]
    out += ["", "#endif", ""]
    return g.c_file("autograd_kernels.h — the generated autograd kernels "
                    "(autograd/generated/autograd_*.c), which\n * autograd/register.c registers. "
                    "See Note [Generated autograd kernels] (autograd/register.c).",
                    "\n".join(out))


def gen_node_names(plan, g):
    out = ["#ifndef PITH_AUTOGRAD_GENERATED_NODE_NAMES_H",
           "#define PITH_AUTOGRAD_GENERATED_NODE_NAMES_H", "",
           "/* _(overload, node name): the grad_fn of an output of each overload that records (an",
           " * in-place form's is its functional overload's node), as PyTorch names the class. */",
           "#define AG_FORALL_NODE_NAMES(_) \\"]
    out += [f'    _("{row.schema.full_name}", "{kernel_node_name(row, d)}") \\'
            for row, form, d in plan.kernels if form != "out"]
    out += [f'    _("{row.schema.full_name}", "NotImplemented") \\' for row in plan.not_implemented]
    out += ["", "#endif", ""]
    return g.c_file("node_names.h — the node name of every overload that records, for tests "
                    "(plain C, no includes).", "\n".join(out))


def outputs(rows, g):
    """{path: text} of every generated file of the autograd layer; g is a CWriting."""
    plan = Plan(rows, g.fail)
    try:
        texts = op_texts(plan, g)
    except GenError as e:
        g.fail(f"derivatives: {e}")
    out = {"autograd/generated/autograd_kernels.h": gen_kernels_header(plan, g),
           "autograd/generated/node_names.h": gen_node_names(plan, g)}
    for name, lines in split_files(texts).items():
        body = ["#include <string.h>", "", '#include "autograd/generated/autograd_kernels.h"', ""]
        family = re.match(r"autograd_(unary|binary|ops)", name).group(1)
        what = {"unary": "of the unary family", "binary": "of the binary family",
                "ops": "outside the unary and binary families"}[family]
        out[f"autograd/generated/{name}"] = g.c_file(
            f"{name} — the autograd nodes and kernels of the ops {what}\n * (See Note "
            f"[Generated autograd kernels], autograd/register.c): per formula entry of the op "
            f"file, its\n * node (struct, apply, release_saved, vtable); per overload, its "
            f"kernel <id>_autograd.", "\n".join(body + lines))
    return out


def summary(plan):
    counts = {}
    for _, form, _ in plan.kernels:
        counts[form] = counts.get(form, 0) + 1
    return (f"{len(plan.nodes)} nodes; kernels: {counts.get('functional', 0)} functional, "
            f"{counts.get('inplace', 0)} in-place, {counts.get('out', 0)} out=, "
            f"{len(plan.not_implemented)} in-place NotImplemented; "
            f"{len(plan.composite)} composite implicit records; {len(plan.skipped)} without "
            f"a kernel (not differentiable)")


# ---- the node names against torch's ------------------------------------------------------

def torch_names():
    """Runs every overload with formulas in torch on the formula test's samples
    (tests/python/test_derivatives_table.py) and prints the grad_fn name torch gives its
    output beside ours (a sample's extra names come from the test's adapters, or from torch's
    decomposition). An op that torch decomposes names one of its parts (matmul's MmBackward0
    or MvBackward0, by shape); there ours keeps its default."""
    import importlib.util
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(root, "tests", "python", "test_derivatives_table.py")
    spec = importlib.util.spec_from_file_location("test_derivatives_table", path)
    table = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(table)
    torch = table.torch

    def leafy(value, inplace):
        if isinstance(value, list):
            return [leafy(v, False) for v in value]
        if isinstance(value, torch.Tensor) and value.is_floating_point():
            leaf = value.detach().clone().requires_grad_()
            return leaf.clone() if inplace else leaf
        return value

    def first_grad_fn(result):
        items = result if isinstance(result, (list, tuple)) else [result]
        for item in items:
            if isinstance(item, torch.Tensor) and item.grad_fn is not None:
                return item.grad_fn.name().rpartition("::")[2]
        return None  # the op returned its input (to a dtype it has)

    plan = Plan(table.ROWS, table.GEN.fail)
    differ = 0
    for row, form, d in plan.kernels:
        if form == "out":
            continue
        seen = set()
        for args in table.SAMPLES.get(d.overload, []):
            values = {k: leafy(v, row.schema.mutates and k == "self") for k, v in args.items()}
            try:
                seen.add(first_grad_fn(table.torch_call(row, values)))
            except Exception as e:  # noqa: BLE001 (a sample torch refuses: say so)
                seen.add(f"<{type(e).__name__}>")
        ours = kernel_node_name(row, d)
        named = {n for n in seen - {None} if not n.startswith("<")}
        mark = "  " if ours in named else "??" if not named else "!="
        differ += mark == "!="
        print(f"{mark} {row.schema.full_name:32} {ours:28} torch: "
              f"{', '.join(sorted(map(str, seen - {None})))}")
    print(f"{differ} overloads whose node name torch never gives (ops that torch decomposes "
          f"into others keep ours; ?? marks an overload that torch lacks or refuses here)")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--torch-names"]:
        sys.exit(torch_names())
    if sys.argv[1:]:
        sys.exit(__doc__)
    import gen_ops
    print(summary(Plan(gen_ops.load()[1], gen_ops.fail)))
