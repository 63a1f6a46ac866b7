# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "insn-profile" (guest/monitors/70-insn-profile.sh):
the instruction counts of each job's window on an exact clock (the boot's
insnprof.txt and the job's insn-window, parsed by analysis/insnprof.py):
the exact time budget of one I/O, the kernel's by part, the bounces per
I/O, and the counts that carry to another CPU. No row without both files.
"""
from .. import insnprof as X

GUEST = "70-insn-profile.sh"
METRICS = ("insn_window_us_per_io", "insn_user_us_per_io", "insn_kernel_us_per_io",
           "insn_idle_us_per_io") + tuple(X.metric_key(p) for p in X.PART_NAMES) + (
    "insn_bounces_per_io",) + X.COUNTS


def profile(job):
    """(window counts, window ns) of the job, or None (read once a boot)."""
    if not job.boot.ns_per_insn:
        return None
    return X.job_profile(job.dir, job.boot.cache.setdefault("insnprof", {}))


def read(job):
    prof = profile(job)
    if not prof:
        return {}
    return dict(X.job_rows(*prof, job.ios, job.boot.ns_per_insn) + X.count_rows(prof[0], job.ios))
