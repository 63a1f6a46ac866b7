# SPDX-License-Identifier: GPL-2.0
"""The readers of the guest's monitors: one module per monitor, NAME.py,
beside its guest piece guest/monitors/NN-NAME.sh (see the README here and
guest/monitors/README). tidy.py runs every reader on every measured job
and knows none of their files.

A reader module defines:

  GUEST        the file name of its guest piece in guest/monitors/
               ("20-bounce-hist.sh"); the readers run in that order
  METRICS      the metric keys it gives, each defined in metrics.py (the
               one place metric keys are defined); no two readers give
               the same key
  read(job)    {metric: value} of one measured job (a Job below), in the
               order it wants its rows; a key is left out, never set to
               0, where the job did not measure it

and, if it needs them:

  JOB_COLUMNS  {column: default}: columns of the job table (jobs.csv)
               that every job row has, measured or not
  read_boot(boot)  {column: value} once per boot (a Boot below): columns
               of every job row of that boot (copyref)
  moved_bytes(job) the bytes the block layer moved for the job, or None
               when unknown: the denominator of every per-GiB figure
               (proc; fio's own bytes where no reader knows)

A reader records what is not a metric (a state, a count of calls) in
job.info, a column of the job table each, and what the analysis should
say about it with job.warn(text).
"""
import importlib
import os
import pkgutil
from functools import cached_property

from lab import labconf as L
from .. import metrics as M
from .. import rawfiles as R

GIB = 1 << 30
SECTOR = 512
USER_HZ = 100           # /proc/stat ticks, fixed at 100 on x86
PAGE_KB = 4


def delta(before, after, keys):
    """Sum of after-before over the keys both snapshots have; None if none."""
    common = [k for k in keys if k in before and k in after]
    if not common:
        return None
    return sum(after[k] - before[k] for k in common)


class Boot:
    """One boot folder, as the readers see it: dir is the boot's folder
    on the host (serial.log, build-info.json, clock, what a recorder
    outside the guest wrote: insnprof.txt), guest_dir what the guest wrote
    (its results stream). lab is the run's lab.conf (labconf.load), None
    when the job is read on its own; cache a dict the readers may keep
    what they read once per boot in, under their own names."""

    def __init__(self, boot_dir, lab=None):
        self.dir = boot_dir
        self.guest_dir = os.path.join(boot_dir, "guest") if boot_dir else None
        self.lab = lab
        self.cache = {}

    @cached_property
    def ns_per_insn(self):
        """The guest time of one instruction where the boot ran on an
        exact clock (lab.conf's icount shift S: 2^S ns), else None (also
        when there is no lab.conf to say)."""
        if self.lab is None:
            return None
        name = (R.read_text(self.path("clock")) or "").strip()
        icount = L.clock(self.lab, name).get("icount")
        return 2 ** int(icount) if str(icount or "").isdigit() else None

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def guest(self, *parts):
        return os.path.join(self.guest_dir, *parts)


class Job:
    """One measured job, as the readers see it.

    dir is its folder (BOOT/guest/jobs/NN-DISK-JOB), name that folder's
    name, index its number NN (the job's place in the boot's plan), boot
    the Boot it ran in (default: the boot folder the job folder is in).
    fio, directions and gib are read once and shared.
    """

    def __init__(self, job_dir, boot=None, rel=None):
        self.dir = job_dir
        self.name = os.path.basename(os.path.normpath(job_dir))
        head = self.name.split("-", 1)[0]
        self.index = int(head) if head.isdigit() else None
        if boot is None:    # BOOT/guest/jobs/NAME
            boot = os.path.dirname(os.path.dirname(os.path.dirname(
                os.path.normpath(job_dir))))
        self.boot = boot if isinstance(boot, Boot) else Boot(boot)
        self.rel = rel or self.name
        self.info = {}
        self.warnings = []

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def text(self, *parts):
        """A small file of the job, stripped; None when missing."""
        return R.read_text(self.path(*parts))

    def warn(self, text):
        self.warnings.append(f"{self.rel}: {text}")

    @cached_property
    def fio(self):
        return R.read_fio(self.path("fio.json"))

    @cached_property
    def directions(self):
        return R.fio_directions(self.fio)

    @cached_property
    def gib(self):
        """GiB the block layer moved on the job's device (a reader's
        moved_bytes: diskstats); fio's io_bytes in runs from before that
        (they count page-cache reads that never reach the disk); None when
        nothing moved or nothing says."""
        for r in READERS:
            fn = getattr(r, "moved_bytes", None)
            moved = fn(self) if fn else None
            if moved is not None:
                return moved / GIB if moved > 0 else None
        moved = sum(rec["io_bytes"] for rec in self.directions.values())
        return moved / GIB if moved > 0 else None


def _load():
    mods = [importlib.import_module(f"{__name__}.{m.name}")
            for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_")]
    seen = {}
    for mod in mods:
        short = mod.__name__.rsplit(".", 1)[1]
        for attr in ("GUEST", "METRICS", "read"):
            if not hasattr(mod, attr):
                raise ValueError(f"monitor reader {short}: no {attr}")
        for key in mod.METRICS:
            if key not in M.METRICS:
                raise ValueError(f"monitor reader {short}: metric {key} is not in metrics.py")
            if key in seen:
                raise ValueError(f"metric {key} given by two readers: {seen[key]} and {short}")
            seen[key] = short
    return sorted(mods, key=lambda m: m.GUEST)


READERS = _load()


def name(reader):
    """The monitor's name: its guest piece's, without NN- and .sh."""
    return name_of_piece(reader.GUEST)


def job_columns():
    """The columns every job row has, readers in order."""
    out = {}
    for r in READERS:
        out.update(getattr(r, "JOB_COLUMNS", {}))
    return out


def read_boot(boot):
    """{column: value} of every reader's read_boot for one boot (a Boot
    or a boot folder)."""
    boot = boot if isinstance(boot, Boot) else Boot(boot)
    out = {}
    for r in READERS:
        fn = getattr(r, "read_boot", None)
        if fn:
            out.update(fn(boot))
    return out


def read_job(job):
    """[(metric, value)] of every reader for one measured job, readers in
    order. A key a reader does not list in METRICS is its bug: raised."""
    rows = []
    for r in READERS:
        got = r.read(job)
        bad = set(got) - set(r.METRICS)
        if bad:
            raise ValueError(f"monitor reader {name(r)} gave metrics it does not "
                             f"list: {sorted(bad)}")
        rows += [(k, v) for k, v in got.items()]
    return rows


def unpaired(guest_dir, readers=None):
    """(guest pieces without a reader, readers without a guest piece):
    the NN-NAME.sh files of guest_dir (guest/monitors) against the
    readers' GUEST, each reader named NAME (with "_" for "-")."""
    readers = READERS if readers is None else readers
    try:
        pieces = sorted(f for f in os.listdir(guest_dir) if f.endswith(".sh"))
    except OSError:
        pieces = []
    claimed = {r.GUEST: r.__name__.rsplit(".", 1)[1] for r in readers}
    lonely = [p for p in pieces if p not in claimed]
    orphans = [m for g, m in claimed.items()
               if g not in pieces or name_of_piece(g).replace("-", "_") != m]
    return lonely, sorted(orphans)


def name_of_piece(piece):
    """"20-bounce-hist.sh" -> "bounce-hist"."""
    return piece[:-3].split("-", 1)[1] if "-" in piece else piece[:-3]


__all__ = ["Boot", "Job", "READERS", "delta", "job_columns", "name", "name_of_piece",
           "read_boot", "read_job", "unpaired", "GIB", "SECTOR", "USER_HZ", "PAGE_KB"]
