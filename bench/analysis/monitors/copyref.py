# SPDX-License-Identifier: GPL-2.0
"""Reader of the monitor "copyref" (guest/monitors/60-copyref.sh): the
boot's plain memcpy times (guest/copyref.txt), columns memcpy_4k_us and
memcpy_64k_us of every job row of the boot, NaN where not measured.
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
