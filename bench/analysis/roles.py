# SPDX-License-Identifier: GPL-2.0
"""What a variant label or a disk is for: every role question of the
analysis, answered in one place.

A run says it in meta.json (bench/upgrade-run writes them into a run
from before them), resolved once when the run is loaded (resolve(): by
label first, then by the kernel variant the label boots, so "pre.2" of
`--variants pre,pre` is a baseline too):

  "roles":      {label: "baseline" | "bounce" | "removed"}
  "disk_roles": {disk: "bounce-candidate" | "control"}

The history, whose rows keep no disk role, asks the repository's
bench/lab.conf (LAB_VARIANT_ROLES, LAB_DISK_ROLES).

  baseline          the kernel as shipped (bounce code present, dead)
  bounce            the bounce path as designed: the copies the series removed
  removed           after the series: no bounce code
  bounce-candidate  a disk on which the bounce variant bounces
  control           a disk that never bounces: baseline and bounce run the
                    same code there, so that pair is an A/A pair
"""
from lab import labconf as L

BASELINE, BOUNCE, REMOVED = "baseline", "bounce", "removed"
CANDIDATE, CONTROL = "bounce-candidate", "control"
VARIANT_ROLES = (BASELINE, BOUNCE, REMOVED)
DISK_ROLES = (CANDIDATE, CONTROL)

# The history's roles, from the one place that names them: bench/lab.conf
_LAB = L.load()
LAB_VARIANT_ROLES = {v: d["role"] for v, d in _LAB["role"].items()}
LAB_DISK_ROLES = {n: d["role"] for n, d in _LAB["disk"].items()}

# Baseline order of the pairs: A is the role earlier here (the bounce path as designed is
# what the others are compared with). The one role order: the run's pairs, the history's
# variants and colours, the versions' series all follow it.
PAIR_ORDER = (BOUNCE, BASELINE, REMOVED)


def role_rank(role):
    """Sort key of a role: PAIR_ORDER, any other role last."""
    return PAIR_ORDER.index(role) if role in PAIR_ORDER else len(PAIR_ORDER)


# The repository's kernel variants in role order: the history's (and its colours').
LAB_VARIANT_ORDER = sorted((v for v, r in LAB_VARIANT_ROLES.items() if r in PAIR_ORDER),
                           key=lambda v: role_rank(LAB_VARIANT_ROLES[v]))


def _meta_map(meta, key):
    m = (meta or {}).get(key)
    return m if isinstance(m, dict) else {}


def resolve(meta, bases):
    """({label: role}, {disk: role}) of a run's meta.json, resolved as the module docstring says
    (bases: {label: the kernel variant it boots}); a label or disk nobody described has none."""
    roles = {k: r for k, r in _meta_map(meta, "roles").items() if r in VARIANT_ROLES}
    found = {label: roles.get(label) or roles.get(base) for label, base in bases.items()}
    disks = _meta_map(meta, "disk_roles")
    return ({v: r for v, r in found.items() if r},
            {d: r for d, r in disks.items() if r in DISK_ROLES})


def variant_role(run, label):
    """"baseline", "bounce", "removed" or None (unknown) for a label."""
    return run.roles.get(label)


def disk_role(run, disk):
    """A disk's role, None for one nobody described; a within-boot ratio
    "A/B" (tidy.py) has the role of its A."""
    return run.disk_roles.get(str(disk).split("/")[0])


def is_bounce(run, label):
    return variant_role(run, label) == BOUNCE


def is_candidate(run, disk):
    return disk_role(run, disk) == CANDIDATE


def is_aa_pair(run, a, b, disk=None):
    """True when a and b cannot differ but by noise: one kernel (bzImage)
    under two labels, or, on a control disk, the baseline and the bounce
    variant of one kernel source (identical code where nothing bounces)."""
    ka, kb = run.kernels.get(a), run.kernels.get(b)
    if ka and ka == kb:
        return True
    if disk is None or disk_role(run, disk) != CONTROL:
        return False
    # only within one base: 5.10/stock and 6.1/stock differ in far more
    return {variant_role(run, a), variant_role(run, b)} == {BASELINE, BOUNCE} and \
        boot_value(run, a, "source_version") == boot_value(run, b, "source_version")


def boot_value(run, label, column):
    """The first value of a label's boots in a boots column (source_version: the Debian
    source its kernel was built from), or None."""
    if column not in run.boots.columns:
        return None
    rows = run.boots.loc[run.boots["variant"] == label, column].dropna()
    return str(rows.iloc[0]) if len(rows) else None
