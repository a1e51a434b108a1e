#!/usr/bin/env python3
"""notes.py — the index of the `Note [Title]` blocks in pith's code.

A Note is defined where a comment line starts with `Note [Title]` (after the comment leader:
`/*`, `*`, `//` or `#`); everything else that mentions `Note [Title]` ("See Note [...]") is a
reference. Titles may wrap across comment lines in references.

    python3 scripts/notes.py                       prints the index as a markdown table
    python3 scripts/notes.py --check docs/architecture.md
        fails when a Note is defined twice, when a reference names no Note, or when the
        index between the `<!-- notes-index -->` markers of the file differs from the code
        (then run: python3 scripts/notes.py --update docs/architecture.md)
    python3 scripts/notes.py --update docs/architecture.md   rewrites that index
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SOURCE_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".py", ".pyi", ".sh", ".cmake", ".txt", ".in",
                   ".toml", ".inc")
SKIP_DIRS = {".git", ".venv", "node_modules", "__pycache__"}
BEGIN, END = "<!-- notes-index -->", "<!-- /notes-index -->"

DEFINITION = re.compile(r"^\s*(?:/\*+|\*|//|#)\s*Note \[([^\]]+)\]\s*$")
LEADER = re.compile(r"^\s*(?:/\*+|\*+/?|//|#)\s?")
REFERENCE = re.compile(r"Note \[([^\]]+)\]")
PLACEHOLDERS = {"...", "…", "Title"}  # how docs and comments name "some Note"


def source_files():
    for directory, subdirs, files in os.walk(ROOT):
        subdirs[:] = sorted(d for d in subdirs
                            if d not in SKIP_DIRS and not d.startswith("build"))
        for name in sorted(files):
            if name.endswith(SOURCE_SUFFIXES) and name != "notes.py":
                yield os.path.join(directory, name)


def scan():
    """Returns ({title: [files]}, [(file, title)] of references)."""
    definitions, references = {}, []
    for path in source_files():
        relative = os.path.relpath(path, ROOT)
        if relative.startswith("docs" + os.sep):
            continue
        try:
            with open(path, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (UnicodeDecodeError, OSError):
            continue
        for line in lines:
            match = DEFINITION.match(line)
            if match:
                definitions.setdefault(match.group(1), []).append(relative)
        # References: join comment text so that titles wrapped across lines are whole.
        text = " ".join(LEADER.sub("", line).strip() for line in lines)
        text = re.sub(r"\s+", " ", text)
        for match in REFERENCE.finditer(text):
            if match.group(1) not in PLACEHOLDERS:
                references.append((relative, match.group(1)))
    return definitions, references


def index_markdown(definitions):
    rows = ["| Note | defined in |", "| --- | --- |"]
    for title in sorted(definitions, key=str.lower):
        files = ", ".join(f"`{f}`" for f in definitions[title])
        rows.append(f"| {title} | {files} |")
    return "\n".join(rows)


def problems_in(definitions, references):
    problems = []
    for title, files in sorted(definitions.items()):
        if len(files) > 1:
            problems.append(f"Note [{title}] is defined more than once: {', '.join(files)}")
    for path, title in references:
        if title not in definitions:
            problems.append(f"{path}: refers to Note [{title}], which no file defines")
    return problems


def doc_sections(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    start, end = text.find(BEGIN), text.find(END)
    if start < 0 or end < start:
        sys.exit(f"notes.py: {path} has no {BEGIN} ... {END} section")
    return text[: start + len(BEGIN)], text[start + len(BEGIN): end], text[end:]


def main(argv):
    definitions, references = scan()
    table = index_markdown(definitions)
    if len(argv) == 1:
        print(table)
        return 0
    if len(argv) != 3 or argv[1] not in ("--check", "--update"):
        sys.exit(__doc__)
    head, body, tail = doc_sections(argv[2])
    if argv[1] == "--update":
        with open(argv[2], "w", encoding="utf-8") as f:
            f.write(head + "\n" + table + "\n" + tail)
        print(f"notes.py: wrote {len(definitions)} notes to {argv[2]}")
        return 0
    problems = problems_in(definitions, references)
    if body.strip() != table.strip():
        problems.append(f"the Note index in {argv[2]} is out of date: run "
                        f"`python3 scripts/notes.py --update {argv[2]}`")
    for problem in problems:
        print(f"notes.py: {problem}", file=sys.stderr)
    if problems:
        return 1
    print(f"notes.py: {len(definitions)} notes, {len(references)} references, index up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
