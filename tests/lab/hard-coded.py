#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Print every code line that names a serial, a disk or a kernel variant of
bench/lab.conf outside bench/lab.conf itself: comments, docstrings and
the matrix and job files (configuration) and the documentation (*.md) do
not count.

  tests/lab/hard-coded.py REPO
"""
import ast
import os
import re
import sys

ROOT = sys.argv[1]
SCAN = ["bench", "lib", "guest", "run.sh", "kernels/build", "Makefile"]
SKIP = re.compile(r"^(bench/lab\.conf|bench/matrix|bench/jobs/|guest/helpers/tests/)|\.md$")


def names():
    """The disks and variants of lab.conf and the serials of its channels,
    as bench/lab/labconf.py (lab.conf's one parser) reads them."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    from lab import labconf
    with open(os.path.join(ROOT, "bench", "lab.conf"), encoding="utf-8") as f:
        lab = labconf.parse(f.read())
    out = set(lab["disk"]) | set(lab["role"])
    out |= {c["find"][len("serial:"):] for c in lab["channel"].values()
            if c["find"].startswith("serial:")}
    return out


def docstring_lines(text):
    """Line numbers of docstrings: prose, not code."""
    lines = set()
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return lines
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and \
                isinstance(getattr(body[0], "value", None), ast.Constant) and \
                isinstance(body[0].value.value, str):
            lines.update(range(body[0].lineno, body[0].end_lineno + 1))
    return lines


def files():
    for top in SCAN:
        path = os.path.join(ROOT, top)
        if os.path.isfile(path):
            yield top
        for d, _, fs in os.walk(path):
            for f in fs:
                rel = os.path.relpath(os.path.join(d, f), ROOT)
                if not SKIP.search(rel) and "__pycache__" not in rel:
                    yield rel


def main():
    pat = re.compile(r"(?<![A-Za-z0-9_.-])(" + "|".join(map(re.escape, sorted(names()))) +
                     r")(?![A-Za-z0-9_-])")
    found = 0
    for rel in files():
        try:
            with open(os.path.join(ROOT, rel), encoding="utf-8") as f:
                text = f.read()
        except (UnicodeDecodeError, OSError):
            continue
        python = rel.endswith(".py") or text.startswith("#!/usr/bin/python3")
        skip = docstring_lines(text) if python else set()
        for n, line in enumerate(text.splitlines(), 1):
            code = line.split("#", 1)[0] if not rel.endswith((".c", ".h")) else line
            if n in skip or re.match(r"\s*(//|\*|/\*)", line):
                continue
            if pat.search(code):
                print(f"{rel}:{n}: {line.strip()}")
                found += 1
    sys.exit(1 if found else 0)


main()
