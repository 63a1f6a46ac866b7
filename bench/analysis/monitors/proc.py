# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "proc" (guest/monitors/10-proc.sh): the /proc
snapshots DIR/before and DIR/after of each job.

  diskstats   what the block layer moved (moved_bytes, the job table's
              sectors_read, sectors_written, block_bytes)
  stat        kernel CPU (system, irq, softirq) per GiB moved, and the time
              budget of one I/O; on an exact clock CPU per GiB is the
              counted kernel instructions (the ticks are 40-100 % off)
  vmstat      reclaim: allocstall_*, pgscan, pgsteal
"""
import numpy as np

from .. import rawfiles as R
from . import SECTOR, USER_HZ, delta, insn_profile

GUEST = "10-proc.sh"
# the /proc/stat states of an I/O's time (questions/counted.py sets them beside the count)
TIME_BUDGET = (("user", ("user", "nice")), ("sys", ("system",)),
               ("irq", ("irq", "softirq")), ("idle", ("idle", "iowait")))
METRICS = ("cpu_s_per_gib", "time_wall_us_per_io") + tuple(
    f"time_{name}_us_per_io" for name, _ in TIME_BUDGET) + (
    "allocstall", "pgscan", "pgsteal")


def _sectors(job):
    """(sectors read, written) on the job's device, or None."""
    dev = (job.text("device") or "").rsplit("/", 1)[-1]
    ds0, ds1 = (R.read_diskstats(job.path(w, "diskstats")) for w in ("before", "after"))
    if dev in ds0 and dev in ds1:
        return tuple(b - a for a, b in zip(ds0[dev], ds1[dev]))
    return None


def moved_bytes(job):
    s = _sectors(job)
    return None if s is None else (s[0] + s[1]) * SECTOR


def _time_budget(st0, st1, job):
    """µs per I/O of the wall time and of each CPU state of /proc/stat (all
    CPUs: under one vCPU they add up to the wall time and the job's time
    outside fio's run)."""
    ios = job.ios
    iops = sum(rec["iops"] for rec in job.directions.values())
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
    rd, wr = _sectors(job) or (np.nan, np.nan)
    job.info.update(block_bytes=(rd + wr) * SECTOR, sectors_read=rd, sectors_written=wr)

    st0, st1 = (R.read_proc_stat(job.path(w, "stat")) for w in ("before", "after"))
    prof = insn_profile.profile(job)
    ticks = delta(st0, st1, ["system", "irq", "softirq"])
    if prof and job.gib:
        out["cpu_s_per_gib"] = prof[0]["kernel"] * job.boot.ns_per_insn / 1e9 / job.gib
    elif ticks is not None and job.gib:
        out["cpu_s_per_gib"] = ticks / USER_HZ / job.gib
    out.update(_time_budget(st0, st1, job))

    vm0, vm1 = (R.keyvalues(job.text(w, "vmstat")) for w in ("before", "after"))
    for metric, keys in (
            ("allocstall", sorted(k for k in vm1 if k.startswith("allocstall_"))),
            ("pgscan", ["pgscan_kswapd", "pgscan_direct"]),
            ("pgsteal", ["pgsteal_kswapd", "pgsteal_direct"])):
        d = delta(vm0, vm1, keys)
        if d is not None:
            out[metric] = d
    return out
