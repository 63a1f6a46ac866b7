# SPDX-License-Identifier: GPL-2.0
"""plan.json: a run's resolved plan (check.plan's dict, plus when it
started, the accelerator it got and the boots planned so far), which
bench/plan keeps in the run folder between bench/compare's calls, so the
arguments are parsed once per run and the later rounds (determinism,
--until-ci) plan from the same values.
"""
import json
import os


def path(run):
    return os.path.join(run, "plan.json")


def load(run):
    with open(path(run), encoding="utf-8") as f:
        return json.load(f)


def write_json(file, obj):
    """obj into file, atomically: one interrupted keeps the old file."""
    with open(file + ".tmp", "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(file + ".tmp", file)


def save(run, plan):
    write_json(path(run), plan)


def append_rows(run, rows, header=False):
    """Rows onto the run's matrix.tsv (with its header first when asked)."""
    from .boots import MATRIX_HEADER
    with open(os.path.join(run, "matrix.tsv"), "w" if header else "a", encoding="utf-8") as f:
        if header:
            f.write("\t".join(MATRIX_HEADER) + "\n")
        for r in rows:
            f.write("\t".join(map(str, r)) + "\n")
