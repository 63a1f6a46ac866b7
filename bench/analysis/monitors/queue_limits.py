# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "queue-limits" (guest/monitors/15-queue-limits.sh):
the block queue limits of each job's device. Not metrics: columns of the
job table (jobs.csv), NaN where the guest did not record them (a job
before the monitor, a device without a queue folder).

  queue_max_sectors_kb    the largest request, KiB (max_sectors_kb)
  queue_max_segments      segments (bvecs after merging) per request
  queue_max_segment_size  bytes per segment

sweep.py predicts from them, and the job's size and depth, the bounce
pages a job holds at once.
"""
import numpy as np

GUEST = "15-queue-limits.sh"
METRICS = ()
JOB_COLUMNS = {"queue_max_sectors_kb": np.nan, "queue_max_segments": np.nan,
               "queue_max_segment_size": np.nan}


def parse(text):
    """{name: int} of the "name value" lines; a line that is not one is
    left out."""
    out = {}
    for line in (text or "").splitlines():
        p = line.split()
        if len(p) == 2 and p[1].isdigit():
            out[p[0]] = int(p[1])
    return out


def read(job):
    limits = parse(job.text("queue-limits"))
    for col in JOB_COLUMNS:
        if col[len("queue_"):] in limits:
            job.info[col] = limits[col[len("queue_"):]]
    return {}
