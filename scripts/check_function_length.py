#!/usr/bin/env python3
"""check_function_length.py — lists the hand-written C functions that are over 100 lines.

    python3 scripts/check_function_length.py            lists them; exits 1 if there is any
    python3 scripts/check_function_length.py --all      lists every function, longest first
    python3 scripts/check_function_length.py --limit N  another limit than 100
    python3 scripts/check_function_length.py PATH...    only these files or folders

It scans the .c and .h files under core/, dispatch/, kernels/, compile/ and
python_bindings/_C/, skipping folders named `generated`. A function's length is the count
of lines from its opening brace to its closing brace, both included. The scan is a brace
matcher, not a parser: comments, string and character literals and preprocessor lines are
blanked first, and a brace at file level opens a function when the code before it ends in
`)` (a struct, enum or initializer brace does not).
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ("core", "dispatch", "kernels", "compile", "python_bindings/_C")
SKIP_DIRS = {"generated"}
SUFFIXES = (".c", ".h")
LIMIT = 100


def blank_non_code(text):
    """The text with comments, literals and preprocessor lines replaced by spaces; newlines
    are kept, so offsets and line numbers stay those of the file."""
    out = list(text)
    i, n = 0, len(text)
    line_start = True

    def blank(start, end):
        for k in range(start, end):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        c = text[i]
        if line_start and c == "#":
            # A preprocessor line, with its backslash continuations (and any comment in it).
            j = i
            while j < n:
                if text[j] == "\n" and text[j - 1] != "\\":
                    break
                if text.startswith("/*", j):
                    end = text.find("*/", j + 2)
                    j = n if end < 0 else end + 2
                    continue
                j += 1
            blank(i, j)
            i = j
            continue
        if c == "\n":
            line_start = True
            i += 1
            continue
        if c in " \t\r\f\v":
            i += 1
            continue
        line_start = False
        if text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            blank(i, end)
            i = end
        elif text.startswith("//", i):
            end = text.find("\n", i)
            end = n if end < 0 else end
            blank(i, end)
            i = end
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            blank(i, min(j + 1, n))
            i = j + 1
        else:
            i += 1
    return "".join(out)


NAME_BEFORE_PAREN = re.compile(r"([A-Za-z_]\w*)\s*$")


def function_name(code, close_paren):
    """The identifier before the `(` that matches the `)` at close_paren, or None."""
    depth = 0
    for k in range(close_paren, -1, -1):
        if code[k] == ")":
            depth += 1
        elif code[k] == "(":
            depth -= 1
            if depth == 0:
                match = NAME_BEFORE_PAREN.search(code[max(0, k - 200):k])
                return match.group(1) if match else None
    return None


def functions(path):
    """Yields (name, first line, last line) of each function defined in the file."""
    with open(path, encoding="utf-8", errors="replace") as f:
        code = blank_non_code(f.read())
    depth = 0
    opened = None  # (name, offset) of the function whose body is open
    for offset, c in enumerate(code):
        if c == "{":
            if depth == 0:
                before = code[:offset].rstrip()
                if before.endswith(")"):
                    name = function_name(before, len(before) - 1)
                    if name:
                        opened = (name, offset)
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0 and opened:
                name, start = opened
                yield name, code.count("\n", 0, start) + 1, code.count("\n", 0, offset) + 1
                opened = None
            depth = max(depth, 0)


def source_files(paths):
    for top in paths:
        if os.path.isfile(top):
            yield top
            continue
        for directory, subdirs, files in os.walk(top):
            subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS)
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.join(directory, name)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="*", help="files or folders (default: the C folders)")
    parser.add_argument("--limit", type=int, default=LIMIT)
    parser.add_argument("--all", action="store_true", help="list every function")
    args = parser.parse_args()
    paths = args.paths or [os.path.join(ROOT, folder) for folder in FOLDERS]
    found = []
    for path in source_files(paths):
        relative = os.path.relpath(path, ROOT)
        for name, first, last in functions(path):
            found.append((last - first + 1, relative, first, name))
    found.sort(key=lambda f: (-f[0], f[1], f[2]))
    long = [f for f in found if f[0] > args.limit]
    for length, relative, line, name in (found if args.all else long):
        print(f"{relative}:{line}: {name}: {length} lines")
    if long:
        print(f"{len(long)} function(s) over {args.limit} lines", file=sys.stderr)
        return 1
    print(f"check_function_length.py: {len(found)} functions, none over {args.limit} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
