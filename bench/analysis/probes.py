# SPDX-License-Identifier: GPL-2.0
"""The time of each bounce, from the guest's function_graph trace.

A job flagged "probe" runs with function_graph limited (set_ftrace_filter)
to the bounce functions of block/bounce.c and to bio_endio; the probes
monitor (guest/monitors/40-probes.sh, read by monitors/probes.py)
saves the trace as probe-trace.txt.gz and the per-CPU overrun counts as
probe-overrun.txt.

What is measured, per bounced bio:

- submit: the duration of __blk_queue_bounce() (allocating the bounce bio
  and pages and, for a write, copying the data into them);
- completion: the duration of bounce_end_io_read() or
  bounce_end_io_write() less every bio_endio() nested in it. Those nested
  calls complete the ORIGINAL bio (waking fio, aio completion): their time
  is the I/O's, not the bounce's. What is left is the bounce's own
  completion work: the copy back to highmem for a read, freeing the bounce
  pages.

The durations are function_graph's, so they include the tracer's own cost
of the calls inside them; the unprobed twin of each probed job measures
what the probes cost as a whole (report.py puts the two side by side).

Line format (6.12, default options): "CPU) [mark] DURATION us | call",
where call is "name();" (a leaf), "name() {" (opens) or "}" (closes the
innermost open call on that CPU, with its duration).
"""
import gzip
import re

import numpy as np

SUBMIT = "__blk_queue_bounce"
COMPLETIONS = ("bounce_end_io_read", "bounce_end_io_write")
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
    """Per-call records from a function_graph trace.

    Returns a list of (name, duration_us, nested_endio_us): every completed
    call of a traced function, with the time of the bio_endio() calls
    nested anywhere below it. Calls cut by the start or end of the trace
    are left out.
    """
    stacks = {}
    calls = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if not m:
            continue
        cpu, dur, call = m.group(1), m.group(2), m.group(3)
        stack = stacks.setdefault(cpu, [])
        opened = _OPEN.match(call)
        if opened:
            stack.append([opened.group(1), 0.0])
            continue
        leaf = _LEAF.match(call)
        if leaf and dur is not None:
            name, us, nested = leaf.group(1), float(dur), 0.0
        elif call.startswith("}") and dur is not None:
            if not stack:
                continue        # opened before the trace began
            name, nested = stack.pop()
            us = float(dur)
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
    completion = [max(us - nested, 0.0) for name, us, nested in calls
                  if name in COMPLETIONS]
    return {"submit": np.asarray(submit, dtype=float),
            "completion": np.asarray(completion, dtype=float)}


def read_overrun(path, read_text):
    """Events lost to a full buffer, summed over CPUs; None if unknown."""
    text = read_text(path)
    if text is None:
        return None
    total = 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[1].isdigit():
            total += int(parts[1])
    return total
