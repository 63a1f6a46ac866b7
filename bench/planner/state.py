# SPDX-License-Identifier: GPL-2.0
"""plan.json: a run's resolved plan (check.plan's dict, plus when it
started, the accelerator it got and the boots planned so far), which
bench/plan keeps in the run folder between bench/compare's calls, so the
arguments are parsed once per run and the later rounds (determinism,
--until-ci) plan from the same values.
"""
import json
import os

from .boots import MATRIX_HEADER


def load(run):
    with open(os.path.join(run, "plan.json"), encoding="utf-8") as f:
        return json.load(f)


def write_json(file, obj):
    """obj into file, atomically: one interrupted keeps the old file."""
    with open(file + ".tmp", "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")
    os.replace(file + ".tmp", file)


def save(run, plan):
    write_json(os.path.join(run, "plan.json"), plan)


def append_rows(run, rows, header=False):
    """Rows onto the run's matrix.tsv (with its header first when asked)."""
    with open(os.path.join(run, "matrix.tsv"), "w" if header else "a", encoding="utf-8") as f:
        for r in ([MATRIX_HEADER] if header else []) + rows:
            f.write("\t".join(map(str, r)) + "\n")
