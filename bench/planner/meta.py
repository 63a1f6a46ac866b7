# SPDX-License-Identifier: GPL-2.0
"""meta.json: what a run was and ran on (written atomically). Its keys,
in order, are those bench/compare has always written; the analysis, the
report and bench/history read them.
"""
import glob
import hashlib
import json
import os
import subprocess
import time

from . import boots as B
from .state import write_json


def _cmd(args, cwd=None):
    """A command's stdout without its trailing newlines, "" when it fails."""
    try:
        r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           text=True, cwd=cwd, errors="replace")
    except OSError:
        return ""
    return r.stdout.rstrip("\n") if r.returncode == 0 else ""


def _read(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().rstrip("\n")
    except OSError:
        return ""


def _number(v):
    try:
        return int(v)
    except (TypeError, ValueError):
        return v


def _host():
    u = os.uname()
    mib = next((int(line.split()[1]) // 1024 for line in _read("/proc/meminfo").splitlines()
                if line.startswith("MemTotal:")), "")
    cpus = len(os.sched_getaffinity(0))
    return f"{u.sysname} {u.release} {u.version} {u.machine}; {cpus} cpus; {mib} MiB"


def _sshlogins(path):
    lines = [l.split() for l in _read(path).splitlines()]
    return " ".join(w[-1] for w in lines if w and not w[0].startswith("#"))


def _base(root, base):
    """(package, version) of a kernel base (lib/bases.sh), "" each when it
    cannot say."""
    script = '. "$1/lib/common.sh"; . "$1/lib/bases.sh"; bl_base_package "$2"; bl_base_version "$2"'
    out = _cmd(["bash", "-c", script, "-", root, base]).split("\n")
    return (out + ["", ""])[:2]


def _build_info(path):
    try:
        return json.loads(_read(path))
    except ValueError:
        return None


def git_revision(root):
    return _cmd(["git", "-C", root, "describe", "--always", "--dirty"]) or "unknown"


def write(run, p, status, root, cache, lab, lab_file):
    """meta.json into the run folder: the run as it is at this point."""
    with open(lab_file, "rb") as f:
        lab_sha = hashlib.sha256(f.read()).hexdigest()
    roles = {label: "aa-copy" if label != B.label_kernel(label)
             else lab["role"].get(label, {}).get("role") or "unknown" for label in p["labels"]}
    cmdlines = sorted(glob.glob(os.path.join(run, "boots", "*", "serial.log.cmdline")))
    now = git_revision(root)
    m = {
        "run_id": p["run_id"], "status": status, "started": p["started"],
        "ended": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "matrix_set": p["set"], "variants": " ".join(p["labels"]),
        **{k: " ".join(p[k + "s" if k == "pressure" else k]) for k in (
            "disks", "pressure", "jobs", "probe_jobs", "integrity_jobs", "pressure_disks",
            "pressure_levels", "pressure_jobs")},
        "roles": roles, "disk_roles": {d: f["role"] for d, f in lab["disk"].items()},
        "lab_conf_sha256": lab_sha, "lowfree_target_mb": p["lowfree_mb"],
        "reps": p["reps"], "exact_reps": p["exact_reps"],
        "integrity_reps": p["integrity_reps"], "side_by_side": p["side_jobs"],
        "sshlogins": _sshlogins(p["sshloginfile"]), "memhog_mb": _number(p["memhog_mb"]),
        "accel": p["accel_used"],
        # the default clock's shift; disk_clocks: each disk's clock
        "icount": lab["clock"].get(p["clock"], {}).get("icount", ""),
        "clock": p["clock"], "disk_clocks": p["disk_clocks"],
        "boot_timeout_s": p["timeout"],
        "guest_bounds": {"disk_wait_s": p["disk_wait"], "mon_interval_ms": p["mon_ms"],
                         "job_timeout_s": p["job_timeout"]},
    }
    # one base: its package and version; several: each label's
    # build-info.json says (the analysis reads it per label)
    if len(p["bases"]) == 1:
        m["kernel_source_package"], m["kernel_source_version"] = _base(root, p["bases"][0])
    m.update({
        "kernel_bases": " ".join(p["bases"]),
        # the tree the run started from (its boots read it as they go);
        # git_revision_at_end where it changed under the run
        "git_revision": p.get("git_revision") or now,
        "host": _host(),
        "qemu_version": _cmd(["qemu-system-i386", "--version"]).split("\n")[0],
        "qemu_cmdline_example": _read(cmdlines[0]).split("\n")[0] if cmdlines else "",
        "guest_versions": _read(os.path.join(cache, "guest", "versions")),
        "kernels": {v: _build_info(os.path.join(cache, "kernels", v, "build-info.json"))
                    for v in sorted(set(p["variants"]))},
        # the I/O-size sweep (after the keys runs before it had)
        **{k: " ".join(p.get(k, [])) for k in ("sweep_disks", "sweep_jobs")},
    })
    if now != m["git_revision"]:
        m["git_revision_at_end"] = now
    write_json(os.path.join(run, "meta.json"), m)
