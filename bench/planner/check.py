# SPDX-License-Identifier: GPL-2.0
"""A run's arguments checked before the first boot (a typo must not cost
an hour): plan() (BadArg, exit 2), jobs() and built() (NotBuilt, exit 1).
kernels/variants is read by lib/variants.sh (one bash call), the parser
the kernel build uses.
"""
import dataclasses
import os
import re
import shutil
import subprocess
import sys

from lab import labconf as L

from . import boots as B
from .options import BadArg, positive


class NotBuilt(Exception):
    """Something a run needs is not built or not on the host: exit 1."""


def _variants(root, names):
    """[(canonical name, base)] of variants; BadArg for an unknown one
    (lib/variants.sh names it on stderr)."""
    script = ('. "$1/lib/common.sh"; . "$1/lib/variants.sh"; shift\n'
              'for v; do bl_variant_stacks "$v" >/dev/null || exit 1\n'
              '  echo "$(bl_variant_canonical "$v") $(bl_variant_base "$v")"; done')
    r = subprocess.run(["bash", "-c", script, "-", root] + names,
                       stdout=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise BadArg(None)
    return [tuple(line.split()) for line in r.stdout.splitlines()]


def _boot_disks(lab, disks):
    """The disks of one boot ("ram-bounce+ram"): each known, and no two on
    one channel whose knob holds for the whole boot."""
    seen = set()
    for d in disks.split("+"):
        _known(lab, "disk", d)
        ch = lab["disk"][d]["channel"]
        if not lab["disk"][d]["knob"].startswith("param:"):
            if ch in seen:
                raise BadArg(f"disks '{disks}' share channel '{ch}' in one boot, "
                             "but its knob holds for the whole boot")
            seen.add(ch)
    return disks.split("+")


def _known(lab, kind, name):
    """BadArg unless lab knows name as a kind (lib/lab.sh's refusal)."""
    if name not in lab[kind]:
        known = "".join(n + " " for n in lab[kind])
        raise BadArg(f"unknown {kind} '{name}' (known: {known})")


def plan(o, lab, root):
    """The plan dict of Options o; BadArg for the first thing wrong."""
    # the sweep runs in the boots of disk entries, none of its own: a
    # sweep disk that --disks left out takes the sweep with it
    entries = {B.entry(e)[0] for e in o.disks}
    o.sweep_disks = [e for e in o.sweep_disks if B.entry(e)[0] in entries]
    if not (o.sweep_disks and o.sweep_jobs):
        o.sweep_disks, o.sweep_jobs = [], []
    if not (o.variants and o.disks and o.pressures
            and (o.jobs or o.integrity_jobs or o.sweep_jobs)):
        raise BadArg(f"empty matrix (variants '{' '.join(o.variants)}', "
                     f"disks '{' '.join(o.disks)}', jobs '{' '.join(o.jobs)}', "
                     f"integrity jobs '{' '.join(o.integrity_jobs)}', "
                     f"pressure '{' '.join(o.pressures)}')")
    kernels = _variants(root, o.variants)
    # 6.12/post is post: one label, one kernel folder
    o.variants = [k for k, _ in kernels]
    _known(lab, "clock", o.clock)
    disk_clocks = {}
    for e in o.disks + o.pressure_disks:
        d, c, cap = B.entry(e, o.clock)
        if cap is not None and not re.fullmatch(r"[1-9][0-9]*", cap):
            raise BadArg(f"disk entry '{e}': the reps after ':' must be a positive number")
        disks = _boot_disks(lab, d)
        _known(lab, "clock", c)
        for d in disks:
            if disk_clocks.setdefault(d, c) != c:
                raise BadArg(f"disk '{d}' is in entries with different clocks "
                             f"({disk_clocks[d]}, {c}); one clock per disk in a run")
    for p in o.pressures + o.pressure_levels:
        _known(lab, "pressure", p)
    if o.pressure_disks:
        if not (o.pressure_levels and o.pressure_jobs):
            raise BadArg(f"pressure disks '{' '.join(o.pressure_disks)}' need pressure levels and "
                         f"pressure jobs (levels '{' '.join(o.pressure_levels)}', "
                         f"jobs '{' '.join(o.pressure_jobs)}')")
        # a boot's pressure says which job list it runs
        for p in o.pressure_levels:
            if p in o.pressures:
                raise BadArg(f"pressure '{p}' is both a pressure of every boot and a "
                             "pressure level; name it once")
    o.lowfree_mb = positive(o.lowfree_raw, "--lowfree-mb wants MiB, not '{}'")
    # every list's names first: an unknown job is not blamed on another check
    for j in job_files(o, probes=True):
        if not os.path.isfile(os.path.join(o.jobs_dir, j + ".fio")):
            raise BadArg(f"unknown job '{j}': job file not found: {o.jobs_dir}/{j}.fio")
    for j in o.probe_jobs:
        if j not in o.jobs:
            raise BadArg(f"probe job '{j}' is not among the jobs ({' '.join(o.jobs)}): "
                         "its unprobed twin measures what the probes cost")
    return dict(dataclasses.asdict(o), labels=B.make_labels(o.variants), disk_clocks=disk_clocks,
                exact_clocks=[n for n, c in lab["clock"].items() if c.get("icount")], extend=[],
                host_disks=[d for d in lab["disk"] if L.host_completes(lab, d)],
                bases=sorted({b for _, b in kernels}))


def job_files(o, probes=False):
    """The job names a run's boots read (the probe jobs are among them),
    of Options plan() checked (no sweep jobs without its disks)."""
    return (o.jobs + (o.probe_jobs if probes else []) + o.integrity_jobs
            + (o.pressure_jobs if o.pressure_disks else []) + o.sweep_jobs)


def _fio(fio, args):
    """The guest's static i386 fio run on the host: directly, else under
    qemu-i386. guest/init's BL_DISK and BL_FS_DIR as placeholders:
    --parse-only opens nothing."""
    env = dict(os.environ, BL_DISK="/dev/null", BL_FS_DIR="/tmp")
    try:
        r = subprocess.run([fio, "--help"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        direct = r.returncode != 126
    except OSError:
        direct = False
    if not direct and not shutil.which("qemu-i386"):
        raise NotBuilt("this host cannot run i386 binaries and qemu-i386 is missing; "
                       "run './run.sh deps'")
    cmd = [fio] + args if direct else ["qemu-i386", fio] + args
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace")


def _parse_jobs(o, cache, missing):
    """fio --parse-only of every job file by the guest's fio: BadArg for the
    first it rejects, with fio's message; NotBuilt(missing) without it."""
    fio = os.path.join(cache, "guest", "bin", "fio")
    if not os.access(fio, os.X_OK):
        raise NotBuilt(missing.format(fio))
    for j in job_files(o):
        path = os.path.join(o.jobs_dir, j + ".fio")
        r = _fio(fio, ["--parse-only", "--warnings-fatal", path])
        if r.returncode != 0:
            out = "".join("  " + line + "\n" for line in r.stdout.splitlines())
            raise BadArg(f"fio rejects job file {path} (see above)", out)


def jobs(o, cache):
    """The job files parsed by the guest's fio before anything is built;
    with no fio this host can run, a note that built() checks them."""
    try:
        _parse_jobs(o, cache, "no guest fio at {} yet (./run.sh guest builds it)")
    except NotBuilt as e:
        print(f"bouncelab: job files not checked by fio: {e}; a run checks them "
              "before its first boot", file=sys.stderr)


def built(o, p, cache):
    """NotBuilt for the first thing a real run needs that is missing."""
    for cmd in ["parallel"] + (["rsync", "ssh"] if o.sshloginfile else []):
        if not shutil.which(cmd):
            raise NotBuilt(f"'{cmd}' not found; run './run.sh deps' first")
    _parse_jobs(o, cache, "no guest fio at {}; run './run.sh guest'")
    for v in p["variants"]:
        if not os.path.isfile(os.path.join(cache, "kernels", v, "bzImage")):
            raise NotBuilt(f"kernel '{v}' not built; run './run.sh build {v}'")
    if not os.path.isfile(os.path.join(cache, "guest", "initramfs.cpio.gz")):
        raise NotBuilt("no guest initramfs; run './run.sh guest'")
