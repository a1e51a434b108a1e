#!/usr/bin/env python3
"""check_kernel_names.py EXECUTABLE — every kernel of a built-in op is written out as text.

Runs EXECUTABLE (tests/ops/kernel_addresses.c, linked with the library's objects), which
prints the address of each op's kernel at CPU and at Meta, names each address from the
executable's symbol table (nm), and checks that a checked-in C file defines that name
(a line `pith_status <name>(`), so that `grep -rn <name>` finds every kernel, generated or
not. Exits 1 naming the kernels that are made by macros or otherwise not written out.
Run by ctest as Ops.EveryKernelIsWrittenOut.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main(argv):
    if len(argv) != 2:
        raise SystemExit("usage: check_kernel_names.py EXECUTABLE")
    listing = subprocess.run([argv[1]], check=True, capture_output=True, text=True).stdout
    symbols = {}
    for line in subprocess.run(["nm", "--defined-only", argv[1]], check=True,
                               capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tT":
            symbols.setdefault(int(parts[0], 16), parts[2])
    by_name = {name: address for address, name in symbols.items()}
    names, unnamed = {}, []
    lines = listing.splitlines()
    load_bias = int(lines[0].split()[2], 16) - by_name["main"]
    for line in lines[1:]:
        op, key, address = line.split()
        name = symbols.get(int(address, 16) - load_bias)
        if name is None:
            unnamed.append(f"{op} at {key}")
        else:
            names.setdefault(name, f"{op} at {key}")
    files = subprocess.run(["git", "-C", ROOT, "ls-files", "--cached", "--others",
                            "--exclude-standard", "*.c", "*.inc"], check=True,
                           capture_output=True, text=True).stdout.split()
    defined = set()
    definition = re.compile(r"^pith_status\s+(\w+)\(", re.M)
    for path in files:
        full = os.path.join(ROOT, path)
        if os.path.exists(full):
            with open(full, encoding="utf-8") as f:
                defined.update(definition.findall(f.read()))
    missing = sorted(f"{name} ({where})" for name, where in names.items() if name not in defined)
    for problem, items in (("has no symbol", unnamed), ("is not defined as text", missing)):
        for item in items[:400]:
            print(f"check_kernel_names.py: kernel {item} {problem}", file=sys.stderr)
        if len(items) > 400:
            print(f"check_kernel_names.py: ... and {len(items) - 40} more", file=sys.stderr)
    if unnamed or missing:
        return 1
    print(f"check_kernel_names.py: all {len(names)} kernels of the built-in ops are defined "
          f"as text in checked-in files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
