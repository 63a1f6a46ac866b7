# SPDX-License-Identifier: GPL-2.0
"""What a variant label or a disk is for: every role question of the
analysis, answered in one place.

A run says it in meta.json:

  "roles":      {label: "baseline" | "bounce" | "removed"}
  "disk_roles": {disk: "bounce-candidate" | "control"}

Runs written before those keys (and the test fixtures) fall back on the
roles bench/lab.conf gives, FALLBACK_VARIANT_ROLES and FALLBACK_DISK_ROLES,
looked up by label first, then by the kernel variant the label boots
(so "pre.2" of `--variants pre,pre` is a baseline too).

  baseline          the kernel as shipped (bounce code present, dead)
  bounce            the bounce path as designed: the copies the series removed
  removed           after the series: no bounce code
  bounce-candidate  a disk on which the bounce variant bounces
  control           a disk that never bounces: baseline and bounce run the
                    same code there, so that pair is an A/A pair
"""
from lab import labconf as L
from . import tidy as T

BASELINE, BOUNCE, REMOVED = "baseline", "bounce", "removed"
CANDIDATE, CONTROL = "bounce-candidate", "control"
VARIANT_ROLES = (BASELINE, BOUNCE, REMOVED)
DISK_ROLES = (CANDIDATE, CONTROL)

# Only for runs whose meta.json has no "roles" / "disk_roles": the
# repository's bench/lab.conf, which names no role anywhere else.
_LAB = L.load()
FALLBACK_VARIANT_ROLES = {v: d["role"] for v, d in _LAB["role"].items()}
FALLBACK_DISK_ROLES = {n: d["role"] for n, d in _LAB["disk"].items()}

# Baseline order of the pairs: A is the role earlier here (the bounce path
# as designed is what the others are compared with).
PAIR_ORDER = (BOUNCE, BASELINE, REMOVED)


def _meta_map(run, key):
    m = (getattr(run, "meta", None) or {}).get(key)
    return m if isinstance(m, dict) else {}


def variant_role(run, label):
    """"baseline", "bounce", "removed" or None (unknown) for a label."""
    roles = _meta_map(run, "roles")
    base = T.base_variant(run, label)
    for key in (label, base):
        if roles.get(key) in VARIANT_ROLES:
            return roles[key]
    if roles:
        return None
    for key in (label, base):
        if key in FALLBACK_VARIANT_ROLES:
            return FALLBACK_VARIANT_ROLES[key]
    return None


def disk_role(run, disk):
    """"bounce-candidate" or "control"; None for a disk nobody described.
    A within-boot ratio "A/B" (tidy.py) has the role of its A."""
    disk = str(disk).split("/")[0]
    roles = _meta_map(run, "disk_roles")
    if roles:
        return roles.get(disk) if roles.get(disk) in DISK_ROLES else None
    return FALLBACK_DISK_ROLES.get(disk)


def is_bounce(run, label):
    return variant_role(run, label) == BOUNCE


def is_candidate(run, disk):
    return disk_role(run, disk) == CANDIDATE


def is_aa_pair(run, a, b, disk=None):
    """True when a and b cannot differ but by noise: the same kernel
    (bzImage) under two labels, or, on a control disk, the baseline and
    the bounce variant of one base (identical code where nothing
    bounces)."""
    kernels = T.variant_kernels(run)
    ka, kb = kernels.get(a), kernels.get(b)
    if ka and ka == kb:
        return True
    if disk is not None and disk_role(run, disk) == CONTROL:
        # only within one kernel base: 5.10/stock and 6.1/stock differ in
        # far more than the bounce path
        return {variant_role(run, a), variant_role(run, b)} == {BASELINE, BOUNCE} \
            and _source(run, a) == _source(run, b)
    return False


def _source(run, label):
    """The Debian source version a label's kernel was built from (None if
    no boot says)."""
    boots = run.boots
    if "source_version" not in boots.columns:
        return None
    rows = boots[boots["variant"] == label]["source_version"].dropna()
    return str(rows.iloc[0]) if len(rows) else None


def rank(run, label):
    """Sort key of a label: PAIR_ORDER by role, unknown roles last."""
    r = variant_role(run, label)
    return PAIR_ORDER.index(r) if r in PAIR_ORDER else len(PAIR_ORDER)


def labels_with_role(run, role):
    return [v for v in dict.fromkeys(run.boots["variant"]) if variant_role(run, v) == role]

