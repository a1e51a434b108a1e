#!/usr/bin/env python3
"""gen_op_docs.py — the list of pith's op functions and methods in docs/python.md.

Writes the table between the `<!-- ops-list -->` and `<!-- /ops-list -->` markers of
docs/python.md from the op table's Python surface (pith._C._surface(), Note [The Python
surface of the op table]) and the signatures the binder reports (each Function's
__doc__), so the docs list cannot drift from the table.

    python3 scripts/gen_op_docs.py            rewrites the list
    python3 scripts/gen_op_docs.py --check    fails when the list is stale
                                              (tests/python/test_op_docs.py runs this)
"""
import argparse
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join(ROOT, "docs", "python.md")
BEGIN, END = "<!-- ops-list -->", "<!-- /ops-list -->"


def signatures(fn):
    """The signatures of a Function or Method, one a line after its name."""
    return [line[len(fn.__name__):] for line in (fn.__doc__ or "").splitlines()]


def table(pith):
    lines = ["| op | `pith.` | `Tensor.` | signatures (as a function) |",
             "| --- | --- | --- | --- |"]
    for name, variants in sorted(pith._C._surface()):
        if variants == "internal":
            continue
        function = variants in ("both", "function")
        method = variants in ("both", "method")
        inplace = method and isinstance(getattr(pith._C.Tensor, name + "_", None),
                                        pith._C.Method)
        shown = getattr(pith._C, name) if function else getattr(pith._C.Tensor, name)
        sigs = "<br>".join(f"`{s}`" for s in signatures(shown))
        lines.append(f"| `{name}` | {'yes' if function else '-'} | "
                     f"{'yes' if method else '-'}{f', `{name}_`' if inplace else ''} | "
                     f"{sigs} |")
    return "\n".join(lines)


def render(text, pith):
    if BEGIN not in text or END not in text:
        raise SystemExit(f"gen_op_docs.py: {DOC} has no {BEGIN} ... {END} markers")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{BEGIN}\n{table(pith)}\n{END}{tail}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    options = parser.parse_args()
    import pith
    with open(DOC, encoding="utf-8") as f:
        old = f.read()
    new = render(old, pith)
    if options.check:
        if new != old:
            print("docs/python.md: the ops list is stale (run scripts/gen_op_docs.py)")
            return 1
        return 0
    if new != old:
        with open(DOC, "w", encoding="utf-8") as f:
            f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
