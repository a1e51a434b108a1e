#!/usr/bin/env python3
"""expand_op.py NAME — what the op table makes of one operator.

Prints the op table rows whose id is NAME or one of its forms (NAME_out, NAME_ for the
in-place one, NAME_<overload> ...), then the code the preprocessor generates for them in
kernels/op_register.c: the typed call pith_call_<id>, the redispatch functions, the boxed
adapter and the registration; and the Python surface row of the name. Needs a C compiler
(cc -E); reads only this checkout.

    python3 scripts/expand_op.py add
    python3 scripts/expand_op.py max --rows     # the rows only
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
INCLUDES = ["-I", os.path.join(ROOT, "include"), "-I", ROOT]


def preprocess(source):
    with tempfile.NamedTemporaryFile("w", suffix=".c", delete=False) as f:
        f.write(source)
        path = f.name
    try:
        return subprocess.run(["cc", "-E", "-P", "-std=c11", *INCLUDES, path], check=True,
                              capture_output=True, text=True).stdout
    finally:
        os.unlink(path)


def rows():
    """(id, schema, kind, args) of every row of PITH_FORALL_OPS."""
    text = preprocess('#include "kernels/op_table.h"\n'
                      '#define PITH_ROW_(id, schema, kind, ...) @ROW id @@ schema @@ kind '
                      '@@ #__VA_ARGS__ @END\n'
                      'PITH_FORALL_OPS(PITH_ROW_)\n'
                      '#define PITH_PYTHON_ROW_(n, variants, numbers) @PY n variants numbers @END\n'
                      'PITH_FORALL_PYTHON_SURFACE(PITH_PYTHON_ROW_)\n')
    found, surface = [], {}
    for m in re.finditer(r"@ROW (.*?) @END", text, re.S):
        ident, schema, kind, args = (p.strip() for p in m.group(1).split("@@"))
        found.append((ident, " ".join(re.findall(r'"((?:[^"\\]|\\.)*)"', schema)), kind,
                      args.strip('"')))
    for m in re.finditer(r"@PY (\S+) (\S+) (\S+) @END", text):
        surface[m.group(1)] = (m.group(2), m.group(3))
    return found, surface


def base_name(schema):
    return schema.split("(")[0].split(".")[0].split("::")[-1]


def pretty(code):
    """One statement a line: enough to read a macro expansion."""
    code = re.sub(r"\s+", " ", code)
    out, depth = [], 0
    for piece in re.split(r"(?<=[;{}])", code):
        piece = piece.strip()
        if not piece:
            continue
        if piece.startswith("}"):
            depth = max(0, depth - 1)
        out.append("    " * depth + piece)
        if piece.endswith("{"):
            depth += 1
    return "\n".join(out)


def generated(ids):
    """The functions op_register.c generates for `ids`."""
    text = preprocess(open(os.path.join(ROOT, "kernels", "op_register.c")).read()
                      .replace('#include "kernels/ops_internal.h"',
                               f'#include "{os.path.join(ROOT, "kernels", "ops_internal.h")}"'))
    blocks = []
    names = "|".join(re.escape(i) for i in ids)
    pattern = re.compile(rf"\b(pith_call_|pith_redispatch_|redispatch_general_|boxed_adapter_)"
                         rf"({names})\b\s*\(")
    for m in pattern.finditer(text):
        start = text.rfind(";", 0, m.start())
        start = max(start, text.rfind("}", 0, m.start())) + 1
        brace = text.find("{", m.end())
        semicolon = text.find(";", m.end())
        if semicolon != -1 and semicolon < brace:
            continue  # a declaration or a call, not a definition
        depth, i = 0, brace
        while i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
            if depth == 0:
                break
        blocks.append(pretty(text[start:i]))
    return blocks


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="an op table id or schema base name (add, max, relu)")
    parser.add_argument("--rows", action="store_true", help="print the rows only")
    options = parser.parse_args()
    table, surface = rows()
    mine = [r for r in table if r[0] == options.name or base_name(r[1]).rstrip("_") ==
            options.name.rstrip("_")]
    if not mine:
        print(f"expand_op.py: no op table row is named {options.name!r}", file=sys.stderr)
        return 1
    print("# rows (kernels/op_table.h)")
    for ident, schema, kind, args in mine:
        kernels = (f"{ident}_composite" if kind == "COMPOSITE"
                   else f"{ident}_cpu, {ident}_meta")
        print(f"{ident:16s} {kind:9s} {schema}\n{'':26s}args {args}; kernels {kernels}")
    py = surface.get(options.name.rstrip("_"))
    print("\n# Python surface (Note [The Python surface of the op table])")
    print(f"{options.name}: {py[0]}, numbers {py[1]}" if py else f"{options.name}: no row")
    if options.rows:
        return 0
    print("\n# generated (kernels/op_register.c through dispatch/op_macros.h)")
    for block in generated([r[0] for r in mine]):
        print(block + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
