# SPDX-License-Identifier: GPL-2.0
"""The time of each bounce, from the guest's function_graph trace.

A job flagged "probe" runs function_graph on the bounce functions of
block/bounce.c and on bio_endio; the probes monitor
(guest/monitors/40-probes.sh, read by monitors/probes.py) saves the trace
(probe-trace.txt.gz) and the per-CPU overrun counts (probe-overrun.txt).
Per bounced bio:

- submit: __blk_queue_bounce() (allocating the bounce bio and pages and,
  for a write, copying the data into them);
- completion: bounce_end_io_read() or bounce_end_io_write() less every
  bio_endio() nested in it (they complete the ORIGINAL bio: the I/O's
  time, not the bounce's): the copy back to highmem for a read, freeing
  the bounce pages.

The durations include the tracer's cost of the calls inside them; the
unprobed twin of each probed job measures what the probes cost
(report.py puts the two side by side). Line format (6.12):
"CPU) [mark] DURATION us | call", call "name();" (a leaf), "name() {"
(opens) or "}" (closes the innermost open call on its CPU, with its
duration).
"""
import gzip
import re

import numpy as np

from . import insnprof as X

SUBMIT = "__blk_queue_bounce"
ENDIO = "bio_endio"

_LINE = re.compile(r"^\s*(\d+)\)\s+(?:[-+!#*@$]\s+)?(?:(\d+(?:\.\d+)?)\s+us\s+)?\|\s*(.*?)\s*$")
_OPEN = re.compile(r"^([A-Za-z0-9_.]+)\(\)\s*\{$")
_LEAF = re.compile(r"^([A-Za-z0-9_.]+)\(\);$")


def read_trace_text(path):
    """The trace text, or None when the file is missing or unreadable."""
    try:
        with gzip.open(path, "rt", errors="replace") as f:
            return f.read()
    except (OSError, EOFError):
        return None


def parse(text):
    """[(name, duration_us, nested_endio_us)] of a function_graph trace: every completed call of a
    traced function, with the time of the bio_endio() calls nested anywhere below it (calls
    cut by the trace's start or end are left out)."""
    stacks, calls = {}, []
    for m in filter(None, map(_LINE.match, text.splitlines())):
        cpu, dur, call = m.groups()
        stack = stacks.setdefault(cpu, [])
        opened = _OPEN.match(call)
        if opened:
            stack.append([opened.group(1), 0.0])
            continue
        leaf = _LEAF.match(call)
        if leaf and dur is not None:
            name, us, nested = leaf.group(1), float(dur), 0.0
        elif call.startswith("}") and dur is not None and stack:   # else opened before the trace
            (name, nested), us = stack.pop(), float(dur)
        else:
            continue
        calls.append((name, us, nested))
        if name == ENDIO:
            for frame in stack:
                frame[1] += us
    return calls


def summary(calls):
    """Submit and completion times per bounced bio: {"submit": array,
    "completion": array} in µs (completion is self time, see above)."""
    submit = [us for name, us, _ in calls if name == SUBMIT]
    completion = [max(us - nested, 0.0) for name, us, nested in calls if name in X.BOUNCE_ENDS]
    return {"submit": np.asarray(submit, dtype=float),
            "completion": np.asarray(completion, dtype=float)}


def read_overrun(path, read_text):
    """Events lost to a full buffer, summed over CPUs; None if unknown."""
    text = read_text(path)
    if text is None:
        return None
    return sum(int(p[1]) for p in map(str.split, text.splitlines())
               if len(p) == 2 and p[1].isdigit())
