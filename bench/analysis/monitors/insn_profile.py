# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "insn-profile" (guest/monitors/70-insn-profile.sh):
the instruction counts of each job's window on an exact clock, which the
host's insnprof QEMU plugin wrote into the boot folder (insnprof.txt) and
the guest marked (the job's insn-window). The files are parsed by
analysis/insnprof.py.

  insn_window_us_per_io, insn_user_us_per_io, insn_kernel_us_per_io,
  insn_idle_us_per_io          the exact time budget of one I/O
  insn_part_*_us_per_io        the kernel's instructions by part (copy,
                               bounce page, bio clone, ...)
  insn_bounces_per_io          bounced bios per I/O (the calls of the
                               bounce completions), where the kernel has them
  insn_instructions_per_io, insn_copy_iters_per_io, insn_copy_bytes_per_io
                               the same window in counts that carry to
                               another CPU: instructions, rep movs
                               iterations among them, the bytes they moved
                               (plugin format 2 on)

Only on an exact clock (the boot's lab.conf clock has an icount shift) and
where both files are there: otherwise no row, never a 0.
"""
from .. import insnprof as X

GUEST = "70-insn-profile.sh"
METRICS = ("insn_window_us_per_io", "insn_user_us_per_io", "insn_kernel_us_per_io",
           "insn_idle_us_per_io") + tuple(X.metric_key(p) for p in X.PART_NAMES) + (
    "insn_bounces_per_io",) + X.COUNTS


def profile(job):
    """(window counts, window ns) of the job, or None when it was not
    counted (read once per boot; bounce_hist.py asks too)."""
    if not job.boot.ns_per_insn:
        return None
    return X.job_profile(job.dir, job.boot.cache.setdefault("insnprof", {}))


def read(job):
    prof = profile(job)
    if not prof:
        return {}
    ios = sum(rec["ios"] for rec in job.directions.values())
    return dict(X.job_rows(*prof, ios, job.boot.ns_per_insn) + X.count_rows(prof[0], ios))
