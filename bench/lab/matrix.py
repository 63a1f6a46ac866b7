# SPDX-License-Identifier: GPL-2.0
"""bench/matrix, the benchmark matrix: its one parser.

Each line "SET KEY VALUES..." ('#' starts a comment line); a key on
several lines of a set has the values of them all. A key a set does not name is None.
"""
import os

MATRIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "matrix")


def parse(text):
    """{set: {key: [value, ...]}} in file order."""
    sets = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) < 2 or words[0].startswith("#"):
            continue
        sets.setdefault(words[0], {}).setdefault(words[1], []).extend(words[2:])
    return sets


def load(path=MATRIX):
    with open(path, encoding="utf-8") as f:
        return parse(f.read())
