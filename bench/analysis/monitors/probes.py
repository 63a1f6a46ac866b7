# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "probes" (guest/monitors/40-probes.sh): the time
of each bounce in a probed job, from its function_graph trace (parsed by
analysis/probes.py): __blk_queue_bounce and the completion handlers per
bounced bio (p50, p99), both per GiB moved. A kernel without them (post)
has no rows; one whose bounce functions never ran 0 µs per GiB.
"""
import numpy as np

from .. import probes as P
from .. import rawfiles as R

GUEST = "40-probes.sh"
METRICS = ("bounce_submit_us_p50", "bounce_submit_us_p99",
           "bounce_endio_us_p50", "bounce_endio_us_p99", "bounce_us_per_gib")


def read(job):
    probes = job.text("probes")
    if probes is None:
        return {}
    text = P.read_trace_text(job.path("probe-trace.txt.gz"))
    if text is None:
        job.info["probe_state"] = "trace missing"
        return {}
    t = P.summary(P.parse(text))
    job.info["probe_submit_calls"] = len(t["submit"])
    job.info["probe_completion_calls"] = len(t["completion"])
    job.info["probe_overrun"] = P.read_overrun(job.path("probe-overrun.txt"), R.read_text)
    job.info["probe_state"] = "probed"
    out = {f"bounce_{name}_us_p{q}": float(np.percentile(t[key], q))
           for key, name in (("submit", "submit"), ("completion", "endio")) if len(t[key])
           for q in (50, 99)}
    if P.SUBMIT in probes.split() and job.gib:
        out["bounce_us_per_gib"] = (t["submit"].sum() + t["completion"].sum()) / job.gib
    return out
