"""gen_derivatives.py — reads and checks the op file's derivatives section and its backward
helpers for gen_ops.py (See Note [The derivatives section], ops/ops.toml).

It parses each formula with the call grammar below, resolves every call to one overload of
the op file or to a declared backward helper, and accounts for every overload: a functional
overload has exactly one [derivatives."<overload>"] entry, and a derived out= or in-place
form has none (it takes its functional overload's). Standard library only. The formula test
(tests/python/test_derivatives_table.py) imports parse_formula and the checked entries, so
that the oracle evaluates exactly what the generator read.
"""
import re

# ---- formulas: the call grammar ----------------------------------------------------------
# formula := call | name | number | string | None | True | False | '[' formula, ... ']'
# call    := op ['.' overload] '(' formula, ..., keyword=formula, ... ')' | helper(...) |
#            case(subject, value, formula, value, formula, ..., [default formula])
# A node is a tuple: ("call", name, [args], [(keyword, node)]), ("name", n), ("num", v),
# ("str", s), ("const", None/True/False) or ("list", [nodes]).

TOKEN = re.compile(r"\s*(?:(?P<num>-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)"
                   r"|(?P<name>[A-Za-z_]\w*(?:\.\w+)?)|(?P<str>'[^']*'|\"[^\"]*\")"
                   r"|(?P<punct>[()\[\],=]))")
CONSTANTS = {"None": None, "True": True, "False": False}


class FormulaError(Exception):
    pass


def tokenize(text):
    tokens, pos = [], 0
    text = text.rstrip()
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise FormulaError(f"cannot read {text[pos:].strip()[:20]!r}")
        kind = m.lastgroup
        tokens.append((kind, m.group(kind)))
        pos = m.end()
    return tokens


def parse_formula(text):
    """The node of one formula (or of a schema default, which is a formula of literals)."""
    tokens = tokenize(text)
    node, rest = parse_node(tokens, 0)
    if rest != len(tokens):
        raise FormulaError(f"unexpected {tokens[rest][1]!r} after a complete formula")
    return node


def parse_node(tokens, i):
    if i >= len(tokens):
        raise FormulaError("the formula ends too early")
    kind, text = tokens[i]
    if kind == "num":
        return ("num", float(text) if re.search(r"[.eE]", text) else int(text)), i + 1
    if kind == "str":
        return ("str", text[1:-1]), i + 1
    if kind == "punct" and text == "[":
        items, i = parse_sequence(tokens, i + 1, "]", keywords=False)
        return ("list", items[0]), i
    if kind != "name":
        raise FormulaError(f"unexpected {text!r}")
    if i + 1 < len(tokens) and tokens[i + 1] == ("punct", "("):
        (args, kwargs), i = parse_sequence(tokens, i + 2, ")", keywords=True)
        return ("call", text, args, kwargs), i
    if "." in text:
        raise FormulaError(f"{text!r} is not called")
    if text in CONSTANTS:
        return ("const", CONSTANTS[text]), i + 1
    return ("name", text), i + 1


def parse_sequence(tokens, i, close, keywords):
    args, kwargs = [], []
    while True:
        if i < len(tokens) and tokens[i] == ("punct", close):
            return (args, kwargs), i + 1
        if (keywords and i + 1 < len(tokens) and tokens[i][0] == "name" and
                tokens[i + 1] == ("punct", "=")):
            keyword = tokens[i][1]
            node, i = parse_node(tokens, i + 2)
            kwargs.append((keyword, node))
        else:
            if kwargs:
                raise FormulaError("a positional argument follows a keyword argument")
            node, i = parse_node(tokens, i)
            args.append(node)
        if i < len(tokens) and tokens[i] == ("punct", ","):
            i += 1
        elif not (i < len(tokens) and tokens[i] == ("punct", close)):
            raise FormulaError(f"expected ',' or {close!r}")


def names_in(node):
    """Every ("name", n) in a node, in order."""
    if node[0] == "name":
        yield node[1]
    elif node[0] == "list":
        for item in node[1]:
            yield from names_in(item)
    elif node[0] == "call":
        for item in node[2] + [v for _, v in node[3]]:
            yield from names_in(item)


# ---- kinds: how far the checker types a formula ------------------------------------------
# Each expression has a kind; a call binds an argument only where its kind fits the
# parameter's type. A number (a literal or a non-Tensor argument) fits a Tensor parameter:
# it is a wrapped number, a 0-dim tensor that takes no part in type promotion.

def token_kind(token):
    if token in ("TENSOR", "OPT_TENSOR"):
        return "tensor"
    if token in ("TENSOR_LIST", "LIST_OPT_TENSOR"):
        return "tensors"
    if token in ("INT", "FLOAT", "SCALAR", "BOOL", "OPT_INT", "OPT_FLOAT", "OPT_SCALAR",
                 "OPT_BOOL"):
        return "number"
    if token in ("INT_LIST", "OPT_INT_LIST", "FLOAT_LIST", "OPT_FLOAT_LIST"):
        return "ints"
    if token in ("STR", "OPT_STR"):
        return "str"
    return "other"


def accepts(token, kind):
    fits = {"tensor": {"tensor", "number"}, "tensors": {"tensors"}, "number": {"number"},
            "ints": {"ints", "number"}, "str": {"str"}, "other": {"other"}}[token_kind(token)]
    return kind in fits or (kind == "none" and token.startswith("OPT_"))


def returns_kind(returns):
    returns = re.sub(r"\([a-z]\)", "", returns)  # Tensor(a), Tensor(a)[]: views
    if returns == "Tensor":
        return "tensor"
    if returns in ("Tensor[]", "Tensor?[]"):
        return "tensors"
    if returns in ("int", "float", "Scalar", "bool"):
        return "number"
    if returns in ("int[]",):
        return "ints"
    return "several"


def bind(schema, args, kwargs, kinds):
    """{parameter: node} of a call of `schema`, or None when the arguments do not fit."""
    positional = [(t, n) for t, n in schema.args if n not in schema.keyword_names]
    if len(args) > len(positional):
        return None
    bound, types = {}, dict((n, t) for t, n in schema.args)
    for (token, name), node, kind in zip(positional, args, kinds[:len(args)]):
        if not accepts(token, kind):
            return None
        bound[name] = node
    for (name, node), kind in zip(kwargs, kinds[len(args):]):
        if name not in types or name in bound or not accepts(types[name], kind):
            return None
        bound[name] = node
    if any(n not in bound and n not in schema.defaults for _, n in schema.args):
        return None
    return {n: bound[n] for _, n in schema.args if n in bound}


# ---- the checked section -----------------------------------------------------------------

ENTRY_KINDS = ("formula", "not_differentiable", "composite_implicit", "form_of", "derived")
META_KEYS = {"saves", "saves_metadata", "let", "differentiable_outputs", "hand_written", "node",
             "inplace_node"}
ALONE_KEYS = {"not_differentiable", "composite_implicit", "form_of"}
# What the in-place form of a not_differentiable overload records when an input requires
# grad (See Note [The derivatives section]).
INPLACE_KINDS = ("zeros", "not_implemented")
NOT_DIFFERENTIABLE_KEYS = {"not_differentiable", "inplace", "inplace_node"}
HELPER_KEYS = {"signature", "metadata", "meaning"}


class Helper:
    def __init__(self, name, table, schema_class, fail):
        where = f"[backward_helper.{name}]"
        if not {"signature", "meaning"} <= set(table) <= HELPER_KEYS:
            fail(f"{where}: a backward helper has a signature, its meaning and optionally "
                 f"metadata (of {sorted(HELPER_KEYS)})")
        self.schema = schema_class(table["signature"])
        if self.schema.full_name != name:
            fail(f"{where}: its signature names {self.schema.full_name!r}")
        tensors = [n for t, n in self.schema.args if token_kind(t) in ("tensor", "tensors")]
        self.metadata = table.get("metadata", [])
        if not (isinstance(self.metadata, list) and set(self.metadata) <= set(tensors)):
            fail(f"{where}: metadata lists the Tensor parameters whose sizes, strides, dtype "
                 f"or device it reads, never their data (of {tensors})")
        if not isinstance(table["meaning"], str) or not table["meaning"].strip():
            fail(f"{where}: meaning is one line saying what it computes")
        self.name, self.meaning = name, table["meaning"]
        self.kind = returns_kind(self.schema.returns)


class Derivative:
    """One overload's entry, checked: `kind` is one of ENTRY_KINDS."""

    def __init__(self, row, kind, **fields):
        self.row, self.kind = row, kind
        self.overload = row.schema.full_name
        self.reason = fields.get("reason")
        self.target = fields.get("target")          # form_of and derived: an overload name
        self.formulas = fields.get("formulas", {})  # input -> node, or False
        self.lets = fields.get("lets", [])          # [(name, node)] in order
        self.saves = fields.get("saves", [])
        self.saves_metadata = fields.get("saves_metadata", [])
        self.differentiable_outputs = fields.get("differentiable_outputs")
        self.hand_written = fields.get("hand_written")
        self.node = fields.get("node")              # PyTorch's node class name, if not the default
        self.inplace_node = fields.get("inplace_node")  # that of the derived in-place form
        # Of a not_differentiable entry whose overload derives an in-place form: what that
        # form records ("zeros" or "not_implemented"), and for "zeros" the formula entry of
        # its node (zeros_like(grad) for every Tensor input).
        self.inplace = fields.get("inplace")
        self.inplace_formulas = fields.get("inplace_formulas")
        self.calls = fields.get("calls", {})        # id(call node) -> (Row or Helper, bound)
        self.kinds = fields.get("kinds", {})        # id(expression node) -> its kind


def outputs_of(row):
    """(result names, grad names, output names) of an overload's returns."""
    returns = re.sub(r"\([a-z]!?\)", "", row.schema.returns)
    if returns == "Tensor":
        return ["result"], ["grad"], ["result"]
    if returns == "Tensor[]":
        return [], ["grads"], ["result"]
    names = re.findall(r"Tensor (\w+)", returns)
    return names, [f"grad_{n}" for n in names], names


class Checker:
    def __init__(self, ops, rows, helpers, fail):
        self.fail, self.helpers = fail, helpers
        self.by_base = {}
        for row in rows:
            if not row.schema.mutates:
                self.by_base.setdefault(row.schema.base, []).append(row)
        self.by_name = {row.schema.full_name: row for row in rows}
        self.used_helpers = set()
        self.calls = {}  # id(call node) -> (Row or Helper, {parameter: node})
        self.kinds = {}  # id(expression node) -> its kind, which the C generator reads

    def kind(self, node, scope, where):
        kind = self._kind(node, scope, where)
        self.kinds[id(node)] = kind
        return kind

    def _kind(self, node, scope, where):
        tag = node[0]
        if tag == "num" or (tag == "const" and node[1] is not None):
            return "number"
        if tag == "const":
            return "none"
        if tag == "str":
            return "str"
        if tag == "name":
            if node[1] not in scope:
                self.fail(f"{where}: unknown name {node[1]!r}")
            return scope[node[1]]
        if tag == "list":
            kinds = [self.kind(item, scope, where) for item in node[1]]
            return "tensors" if {"tensor", "tensors"} & set(kinds) else "ints"
        return self.call_kind(node, scope, where)

    def call_kind(self, node, scope, where):
        _, name, args, kwargs = node
        kinds = [self.kind(n, scope, where) for n in args + [v for _, v in kwargs]]
        if name == "case":
            return self.case_kind(node, kinds, where)
        if name in self.helpers:
            helper = self.helpers[name]
            bound = bind(helper.schema, args, kwargs, kinds)
            if bound is None:
                self.fail(f"{where}: the call of {name} does not fit the backward helper "
                          f"{helper.schema.text!r}")
            self.used_helpers.add(name)
            self.calls[id(node)] = (helper, bound)
            return helper.kind
        base, _, overload = name.partition(".")
        full = base if overload == "default" else name  # sum.default: the unnamed overload
        candidates = ([self.by_name[full]] if overload and full in self.by_name and
                      not self.by_name[full].schema.mutates else
                      [] if overload else self.by_base.get(base, []))
        if not candidates:
            self.fail(f"{where}: {name!r} is not an op (of this file, functional) or a "
                      f"backward helper")
        fitting = [r for r in candidates if bind(r.schema, args, kwargs, kinds) is not None]
        if len(fitting) != 1:
            what = "fits no overload" if not fitting else "fits several overloads"
            self.fail(f"{where}: the call of {name} {what} "
                      f"({', '.join(r.schema.text for r in fitting or candidates)}); "
                      f"name one as {base}.<overload>")
        self.calls[id(node)] = (fitting[0], bind(fitting[0].schema, args, kwargs, kinds))
        kind = returns_kind(re.sub(r"\([a-z]!?\)", "", fitting[0].schema.returns))
        if kind == "several":
            self.fail(f"{where}: {fitting[0].schema.full_name} returns several tensors; a "
                      f"formula calls ops that return one Tensor or a Tensor[]")
        return kind

    def case_kind(self, node, kinds, where):
        _, _, args, kwargs = node
        if kwargs or len(args) < 3:
            self.fail(f"{where}: case(subject, value, formula, ..., [default]) takes no "
                      f"keywords and at least one value with its formula")
        if kinds[0] in ("tensors",):
            self.fail(f"{where}: the subject of a case is a non-Tensor value, an optional "
                      f"Tensor (against None) or a helper's number")
        for value in args[1:len(args) - (len(args) - 1) % 2:2]:
            if value[0] not in ("num", "str", "const", "list"):
                self.fail(f"{where}: a case's values are literals")
        branches = kinds[2::2] + ([kinds[-1]] if (len(args) - 1) % 2 else [])
        return branches[0]

    def reads(self, node, lets):
        return reads(node, lets, self.calls)


def reads(node, lets, calls, metadata=False):
    """{forward name: 'value' or 'metadata'} that a node reads (a let reads what its formula
    reads); calls is the Checker's resolution of each call. gen_autograd.py asks it which
    formulas read a saved value."""
    tag = node[0]
    if tag == "name":
        if node[1] in lets:
            return reads(lets[node[1]], lets, calls)
        return {node[1]: "metadata" if metadata else "value"}
    if tag == "list":
        children = [(child, False) for child in node[1]]
    elif tag == "call":
        target, bound = calls.get(id(node), (None, {}))
        meta = ({id(n) for p, n in bound.items() if p in target.metadata}
                if isinstance(target, Helper) else set())
        children = [(child, id(child) in meta) for child in node[2] + [v for _, v in node[3]]]
    else:
        children = []
    out = {}
    for child, child_meta in children:
        for name, how in reads(child, lets, calls, child_meta and child[0] == "name").items():
            if out.get(name) != "value":
                out[name] = how
    return out


def check(section, helper_tables, ops, rows, schema_class, fail, account=True):
    """({overload: Derivative} of every overload, {name: Helper}); fails naming the overload
    when the section is wrong or (account) leaves one unaccounted for."""
    helpers = {name: Helper(name, table, schema_class, fail)
               for name, table in helper_tables.items()}
    for name in helpers:
        if any(op.name == name for op in ops) or name == "case":
            fail(f"[backward_helper.{name}]: {name!r} is the name of an op")
    checker = Checker(ops, rows, helpers, fail)
    by_name = {row.schema.full_name: row for row in rows}
    result = {}
    for overload, entry in section.items():
        row = by_name.get(overload)
        if row is None:
            fail(f"[derivatives.{overload!r}]: no such overload")
        if row.functional is not None:
            fail(f"[derivatives.{overload!r}]: {overload} is the {row.form} form of "
                 f"{row.functional.schema.full_name}, whose entry covers it")
        result[overload] = check_entry(checker, row, entry, fail)
    for overload, d in result.items():
        if d.kind == "form_of":
            target = result.get(d.target)
            if target is None or target.kind == "form_of":
                fail(f"[derivatives.{overload!r}]: form_of names {d.target!r}, which has no "
                     f"entry of its own")
    missing = [r.schema.full_name for r in rows
               if r.functional is None and r.schema.full_name not in result]
    if missing and account:
        fail(f"the derivatives section does not account for {len(missing)} overloads: "
             f"{', '.join(missing)} (give each a formula per Tensor input, not_differentiable"
             f" = \"<reason>\", composite_implicit = true or form_of = \"<overload>\")")
    for row in rows:
        if row.functional is not None:
            result[row.schema.full_name] = Derivative(row, "derived",
                                                      target=row.functional.schema.full_name)
    unused = sorted(set(helpers) - checker.used_helpers)
    if unused:
        fail(f"backward helpers that no formula calls: {unused}")
    return {r.schema.full_name: result[r.schema.full_name] for r in rows
            if r.schema.full_name in result}, helpers


def check_entry(checker, row, entry, fail):
    overload = row.schema.full_name
    where = f"[derivatives.{overload!r}]"
    alone = ALONE_KEYS & set(entry)
    extra = set(entry) - alone
    if "not_differentiable" in entry:
        extra -= NOT_DIFFERENTIABLE_KEYS
    if len(alone) > 1 or (alone and extra):
        fail(f"{where}: {' or '.join(sorted(alone))} stands alone in its entry" +
             (" (but for inplace and inplace_node)" if "not_differentiable" in entry else ""))
    implicit = row.kind == "composite_implicit"
    if implicit != (entry.get("composite_implicit") is True):
        fail(f"{where}: " + ("a composite_implicit overload takes its gradient from its parts:"
                             " its entry is composite_implicit = true" if implicit else
                             f"composite_implicit = true, but its kind is {row.kind}"))
    if implicit:
        return Derivative(row, "composite_implicit")
    if "not_differentiable" in entry:
        reason = entry["not_differentiable"]
        if not isinstance(reason, str) or not reason.strip():
            fail(f"{where}: not_differentiable is the reason, a sentence")
        return not_differentiable_entry(checker, row, entry, reason, where, fail)
    if "form_of" in entry:
        target = checker.by_name.get(entry["form_of"])
        if not row.schema.mutates:
            fail(f"{where}: form_of is for an in-place or out= overload; {overload} is "
                 f"functional")
        if target is None or target.schema.mutates or \
                target.schema.base != row.schema.base.rstrip("_"):
            fail(f"{where}: form_of names {entry['form_of']!r}, which is not a functional "
                 f"overload of {row.schema.base.rstrip('_')}")
        return Derivative(row, "form_of", target=entry["form_of"])
    return check_formulas(checker, row, entry, where, fail)


def not_differentiable_entry(checker, row, entry, reason, where, fail):
    """A not_differentiable entry, with what its derived in-place form records: that form
    writes self, which may have history, so it must say (inplace = "zeros" or
    "not_implemented")."""
    forms = [r for r in checker.by_name.values() if r.form == "inplace" and r.functional is row]
    inplace = entry.get("inplace")
    if forms and inplace not in INPLACE_KINDS:
        fail(f"{where}: {forms[0].schema.full_name} writes self, whose history must not go "
             f"stale: say inplace = \"zeros\" (PyTorch records a node whose gradients are "
             f"zeros, named by inplace_node) or \"not_implemented\" (PyTorch's NotImplemented "
             f"node, whose backward raises)")
    if not forms and inplace is not None:
        fail(f"{where}: inplace is for an overload that derives an in-place form")
    if "inplace_node" in entry and inplace != "zeros":
        fail(f"{where}: inplace_node names the node of inplace = \"zeros\"")
    formulas = None
    if inplace == "zeros":
        zeros = {n: "zeros_like(grad)" for t, n in row.schema.args if token_kind(t) == "tensor"}
        if "inplace_node" in entry:
            zeros["node"] = entry["inplace_node"]
        formulas = check_formulas(checker, row, zeros, f"{where} (inplace = \"zeros\")", fail)
    return Derivative(row, "not_differentiable", reason=reason, inplace=inplace,
                      inplace_formulas=formulas)


def check_formulas(checker, row, entry, where, fail):
    schema = row.schema
    types = {n: t for t, n in schema.args}
    inputs = [n for t, n in schema.args if token_kind(t) in ("tensor", "tensors") and
              not (schema.mutates and n in schema.keyword_names)]
    if schema.mutates and not (isinstance(entry.get("hand_written"), str) and
                               entry["hand_written"].strip()):
        fail(f"{where}: {row.schema.full_name} writes its argument; say form_of = "
             f"\"<functional overload>\", or hand_written = \"<why it needs its own formulas>\"")
    if not schema.mutates and "hand_written" in entry:
        fail(f"{where}: hand_written is for an in-place or out= overload")
    results, grads, outputs = outputs_of(row)
    scope = {n: token_kind(t) for n, t in types.items()}
    scope.update({n: "tensor" for n in results + grads})
    if "grads" in grads:
        scope["grads"] = "tensors"
    forward = set(types) | set(results)
    lets, let_nodes = [], {}
    for name, text in entry.get("let", {}).items():
        if name in scope:
            fail(f"{where}: let {name!r} hides a name of the overload")
        node = parse(text, f"{where} let {name}", fail)
        scope[name] = checker.kind(node, scope, f"{where} let {name}")
        lets.append((name, node))
        let_nodes[name] = node
    formulas, reads = {}, {}
    for key, value in entry.items():
        if key in META_KEYS:
            continue
        if key not in inputs:
            fail(f"{where}: {key!r} is not a Tensor argument" +
                 (f" (a {types[key]})" if key in types else ""))
        if value is False:
            formulas[key] = False
            continue
        if not isinstance(value, str):
            fail(f"{where}: {key} is a formula, or false for an input that is not "
                 f"differentiable (an index, a mask)")
        node = parse(value, f"{where} {key}", fail)
        kind = checker.kind(node, scope, f"{where} {key}")
        want = "tensors" if token_kind(types[key]) == "tensors" else "tensor"
        if kind != want:
            fail(f"{where} {key}: the formula gives {kind}, not the {want} its input needs")
        formulas[key] = node
        for name, how in checker.reads(node, let_nodes).items():
            if name in forward and reads.get(name) != "value":
                reads[name] = how
    left = [n for n in inputs if n not in formulas]
    if left:
        fail(f"{where}: no formula for the Tensor inputs {left} (write one, or {left[0]} = "
             f"false when it is not differentiable)")
    if not any(f is not False for f in formulas.values()):
        fail(f"{where}: no input has a formula; say not_differentiable = \"<reason>\"")
    values = sorted(n for n, how in reads.items() if how == "value")
    metadata = sorted(n for n, how in reads.items() if how == "metadata")
    saves, saves_metadata = entry.get("saves", []), entry.get("saves_metadata", [])
    if sorted(saves) != values:
        fail(f"{where}: saves {sorted(saves)} but the formulas read {values}")
    if sorted(saves_metadata) != metadata:
        fail(f"{where}: saves_metadata {sorted(saves_metadata)} but the formulas read only "
             f"the metadata of {metadata}")
    differentiable = entry.get("differentiable_outputs")
    if differentiable is not None and (len(outputs) < 2 or not set(differentiable) < set(outputs)):
        fail(f"{where}: differentiable_outputs is a proper subset of the named outputs "
             f"{outputs}")
    for key in ("node", "inplace_node"):
        name = entry.get(key)
        if name is not None and not (isinstance(name, str) and re.fullmatch(r"[A-Z]\w*", name)):
            fail(f"{where}: {key} is the class name of the node, as PyTorch spells it "
                 f"(\"SumBackward1\")")
    if "inplace_node" in entry and not any(r.form == "inplace" and r.functional is row
                                           for r in checker.by_name.values()):
        fail(f"{where}: inplace_node names the node of an in-place form, which "
             f"{row.schema.full_name} does not derive")
    return Derivative(row, "formula", formulas=formulas, lets=lets, saves=saves,
                      saves_metadata=saves_metadata, differentiable_outputs=differentiable,
                      hand_written=entry.get("hand_written"), calls=checker.calls,
                      kinds=checker.kinds,
                      node=entry.get("node"), inplace_node=entry.get("inplace_node"))


def parse(text, where, fail):
    try:
        return parse_formula(text)
    except FormulaError as e:
        fail(f"{where}: {e}: {text!r}")


# ---- the listing: gen_ops.py --derivatives -----------------------------------------------

def listing(derivatives):
    lines, counts = [], {k: 0 for k in ENTRY_KINDS}
    for name, d in derivatives.items():
        counts[d.kind] += 1
        if d.kind == "formula":
            inputs = ", ".join(k for k, f in d.formulas.items() if f is not False)
            saved = ", ".join(d.saves) or "nothing"
            meta = f"; sizes of {', '.join(d.saves_metadata)}" if d.saves_metadata else ""
            hand = f"; hand-written: {d.hand_written}" if d.hand_written else ""
            lines.append(f"formula             {name}: d/d {inputs}; saves {saved}{meta}{hand}")
        elif d.kind == "not_differentiable":
            inplace = {"zeros": "; its in-place form records zero gradients",
                       "not_implemented": "; its in-place form records NotImplemented"}
            lines.append(f"not differentiable  {name}: {d.reason}{inplace.get(d.inplace, '')}")
        elif d.kind == "composite_implicit":
            lines.append(f"composite implicit  {name}: from its parts")
        else:
            lines.append(f"{'form of' if d.kind == 'form_of' else 'derived':<20}{name}: "
                         f"as {d.target}")
    lines.append(f"{len(derivatives)} overloads: {counts['formula']} with formulas, "
                 f"{counts['not_differentiable']} not differentiable, "
                 f"{counts['composite_implicit']} composite implicit, {counts['form_of']} "
                 f"declared forms of another, {counts['derived']} derived out= and in-place "
                 f"forms; none unaccounted for")
    return "\n".join(lines)
