# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "copyref" (guest/monitors/60-copyref.sh): the
boot's plain memcpy times, guest/copyref.txt, in µs. Not metrics of a
job: columns of every job row of the boot (memcpy_4k_us, memcpy_64k_us;
NaN where copyref did not measure), the per-boot unit of the report.
"""
import numpy as np

from .. import rawfiles as R

GUEST = "60-copyref.sh"
METRICS = ()


def read_boot(boot):
    kv = {}
    for line in (R.read_text(boot.guest("copyref.txt")) or "").splitlines():
        k, _, v = line.partition("=")
        try:
            kv[k.strip()] = float(v)
        except ValueError:
            pass
    return {"memcpy_4k_us": kv.get("copy_4k_ns_median", np.nan) / 1000.0,
            "memcpy_64k_us": kv.get("copy_64k_ns_median", np.nan) / 1000.0}


def read(job):
    return {}
