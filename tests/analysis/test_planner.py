# SPDX-License-Identifier: GPL-2.0
"""bench/plan and bench/planner/: the arguments checked once (a bad one
exits 2, naming it), the kernels a run needs, matrix.tsv, plan.json,
meta.json and the later rounds, each boot's guest-run options, lab.conf
for the shell from its one parser, and the console summary at the end of
a run (bench/analyze --bounce-summary) on the analysis's rule for
"bounce path exercised"."""
import json
import os
import subprocess
import tempfile
import unittest

import helpers as H
from lab import labconf, matrix

PLAN = os.path.join(H.ROOT, "bench", "plan")
SMALL = ["--variants", "pre,post,pre", "--disks", "ram-bounce+ram@insn,virtio:1",
         "--pressure", "none", "--reps", "2", "--exact-reps", "1",
         "--jobs", "lat-randread-4k-qd1,lat-randwrite-4k-qd1",
         "--probe-jobs", "lat-randread-4k-qd1", "--integrity-jobs", "integrity-direct-512-qd8",
         "--integrity-reps", "1", "--pressure-disks", "none", "--sweep-disks", "none",
         "-j", "2"]
# meta.json's keys, in the order bench/compare has always written them
META_KEYS = ["run_id", "status", "started", "ended", "matrix_set", "variants", "disks",
             "pressure", "jobs", "probe_jobs", "integrity_jobs", "pressure_disks",
             "pressure_levels", "pressure_jobs", "roles", "disk_roles", "lab_conf_sha256",
             "lowfree_target_mb", "reps", "exact_reps", "integrity_reps", "side_by_side",
             "sshlogins", "memhog_mb", "accel", "icount", "clock", "disk_clocks",
             "boot_timeout_s", "guest_bounds", "kernel_source_package",
             "kernel_source_version", "kernel_bases", "git_revision", "host",
             "qemu_version", "qemu_cmdline_example", "guest_versions", "kernels",
             "sweep_disks", "sweep_jobs"]


def plan(*args, env=None):
    return subprocess.run([PLAN, *args], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, **(env or {})))


class Arguments(unittest.TestCase):
    def refused(self, message, *args):
        for cmd in ("check", "kernels", "dry-run"):
            r = plan(cmd, *args)
            self.assertEqual(r.returncode, 2, f"{cmd} {args}: {r.stderr}")
            self.assertIn(message, r.stderr, f"{cmd} {args}")
            self.assertEqual(r.stdout, "", f"{cmd} {args}")

    def test_bad_arguments_exit_2_naming_them(self):
        self.refused("--reps wants a positive number, not '0'", "--reps", "0")
        self.refused("--exact-reps wants a positive number, not 'x'", "--exact-reps", "x")
        self.refused("unknown variant 'nosuch'", "--variants", "pre,nosuch")
        self.refused("unknown disk 'floppy' (known: ", "--disks", "floppy")
        self.refused("unknown clock 'sundial'", "--disks", "virtio@sundial")
        self.refused("unknown pressure 'full99'", "--pressure", "full99")
        self.refused("unknown job 'nosuchjob': job file not found", "--jobs", "nosuchjob")
        self.refused("-j wants a positive number of boots side by side, not '0'", "-j", "0")
        self.refused("--accel is auto, tcg or kvm, not 'fast'", "--accel", "fast")
        self.refused("--until-ci wants a percentage, not '1.2.3'", "--until-ci", "1.2.3")
        self.refused("disk entry 'virtio:0': the reps after ':' must be a positive number",
                     "--disks", "virtio:0")
        self.refused("disk 'ram' is in entries with different clocks (insn, host)",
                     "--disks", "ram-bounce+ram@insn,ram")
        self.refused("no matrix set 'nosuch' in bench/matrix", "--set", "nosuch")
        self.refused("--reps wants a value", "--reps")
        self.refused("unknown option '--bogus'", "--bogus")

    def test_quick_with_another_set_is_refused(self):
        # it once built one set's kernels and ran the other's
        for args in (["--set", "versions", "--quick"], ["--quick", "--set", "pressure"]):
            r = plan("kernels", *args)
            self.assertEqual(r.returncode, 2, r.stderr)
            self.assertIn("--quick and --set name two matrix sets", r.stderr)
        self.assertEqual(plan("kernels", "--quick", "--set", "quick").returncode, 0)

    def test_kernels_a_run_needs(self):
        sets = matrix.load()
        for name, args in (("default", []), ("quick", ["--quick"]),
                           ("versions", ["--set", "versions"])):
            r = plan("kernels", *args)
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split(), sorted(set(sets[name]["variants"])), name)
        # the default base's long names are its short ones; a copy is one kernel
        r = plan("kernels", "--variants", "6.12/post,pre,pre")
        self.assertEqual(r.stdout.split(), ["post", "pre"])

    def test_check_prints_shell_values(self):
        with tempfile.TemporaryDirectory() as cache:
            r = plan("check", "--dry-run", *SMALL, env={"BOUNCELAB_CACHE": cache})
            self.assertEqual(r.returncode, 0, r.stderr)
            out = subprocess.run(["bash", "-c", r.stdout + '\necho "$DRY_RUN|$LABELS|$DISK_CLOCKS|$EXACT_CLOCKS|$FIRST_KERNEL"'],
                                 capture_output=True, text=True).stdout
            self.assertEqual(out, "1|pre post pre.2| ram-bounce=insn ram=insn virtio=host| insn |pre\n")
            # a real run needs a guest fio: exit 1, not 2
            r = plan("check", *SMALL, env={"BOUNCELAB_CACHE": cache})
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("no guest fio at", r.stderr)


class Run(unittest.TestCase):
    """start, extend, boot-args and meta on a run folder, a fake cache."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.cache = os.path.join(self.tmp.name, "cache")
        for v in ("pre", "post"):
            H.write_text(os.path.join(self.cache, "kernels", v, "build-info.json"),
                         json.dumps({"variant": v}) + "\n")
        self.run_dir = os.path.join(self.tmp.name, "run")
        os.makedirs(self.run_dir)
        self.env = {"BOUNCELAB_CACHE": self.cache}
        r = plan("start", self.run_dir, "2025-01-01T00:00:00Z", *SMALL, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.nboots = int(r.stdout)

    def tearDown(self):
        self.tmp.cleanup()

    def matrix(self):
        with open(os.path.join(self.run_dir, "matrix.tsv"), encoding="utf-8") as f:
            return [line.rstrip("\n").split("\t") for line in f]

    def meta(self):
        return H.read_json(os.path.join(self.run_dir, "meta.json"))

    def test_matrix_tsv(self):
        rows = self.matrix()
        self.assertEqual(rows[0], ["boot", "variant", "kernel", "disk", "pressure", "rep", "clock"])
        # rep 1: the ram pair (insn) and virtio; rep 2: virtio is capped at
        # 1 and the exact entry stops after exact_reps 1
        self.assertEqual([r[1:] for r in rows[1:]], [
            ["pre", "pre", "ram-bounce+ram", "none", "1", "insn"],
            ["post", "post", "ram-bounce+ram", "none", "1", "insn"],
            ["pre.2", "pre", "ram-bounce+ram", "none", "1", "insn"],
            ["pre", "pre", "virtio", "none", "1", "host"],
            ["post", "post", "virtio", "none", "1", "host"],
            ["pre.2", "pre", "virtio", "none", "1", "host"]])
        self.assertEqual([r[0] for r in rows[1:]], [str(n) for n in range(1, 7)])
        self.assertEqual(self.nboots, 6)

    def test_meta_json(self):
        m = self.meta()
        self.assertEqual(list(m), META_KEYS)
        self.assertEqual(m["status"], "running")
        self.assertEqual(m["variants"], "pre post pre.2")
        self.assertEqual(m["roles"], {"pre": "baseline", "post": "removed", "pre.2": "aa-copy"})
        self.assertEqual(m["disk_clocks"], {"ram-bounce": "insn", "ram": "insn", "virtio": "host"})
        self.assertEqual(m["disks"], "ram-bounce+ram@insn virtio:1")
        self.assertEqual((m["reps"], m["exact_reps"], m["integrity_reps"], m["side_by_side"]),
                         (2, 1, 1, 2))
        self.assertEqual(m["guest_bounds"], {"disk_wait_s": 20, "mon_interval_ms": 100,
                                             "job_timeout_s": 300})
        self.assertEqual(m["kernels"], {"post": {"variant": "post"}, "pre": {"variant": "pre"}})
        self.assertEqual(m["kernel_bases"], "6.12")
        # a label or a kernel argument with a quote stays JSON
        r = plan("meta", self.run_dir, 'complete with "quotes"', "tcg", env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        m = self.meta()
        self.assertEqual((m["status"], m["accel"]), ('complete with "quotes"', "tcg"))

    def test_rounds(self):
        # the determinism round: the reps after exact_reps of the entries
        # that spread, numbered on
        det = os.path.join(self.tmp.name, "det.txt")
        H.write_text(det, "determinism-check: 2 of 3\nextend ram-bounce+ram none\n  x\n")
        r = plan("extend", self.run_dir, "--determinism", det, env=self.env)
        self.assertEqual(r.stdout.strip(), "9")
        self.assertEqual([r[0] + ":" + r[1] + ":" + r[5] for r in self.matrix()[7:]],
                         ["7:pre:2", "8:post:2", "9:pre.2:2"])
        # --until-ci: one more round (virtio is capped, the extended
        # exact entry goes on); meta.json's reps follow
        r = plan("extend", self.run_dir, "--round", "3", env=self.env)
        self.assertEqual(r.stdout.strip(), "12")
        self.assertEqual({(r[3], r[5]) for r in self.matrix()[10:]}, {("ram-bounce+ram", "3")})
        plan("meta", self.run_dir, "complete", env=self.env)
        self.assertEqual(self.meta()["reps"], 3)

    def test_boot_args(self):
        r = plan("boot-args", self.run_dir, "1", "pre", "pre", "ram-bounce+ram", "none", "1",
                 env=self.env)
        args = r.stdout.split("\0")[:-1]
        jobs = args[args.index("-j") + 1].split()
        # each job on both disks, A B then B A; the probed twin on the
        # bounce candidate only; integrity in rep 1
        self.assertEqual(jobs, ["ram-bounce:lat-randread-4k-qd1.fio", "ram:lat-randread-4k-qd1.fio",
                                "ram:lat-randwrite-4k-qd1.fio", "ram-bounce:lat-randwrite-4k-qd1.fio",
                                "ram-bounce:lat-randread-4k-qd1.fio:probe",
                                "ram-bounce:integrity-direct-512-qd8.fio",
                                "ram:integrity-direct-512-qd8.fio"])
        self.assertEqual(args[args.index("-c") + 1], "insn")
        self.assertNotIn("-a", args)
        r = plan("boot-args", self.run_dir, "4", "pre", "pre", "virtio", "none", "2",
                 env=dict(self.env, BL_COMPARE_FAIL_BOOT="4"))
        args = r.stdout.split("\0")[:-1]
        self.assertNotIn("integrity", args[args.index("-j") + 1])
        self.assertEqual(args[args.index("-a") + 1], " rdinit=/bl-injected-failure")


class Parsers(unittest.TestCase):
    def test_matrix(self):
        m = matrix.parse("# c\nx variants a b\nx reps 2\n\nx jobs j1\nx jobs j2\ny variants c\n")
        self.assertEqual(m, {"x": {"variants": ["a", "b"], "reps": ["2"], "jobs": ["j1", "j2"]},
                             "y": {"variants": ["c"]}})

    def test_lab_conf_for_the_shell(self):
        lab = os.path.join(H.ROOT, "bench", "lab.conf")
        script = (f'BL_ROOT={H.ROOT}; . "$BL_ROOT/lib/common.sh"; . "$BL_ROOT/lib/lab.sh"\n'
                  'echo "$(bl_lab_disk ram-bounce knob)|$(bl_lab_clock insn icount)|'
                  '$(bl_lab_pressure none mib)|$(bl_lab_names clock | xargs)"\n'
                  'bl_lab_channel usb args\n(bl_lab_disk floppy role) 2>&1; echo "exit $?"')
        out = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                             env=dict(os.environ, BOUNCELAB_LAB_FILE=lab)).stdout.splitlines()
        with open(lab, encoding="utf-8") as f:
            parsed = labconf.parse(f.read())
        self.assertEqual(out[0], f"{parsed['disk']['ram-bounce']['knob']}|3||host insn")
        self.assertEqual(out[1], parsed["channel"]["usb"]["args"])
        self.assertIn("unknown disk 'floppy' (known: ", out[2])
        self.assertEqual(out[3], "exit 1")


class Summary(unittest.TestCase):
    """The console summary says "exercised" where the verdicts would."""

    def test_exercised_is_the_analysis_rule(self):
        from analysis.questions import bounced as summary
        with tempfile.TemporaryDirectory() as tmp:
            run = H.make_run(os.path.join(tmp, "run"), [
                dict(variant="pre-fixed", disk="usb-pio", pressure="none", rep=1,
                     jobs=[dict(device="usb", job="a", bounces=40),
                           dict(device="usb", job="b", bounces=0)]),
                dict(variant="pre-fixed", disk="usb-pio", pressure="none", rep=2,
                     jobs=[dict(device="usb", job="a", bounces=40),
                           dict(device="usb", job="b", bounces=3)]),
                dict(variant="pre", disk="usb-pio", pressure="none", rep=1,
                     jobs=[dict(device="usb", job="a", bounces=0)]),
                dict(variant="post", disk="usb-pio", pressure="none", rep=1,
                     jobs=[dict(device="usb", job="a", bounces="absent")]),
                dict(variant="post", disk="usb-pio", pressure="none", rep=2,
                     status="failed: kernel panic", jobs=[]),
            ])
            lines = summary.lines(run)
        text = "\n".join(lines)
        # 83 bounced bios, but one job counted none: not exercised
        self.assertRegex(text, r"\n  pre-fixed usb-pio +83  \(not exercised: 0 bounced bios in 1 of 4 jobs\)")
        self.assertNotIn("<- bounce path exercised", text)
        self.assertRegex(text, r"\n  pre usb-pio +0\n")
        self.assertRegex(text, r"\n  post usb-pio +0 \(no bounce code in this kernel\) \(1 boot\(s\) failed\)")
        self.assertIn("  boot 5 post usb-pio none rep 2: failed: kernel panic", text)


class Sweep(unittest.TestCase):
    """The I/O-size sweep: sweep_jobs run in the boots of the sweep_disks
    entries only, after the probed twins, in A B / B A turns, never under a
    pressure level; a sweep disk --disks left out takes the sweep with it."""
    LAB = {"disk": {"ram-bounce": {"role": "bounce-candidate"}, "ram": {"role": "control"},
                    "virtio": {"role": "control"}}}
    P = dict(jobs=["j"], probe_jobs=["j"], integrity_jobs=["i"], integrity_reps=1,
             pressure_levels=["full24"], pressure_jobs=["pw"],
             sweep_disks=["ram-bounce+ram@insn"], sweep_jobs=["s1", "s2"])

    def test_boot_jobs(self):
        from planner import boots
        jobs = boots.boot_jobs(self.P, self.LAB, ["ram-bounce", "ram"], "none", 1).split()
        self.assertEqual(jobs, ["ram-bounce:j.fio", "ram:j.fio", "ram-bounce:j.fio:probe",
                                "ram-bounce:s1.fio", "ram:s1.fio", "ram:s2.fio",
                                "ram-bounce:s2.fio", "ram-bounce:i.fio", "ram:i.fio"])
        # another entry, a pressure boot: no sweep
        self.assertNotIn("s1", boots.boot_jobs(self.P, self.LAB, ["virtio"], "none", 1))
        self.assertEqual(boots.boot_jobs(self.P, self.LAB, ["ram-bounce", "ram"], "full24", 1),
                         "ram-bounce:pw.fio ram:pw.fio")
        # even reps of a pressure boot swap the disks: neither always first
        self.assertEqual(boots.boot_jobs(self.P, self.LAB, ["ram-bounce", "ram"], "full24", 2),
                         "ram:pw.fio ram-bounce:pw.fio")

    def test_seeds(self):
        """A copy label's boots run other trajectories than its kernel's:
        seeds differ by copy, every kernel's boot of a rep shares one."""
        from planner import boots
        self.assertEqual([boots.boot_seed(l, 3) for l in ("pre", "post", "pre.2", "pre.3",
                                                          "6.1/fixed")],
                         [3, 3, 1003, 2003, 3])

    def test_arguments(self):
        # --disks without the sweep's entry runs no sweep
        r = plan("dry-run", "--disks", "virtio")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("sweep", r.stdout)
        r = plan("dry-run", "--set", "sweep")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("sweep on ram-bounce+ram@insn: sweep-randread-4k-qd1", r.stdout)
        r = plan("dry-run", "--set", "sweep", "--sweep-jobs", "none")
        self.assertEqual(r.returncode, 2)
        self.assertIn("empty matrix", r.stderr)


class ExactReps(unittest.TestCase):
    """An entry stops after exact_reps only where its numbers repeat: on an
    exact clock with no disk QEMU completes on its own threads."""
    P = dict(disks=["ram-bounce+ram@insn", "usb-pio@insn"], pressures=["none"],
             pressure_disks=[], pressure_levels=[], exact_clocks=["insn"], exact_reps=1,
             disk_clocks={"ram-bounce": "insn", "ram": "insn", "usb-pio": "insn"},
             labels=["pre", "post"], extend=[])

    def test_host_disks_of_lab_conf(self):
        from lab import labconf as L
        lab = L.load()
        self.assertEqual({d for d in lab["disk"] if L.host_completes(lab, d)},
                         {"usb-pio", "usb-dma", "virtio"})
        self.assertFalse(L.host_completes(lab, "ram-bounce/ram"))

    def test_a_disk_qemu_completes_gets_every_rep(self):
        from planner import boots
        p = dict(self.P, host_disks=["usb-pio"])
        rows = boots.rows(p, 1, 3, 0)
        self.assertEqual([(r[3], r[5]) for r in rows],
                         [("ram-bounce+ram", 1)] * 2 + [("usb-pio", 1)] * 2 +
                         [("usb-pio", 2)] * 2 + [("usb-pio", 3)] * 2)
        # the determinism round adds only the entries it names
        p["extend"] = ["ram-bounce+ram|none"]
        self.assertEqual({(r[3], r[5]) for r in boots.rows(p, 2, 3, 8, extend_only=True)},
                         {("ram-bounce+ram", 2), ("ram-bounce+ram", 3)})
        # a pressure disk under its level: chaotic, every rep at once,
        # and never again in the determinism round (run 20261206-053436
        # planned its reps 3-4 a second time)
        q = dict(self.P, host_disks=["usb-pio"], disks=["ram-bounce+ram@insn"],
                 pressure_disks=["ram-bounce@insn"], pressure_levels=["full24"])
        self.assertEqual([(r[3], r[4], r[5]) for r in boots.rows(q, 1, 2, 0)][::2],
                         [("ram-bounce+ram", "none", 1), ("ram-bounce", "full24", 1),
                          ("ram-bounce", "full24", 2)])
        q["extend"] = ["ram-bounce|full24", "usb-pio|none"]
        self.assertEqual(boots.rows(q, 2, 3, 6, extend_only=True), [])
        # a plan.json from before host_disks: every exact-clock entry stops
        del p["host_disks"]
        p["extend"] = []
        self.assertEqual(len(boots.rows(p, 1, 3, 0)), 4)


if __name__ == "__main__":
    unittest.main()
