# SPDX-License-Identifier: GPL-2.0
"""Kernel versions for the history: Debian version order and the points
where the bounce path changed upstream.

Every history.csv row knows the kernel its label booted (source_package,
kernel_source_version: the Debian version, kernel_release). Versions are
ordered as dpkg --compare-versions orders them (5.10.262-1 < 6.1.192-3 <
6.12.118-1~deb12u1 < 6.12.118-1 < 7.2.13-1), not by text or run date.
Bouncing died on HIGHMEM in 5.13 (commit 9bb33f24abbd: the inverted check
in blk_queue_may_bounce()) and the bounce code was removed in 6.16
(MARKERS).
"""
import functools
import re

from . import plots as P

UNKNOWN = ("", "unknown")
# Where the bounce path changed upstream: (version, what happened).
MARKERS = (
    ("5.13", "5.13: bouncing dead on HIGHMEM", "(9bb33f24abbd: inverted check)"),
    ("6.16", "6.16: bounce code removed", "(remove block layer bounce buffering)"),
)
# Units shown scaled (figures and tables).
DISPLAY_UNITS = {"B/s": (1.0 / (1 << 20), "MiB/s"),
                 "B/GiB": (1.0 / (1 << 20), "MiB/GiB")}


# --- Debian version order ------------------------------------------------------

def _order(c):
    if c.isdigit():
        return 0
    if c.isalpha():
        return ord(c)
    if c == "~":
        return -1
    return ord(c) + 256


def _verrevcmp(a, b):
    """dpkg's verrevcmp: non-digit runs compared by _order (~ sorts
    before everything, even the end), digit runs numerically."""
    i = j = 0
    while i < len(a) or j < len(b):
        first_diff = 0
        while (i < len(a) and not a[i].isdigit()) or (j < len(b) and not b[j].isdigit()):
            ac = _order(a[i]) if i < len(a) else 0
            bc = _order(b[j]) if j < len(b) else 0
            if ac != bc:
                return ac - bc
            i += 1
            j += 1
        while i < len(a) and a[i] == "0":
            i += 1
        while j < len(b) and b[j] == "0":
            j += 1
        while i < len(a) and a[i].isdigit() and j < len(b) and b[j].isdigit():
            if not first_diff:
                first_diff = ord(a[i]) - ord(b[j])
            i += 1
            j += 1
        if i < len(a) and a[i].isdigit():
            return 1
        if j < len(b) and b[j].isdigit():
            return -1
        if first_diff:
            return first_diff
    return 0


def split_version(version):
    """(epoch, upstream, revision) of a Debian version."""
    v = str(version).strip()
    epoch, _, rest = v.rpartition(":") if ":" in v else ("0", "", v)
    upstream, dash, revision = rest.rpartition("-")
    if not dash:
        upstream, revision = rest, ""
    try:
        epoch = int(epoch or 0)
    except ValueError:
        epoch = 0
    return epoch, upstream, revision


def upstream(version):
    """"6.12.118" of "6.12.118-1~deb12u1"."""
    return split_version(version)[1]


def compare(a, b):
    """<0, 0, >0 as Debian version a sorts before, with, after b
    (dpkg --compare-versions)."""
    ea, ua, ra = split_version(a)
    eb, ub, rb = split_version(b)
    if ea != eb:
        return ea - eb
    return _verrevcmp(ua, ub) or _verrevcmp(ra, rb)


version_key = functools.cmp_to_key(compare)


def sort_versions(versions):
    return sorted(set(versions), key=version_key)


def known(version):
    return isinstance(version, str) and version not in UNKNOWN


def package_of(release, version):
    """"linux-source-X.Y" from a kernel release or a Debian version (what
    Debian names its kernel source packages); "" when neither is known."""
    for v in (release, upstream(version) if known(version) else ""):
        m = re.match(r"^(\d+)\.(\d+)", str(v or ""))
        if m:
            return f"linux-source-{m.group(1)}.{m.group(2)}"
    return ""


def markers(versions):
    """[(x, version, label)]: each MARKERS version between the last axis
    version before it and the first at or after it (x positions are
    0, 1, ... in version order; a marker before or after every version
    sits at the axis edge)."""
    out = []
    for at, what, why in MARKERS:
        before = sum(compare(upstream(v), at) < 0 for v in versions)
        out.append((before - 0.5, at, P._lines(what, why)))
    return out
