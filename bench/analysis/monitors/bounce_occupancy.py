# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "bounce-occupancy"
(guest/monitors/50-bounce-occupancy.sh): the bounce pages of each job's
window, counted exactly by the kernel (lab-bounce patch). No rows where
the job was not counted: the job table's occupancy says why ("off",
"absent", "missing"; "counted" where there are rows).
"""
from .. import rawfiles as R

GUEST = "50-bounce-occupancy.sh"
METRICS = ("bounce_pages_peak", "bounce_lowmem_peak_kib", "bounce_pages_taken",
           "bounce_alloc_max_us", "bounce_reserve_used_pages", "bounce_pool_kib",
           "bounce_pages_mean", "bounce_alloc_us_per_page", "bounce_pages_per_io")


def read(job):
    occ = R.read_occupancy(job.path("bounce-occupancy"))
    if occ is None or isinstance(occ, str):
        job.info["occupancy"] = occ or "missing"
        return {}
    job.info["occupancy"] = "counted"
    out = {"bounce_pages_peak": occ["peak"],
           "bounce_lowmem_peak_kib": occ["peak"] * R.PAGE_KB,
           "bounce_pages_taken": occ["allocated"],
           "bounce_alloc_max_us": occ["alloc_max_ns"] / 1000.0,
           "bounce_reserve_used_pages": occ["pool_size"] - occ["pool_min"],
           "bounce_pool_kib": occ["pool_size"] * R.PAGE_KB}
    if occ["span_ns"] > 0:
        out["bounce_pages_mean"] = occ["page_ns"] / occ["span_ns"]
    if occ["allocated"] > 0:
        out["bounce_alloc_us_per_page"] = occ["alloc_ns"] / 1000.0 / occ["allocated"]
    if job.ios:
        out["bounce_pages_per_io"] = occ["allocated"] / job.ios
    return out
