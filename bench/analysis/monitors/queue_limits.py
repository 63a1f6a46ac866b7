# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "queue-limits" (guest/monitors/15-queue-limits.sh):
the block queue limits of each job's device (max_sectors_kb, max_segments
per request, max_segment_size), columns of the job table, NaN where not
recorded. sweep.py predicts from them the bounce pages a job holds.
"""
import numpy as np

from .. import rawfiles as R

GUEST = "15-queue-limits.sh"
METRICS = ()
JOB_COLUMNS = {"queue_max_sectors_kb": np.nan, "queue_max_segments": np.nan,
               "queue_max_segment_size": np.nan}


def read(job):
    limits = R.keyvalues(job.text("queue-limits"))
    job.info.update({col: limits[k] for col in JOB_COLUMNS
                     if (k := col.removeprefix("queue_")) in limits})
    return {}
