#!/usr/bin/env python3
"""check_c_api_doc.py — every public function of include/pith/*.h is documented.

Lists the functions declared with PITH_API in the public headers (the elementwise ops that
pith/ops_elementwise.h declares and lists in PITH_FORALL_UNARY_OPS / PITH_FORALL_BINARY_OPS count as documented
when their name is in the doc's list of those ops) and fails, naming them, when
docs/c_api.md does not mention one. Run by ctest as Docs.CApiComplete.

    python3 scripts/check_c_api_doc.py [docs/c_api.md]
    python3 scripts/check_c_api_doc.py --library path/to/libpith.so
        instead checks that the library exports every one of them (Consumer.InstalledTree
        runs this on the installed library).
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DECLARATION = re.compile(r"PITH_API\s+[^;(]*?\b(pith_\w+)\s*\(")
OP_LIST = re.compile(r"#define PITH_FORALL_(UNARY|BINARY)_OPS\(_\)((?:.*\\\n)*.*)")


def public_functions():
    names, generated = set(), set()
    for header in sorted(glob.glob(os.path.join(ROOT, "include", "pith", "*.h"))):
        with open(header, encoding="utf-8") as f:
            text = f.read()
        for match in DECLARATION.finditer(text):
            if "##" not in match.group(0):
                names.add(match.group(1))
        for match in OP_LIST.finditer(text):
            generated.update(re.findall(r"_\((\w+)\)", match.group(2)))
    return names, generated


def check_library(path):
    names, generated = public_functions()
    for op in generated:
        names |= {f"pith_{op}", f"pith_{op}_out", f"pith_{op}_"}
    listing = subprocess.run(["nm", "-D", "--defined-only", path], check=True,
                             capture_output=True, text=True).stdout
    exported = {line.split()[-1] for line in listing.splitlines() if line.strip()}
    missing = sorted(names - exported)
    if missing:
        print(f"check_c_api_doc.py: {path} does not export:", file=sys.stderr)
        for name in missing:
            print(f"  {name}", file=sys.stderr)
        return 1
    print(f"check_c_api_doc.py: {path} exports all {len(names)} public functions")
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "--library":
        return check_library(argv[2])
    doc_path = argv[1] if len(argv) > 1 else os.path.join(ROOT, "docs", "c_api.md")
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    names, generated = public_functions()
    # The elementwise families' three forms are documented by the doc's list of their ops.
    names -= {f"pith_{op}{suffix}" for op in generated for suffix in ("", "_out", "_")}
    missing = sorted(n for n in names if not re.search(r"\b%s\b" % re.escape(n), doc))
    missing += sorted(f"pith_{op} (and _out, _)" for op in generated
                      if not re.search(r"\b%s\b" % re.escape(op), doc))
    if missing:
        print(f"check_c_api_doc.py: {doc_path} does not document:", file=sys.stderr)
        for name in missing:
            print(f"  {name}", file=sys.stderr)
        return 1
    print(f"check_c_api_doc.py: {len(names)} functions and {len(generated)} generated "
          f"elementwise ops, all documented")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
