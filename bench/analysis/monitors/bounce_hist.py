# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "bounce-hist" (guest/monitors/20-bounce-hist.sh):
the bounced bios of each job (its "bounces" file; "insnprof" on an
unprobed twin on an exact clock: the plugin's count) and the hist
trigger's sectors per GiB moved. The job table's bounce_trace says why a
job has no row: "absent" (no block_bio_bounce event) or "missing".
"""
import numpy as np

from .. import insnprof as X
from .. import rawfiles as R
from . import SECTOR, insn_profile

GUEST = "20-bounce-hist.sh"
METRICS = ("bounces", "bounced_bytes_per_gib")
JOB_COLUMNS = {"bounce_trace": "", "bounces": np.nan, "hist_dropped": np.nan}


def read(job):
    out = {}
    job.info.update(bounce_trace="missing", bounces=np.nan, hist_dropped=np.nan)
    bounces = R.read_bounces(job.path("bounces"))
    hist = R.read_bounce_hist(job.path("bounce-hist.txt"))
    if job.text("bounces") == "insnprof":
        # the guest says "insnprof" only where the event exists: a kernel
        # with bounce code whose window ran no completion bounced nothing
        prof = insn_profile.profile(job)
        if prof:
            bounces = X.bounces(prof[0]) or 0
    if bounces == "absent":
        job.info["bounce_trace"] = "absent"
    elif isinstance(bounces, int):
        job.info.update(bounce_trace="counted", bounces=bounces)
        out["bounces"] = bounces
        if hist is not None:
            job.info["hist_dropped"] = hist["dropped"]
            if job.gib:
                out["bounced_bytes_per_gib"] = hist["sectors"] * SECTOR / job.gib
            if hist["dropped"] > 0:
                job.warn(f"the bounce hist dropped {hist['dropped']} events; "
                         "counts are low")
    return out
