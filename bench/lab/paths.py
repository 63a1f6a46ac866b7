# SPDX-License-Identifier: GPL-2.0
"""Where the lab keeps its runs and its cache, found as lib/common.sh
finds them (BL_RESULTS, BL_CACHE), so every script agrees."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def results():
    """The run folders: BOUNCELAB_RESULTS, else results/ in the checkout."""
    return os.environ.get("BOUNCELAB_RESULTS") or os.path.join(ROOT, "results")


def cache():
    """The cache: BOUNCELAB_CACHE, else /var/cache/bouncelab for root and
    $XDG_CACHE_HOME/bouncelab (~/.cache) for anyone else."""
    if os.environ.get("BOUNCELAB_CACHE"):
        return os.environ["BOUNCELAB_CACHE"]
    if os.getuid() == 0:
        return "/var/cache/bouncelab"
    return os.path.join(os.environ.get("XDG_CACHE_HOME") or
                        os.path.join(os.path.expanduser("~"), ".cache"), "bouncelab")
