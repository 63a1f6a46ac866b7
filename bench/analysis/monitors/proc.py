# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "proc" (guest/monitors/10-proc.sh): the /proc
snapshots DIR/before and DIR/after of each job.

  diskstats        what the block layer moved on the job's device: the
                   denominator of every per-GiB figure (moved_bytes), and
                   the job table's sectors_read, sectors_written and
                   block_bytes
  stat             guest CPU in the kernel (system, irq, softirq) per GiB
                   moved, and the time budget of one I/O (insnbudget.py). On
                   an exact clock CPU per GiB is the kernel's instructions
                   in the job's window instead, counted (the insn-profile
                   monitor's): the ticks of /proc/stat, sampled, are
                   40-100 % off the count at this scale (README, "Counted")
  vmstat           reclaim: allocstall_*, pgscan, pgsteal
                   (PSI is labmon's: over fio's window, not the snapshots')

A counter missing from either snapshot gives no row (not a 0).
"""
import numpy as np

from .. import rawfiles as R
from . import SECTOR, USER_HZ, delta, insn_profile

GUEST = "10-proc.sh"
# Where an I/O's time goes: the /proc/stat states, per I/O (insnbudget.py
# sets them beside the count).
TIME_BUDGET = (("user", ("user", "nice")), ("sys", ("system",)),
               ("irq", ("irq", "softirq")), ("idle", ("idle", "iowait")))
METRICS = ("cpu_s_per_gib", "time_wall_us_per_io") + tuple(
    f"time_{name}_us_per_io" for name, _ in TIME_BUDGET) + (
    "allocstall", "pgscan", "pgsteal")


def _sectors(job):
    """(sectors read, sectors written) on the job's device between the
    snapshots, or None."""
    dev = (job.text("device") or "").rsplit("/", 1)[-1]
    ds0 = R.read_diskstats(job.path("before", "diskstats"))
    ds1 = R.read_diskstats(job.path("after", "diskstats"))
    if dev in ds0 and dev in ds1:
        rd, wr = (b - a for a, b in zip(ds0[dev], ds1[dev]))
        return rd, wr
    return None


def moved_bytes(job):
    s = _sectors(job)
    return None if s is None else (s[0] + s[1]) * SECTOR


def _time_budget(st0, st1, dirs):
    """µs per I/O of the job's wall time and of each CPU state of the
    tick-sampled /proc/stat (all CPUs: under one vCPU they add up to the
    wall time plus the job's time outside fio's run); none without the
    /proc/stat snapshots."""
    ios = sum(rec["ios"] for rec in dirs.values())
    iops = sum(rec["iops"] for rec in dirs.values())
    if not ios or not iops or not (st0 and st1):
        return {}
    out = {"time_wall_us_per_io": 1e6 / iops}
    for name, fields in TIME_BUDGET:
        ticks = delta(st0, st1, fields)
        if ticks is not None:
            out[f"time_{name}_us_per_io"] = ticks * 1e6 / USER_HZ / ios
    return out


def read(job):
    out = {}
    job.info.update(block_bytes=np.nan, sectors_read=np.nan, sectors_written=np.nan)
    s = _sectors(job)
    if s is not None:
        rd, wr = s
        job.info.update(sectors_read=rd, sectors_written=wr,
                        block_bytes=(rd + wr) * SECTOR)

    st0 = R.read_proc_stat(job.path("before", "stat"))
    st1 = R.read_proc_stat(job.path("after", "stat"))
    prof = insn_profile.profile(job)
    ticks = delta(st0, st1, ["system", "irq", "softirq"])
    if prof and job.gib:
        out["cpu_s_per_gib"] = prof[0]["kernel"] * job.boot.ns_per_insn / 1e9 / job.gib
    elif ticks is not None and job.gib:
        out["cpu_s_per_gib"] = ticks / USER_HZ / job.gib
    out.update(_time_budget(st0, st1, job.directions))

    vm0 = R.read_keyvalues(job.path("before", "vmstat"))
    vm1 = R.read_keyvalues(job.path("after", "vmstat"))
    for metric, keys in (
            ("allocstall", sorted(k for k in vm1 if k.startswith("allocstall_"))),
            ("pgscan", ["pgscan_kswapd", "pgscan_direct"]),
            ("pgsteal", ["pgsteal_kswapd", "pgsteal_direct"])):
        d = delta(vm0, vm1, keys)
        if d is not None:
            out[metric] = d
    return out
