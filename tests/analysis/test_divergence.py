# SPDX-License-Identifier: GPL-2.0
"""Where two boots part (divergence/compare.py, bench/diverge's comparer):
on divtrace fingerprints written here, identical boots are called
identical, a late interrupt is named with its vector, handler and the
window it fell in, a parting with no interrupt is put on a value, and
traces taken unlike are refused."""
import contextlib
import io
import os
import tempfile
import unittest

import helpers  # noqa: F401 (puts bench/ on the path)
from divergence import compare as DV

EVERY = 1000


def trace(cps, irqs=(), marks=(), end=None, every=EVERY, vcpus=1):
    """divtrace text: cps {count: hash}, irqs [(count, entry, handler)],
    marks [(count, kind, id)]."""
    out = [f"divtrace 1 every={every} kbase=0xc0000000 vcpus={vcpus}"]
    events = [(c, f"cp {c} {h}") for c, h in cps.items()]
    events += [(c, f"irq {c} {e} {h}") for c, e, h in irqs]
    events += [(c, f"mark {c} {k} {i}") for c, k, i in marks]
    out += [line for _, line in sorted(events, key=lambda x: x[0])]
    if end:
        out.append(f"end {end[0]} {end[1]}")
    return "\n".join(out) + "\n"


class DivergenceTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.addCleanup(self.tmp.cleanup)

    def load(self, name, text):
        p = os.path.join(self.tmp.name, name)
        with open(p, "w") as f:
            f.write(text)
        return DV.Trace(p)

    def pair(self, a, b):
        return self.load("a", a), self.load("b", b)

    def test_identical(self):
        t = trace({1000: "aa", 2000: "bb"}, [(1500, "irq_entries_start+0x0", "timer_interrupt")],
                  end=(2500, "cc"))
        a, b = self.pair(t, t)
        res = DV.compare(a, b)
        self.assertTrue(res["identical"])
        self.assertIn("identical: 2,500 instructions", DV.report(a, b, res)[0])

    def test_late_interrupt_is_named(self):
        marks = [(1200, "open", 1), (5200, "close", 1)]
        common = [(500, "irq_entries_start+0x0", "timer_interrupt")]
        a, b = self.pair(
            trace({1000: "h1", 2000: "h2", 3000: "A3", 4000: "A4"},
                  common + [(2400, "irq_entries_start+0x28", "vp_interrupt")], marks,
                  end=(6000, "ea")),
            trace({1000: "h1", 2000: "h2", 3000: "B3", 4000: "B4"},
                  common + [(2950, "irq_entries_start+0x28", "vp_interrupt")], marks,
                  end=(6100, "eb")))
        res = DV.compare(a, b)
        self.assertFalse(res["identical"])
        self.assertEqual((res["agree_until"], res["first_diff"]), (2000, 3000))
        self.assertEqual(res["where"], "in window 1")
        self.assertEqual(res["cause_a"][0], 2400)
        text = "\n".join(DV.report(a, b, res))
        # vector 0x20 + 0x28 / 8
        self.assertIn("vector 0x25 (vp_interrupt) at instruction 2,400", text)
        self.assertIn("550 instructions apart", text)
        self.assertIn("between instructions 2,000 and 3,000", text)

    def test_extra_interrupt_in_one_boot(self):
        a, b = self.pair(
            trace({1000: "h1", 2000: "A2"}, [(1500, "asm_sysvec_apic_timer_interrupt+0x0", "-")],
                  end=(2100, "x")),
            trace({1000: "h1", 2000: "B2"}, [], end=(2200, "y")))
        res = DV.compare(a, b)
        text = "\n".join(DV.report(a, b, res))
        self.assertIn("A: asm_sysvec_apic_timer_interrupt", text)
        self.assertIn("B: none", text)
        self.assertEqual(res["where"], "before the first window")

    def test_parting_without_interrupt_is_a_value(self):
        irq = [(2500, "irq_entries_start+0x0", "timer_interrupt")]
        a, b = self.pair(trace({1000: "h1", 2000: "A2"}, irq, end=(3000, "x")),
                         trace({1000: "h1", 2000: "B2"}, irq, end=(3000, "y")))
        res = DV.compare(a, b)
        self.assertIsNone(res["cause_a"])
        self.assertIn("a value the guest read", "\n".join(DV.report(a, b, res)))

    def test_cli_exit_codes_and_refusals(self):
        same = trace({1000: "h"}, end=(1500, "e"))
        other = trace({1000: "g"}, end=(1500, "f"))
        for name, text in (("s1", same), ("s2", same), ("o", other),
                           ("every", trace({2000: "h"}, every=2000, end=(2500, "e"))),
                           ("smp", trace({1000: "h"}, vcpus=2, end=(1500, "e"))),
                           ("junk", "hello\n")):
            with open(os.path.join(self.tmp.name, name), "w") as f:
                f.write(text)
        p = lambda n: os.path.join(self.tmp.name, n)  # noqa: E731
        quiet = io.StringIO()
        with contextlib.redirect_stdout(quiet), contextlib.redirect_stderr(quiet):
            self._exits(p)
        self.assertIn("not a divtrace file", quiet.getvalue())

    def _exits(self, p):
        self.assertEqual(DV.main(["x", p("s1"), p("s2")]), 0)
        self.assertEqual(DV.main(["x", p("s1"), p("o")]), 1)
        self.assertEqual(DV.main(["x", p("s1"), p("every")]), 2)
        self.assertEqual(DV.main(["x", p("s1"), p("smp")]), 2)
        self.assertEqual(DV.main(["x", p("s1"), p("junk")]), 2)
        self.assertEqual(DV.main(["x", p("s1")]), 2)


if __name__ == "__main__":
    unittest.main()
