# SPDX-License-Identifier: GPL-2.0
"""The readers of the guest's monitors, one module per monitor (NAME.py,
beside guest/monitors/NN-NAME.sh): what a reader defines and what a Job
and a Boot give it is this folder's README. tidy.py runs them all
(job_columns, read_boot, read_job) and knows none of their files.
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


def delta(before, after, keys):
    """Sum of after-before over the keys both snapshots have; None if none."""
    common = [k for k in keys if k in before and k in after]
    return sum(after[k] - before[k] for k in common) if common else None


class Boot:
    """One boot folder, as the readers see it (README): lab None when a job
    is read on its own, cache what a reader reads once a boot."""

    def __init__(self, boot_dir, lab=None):
        self.dir = boot_dir
        self.lab = lab
        self.cache = {}

    @cached_property
    def ns_per_insn(self):
        """ns of guest time an instruction on an exact clock (lab.conf's
        icount shift S: 2^S), else None (also without a lab.conf)."""
        if self.lab is None:
            return None
        name = (R.read_text(self.path("clock")) or "").strip()
        icount = L.clock(self.lab, name).get("icount")
        return 2 ** int(icount) if str(icount or "").isdigit() else None

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def guest(self, *parts):
        return self.path("guest", *parts)


class Job:
    """One measured job, as the readers see it (README); boot: the Boot it
    ran in (default: the boot folder the job folder is in)."""

    def __init__(self, job_dir, boot=None, rel=None):
        self.dir = job_dir
        self.name = os.path.basename(os.path.normpath(job_dir))
        head = self.name.split("-", 1)[0]
        self.index = int(head) if head.isdigit() else None
        if boot is None:    # BOOT/guest/jobs/NAME
            boot = os.path.normpath(os.path.join(job_dir, *[os.pardir] * 3))
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
    def ios(self):
        """fio's I/Os, all directions."""
        return sum(rec["ios"] for rec in self.directions.values())

    @cached_property
    def gib(self):
        """GiB the block layer moved (a reader's moved_bytes), else fio's
        io_bytes (runs from before: they count page-cache reads too);
        None when nothing moved."""
        counted = (r.moved_bytes(self) for r in READERS if hasattr(r, "moved_bytes"))
        moved = next((m for m in counted if m is not None),
                     sum(rec["io_bytes"] for rec in self.directions.values()))
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
    return {k: v for r in READERS for k, v in getattr(r, "JOB_COLUMNS", {}).items()}


def read_boot(boot):
    """{column: value} of every reader's read_boot (boot: a Boot or folder)."""
    boot = boot if isinstance(boot, Boot) else Boot(boot)
    return {k: v for r in READERS if hasattr(r, "read_boot") for k, v in r.read_boot(boot).items()}


def read_job(job):
    """[(metric, value)] of every reader for one measured job, in order; a
    key a reader does not list in METRICS is raised."""
    rows = []
    for r in READERS:
        got = r.read(job)
        bad = set(got) - set(r.METRICS)
        if bad:
            raise ValueError(f"monitor reader {name(r)} gave metrics it does not "
                             f"list: {sorted(bad)}")
        rows += got.items()
    return rows


def unpaired(guest_dir, readers=None):
    """(guest pieces without a reader, readers without a guest piece) of
    guest_dir (guest/monitors) against the readers (NAME, "_" for "-")."""
    readers = READERS if readers is None else readers
    pieces = [f for f in R.listdir(guest_dir) if f.endswith(".sh")]
    claimed = {r.GUEST: r.__name__.rsplit(".", 1)[1] for r in readers}
    lonely = [p for p in pieces if p not in claimed]
    orphans = [m for g, m in claimed.items()
               if g not in pieces or name_of_piece(g).replace("-", "_") != m]
    return lonely, sorted(orphans)


def name_of_piece(piece):
    """"20-bounce-hist.sh" -> "bounce-hist"."""
    return piece[:-3].split("-", 1)[1] if "-" in piece else piece[:-3]

