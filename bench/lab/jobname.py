# SPDX-License-Identifier: GPL-2.0
"""What a job's name says (bench/jobs/NAME.fio): the lab's one parser of
the job-name grammar, FAMILY-[rand|seq]{read|write}-SIZE-qdN[REST]
(SIZE 4k, 1m, 512; REST "" or "+probe", the probed twin tidy.py names).
What a user's job name does not say is "" or None, never guessed.
"""
import re
from typing import NamedTuple

SWEEP, PRESSURE = "sweep", "pressure"
_ACCESS = re.compile(r"(rand|seq)(read|write)")
# [rand|seq]{read|write}-SIZE-qdN, and whatever follows
_SHAPE = re.compile(r"(?:(rand|seq)?(read|write)-)?([0-9]+)([km]?)-qd([0-9]+)(.*)$")
_UNIT = {"": 1, "k": 1 << 10, "m": 1 << 20}
# The lab's reference I/O: one page, one at a time.
PAGE_BYTES = 4096


class Shape(NamedTuple):
    pattern: str        # "rand", "seq" or ""
    dir: str            # "read", "write" or ""
    bytes: int
    qd: int
    rest: str           # what follows -qdN: "" or e.g. "+probe"


def family(job):
    """"lat" of "lat-randread-4k-qd1"; "" for a name without a "-"."""
    head, dash, _ = str(job).partition("-")
    return head if dash else ""


def is_sweep(job):
    """A job of the I/O-size sweep (sweep-*, sweep.py)."""
    return family(job) == SWEEP


def is_pressure(job):
    """A job run under memory pressure (pressure-*, memory.py)."""
    return family(job) == PRESSURE


def is_writeback(job):
    """A job about writeback (pressure-writeback)."""
    return "writeback" in str(job)


def is_streaming(job):
    """A sequential or buffered job: its throughput is its bandwidth."""
    return "seq" in str(job) or "buffered" in str(job)


def directions(job):
    """The directions a name mentions, read first."""
    return [d for d in ("read", "write") if d in str(job)]


def access(job):
    """(pattern, direction) of a name's first {rand|seq}{read|write}, else None."""
    m = _ACCESS.search(str(job))
    return (m.group(1), m.group(2)) if m else None


def shape(job):
    """The Shape of a name's first [PATTERN DIR-]SIZE-qdN, else None."""
    m = _SHAPE.search(str(job))
    if not m:
        return None
    return Shape(m.group(1) or "", m.group(2) or "", int(m.group(3)) * _UNIT[m.group(4)],
                 int(m.group(5)), m.group(6))


def sweep_shape(job):
    """{"pattern", "dir", "bytes", "qd"} of a sweep job
    (sweep-{rand,seq}{read,write}-SIZE-qdN, nothing after), else None."""
    s = shape(job) if is_sweep(job) else None
    if s and s.pattern and not s.rest and str(job).startswith(f"{SWEEP}-{s.pattern}{s.dir}-"):
        return {"pattern": s.pattern, "dir": s.dir, "bytes": s.bytes, "qd": s.qd}
    return None


def is_io(job, pattern=None, direction=None, nbytes=None, qd=None, rest=None):
    """Whether a name's shape is this (None: any), e.g. is_io(job,
    "rand", "read", 4096, 1)."""
    s = shape(job)
    return s is not None and all(want is None or got == want
                                 for got, want in zip(s, (pattern, direction, nbytes, qd, rest)))


def is_page_qd1(job):
    """A 4 KiB QD1 job (not its probed twin): the reference I/O."""
    return is_io(job, nbytes=PAGE_BYTES, qd=1, rest="")
