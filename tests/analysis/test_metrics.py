# SPDX-License-Identifier: GPL-2.0
"""metrics.py is one registry: no key defined twice, every flag known, the
PRIMARY rules name exactly the metrics flagged primary, and every
headline is a known metric on a known page."""
import ast
import os
import unittest

import helpers as H
from analysis import metrics as M

SOURCE = os.path.join(H.ROOT, "bench", "analysis", "metrics.py")


class Registry(unittest.TestCase):
    def test_no_literal_key_twice(self):
        # every add("key", ...) with a literal key, as written in the file
        with open(SOURCE, encoding="utf-8") as f:
            tree = ast.parse(f.read())
        keys = [n.args[0].value for n in ast.walk(tree)
                if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "add"
                and n.args and isinstance(n.args[0], ast.Constant)]
        self.assertGreater(len(keys), 20)
        self.assertEqual(sorted(k for k in set(keys) if keys.count(k) > 1), [])
        # and no dict literal slips a metric in beside add
        dicts = [n for n in ast.walk(tree) if isinstance(n, ast.Dict)
                 and any(isinstance(k, ast.Constant) and k.value in M.METRICS for k in n.keys)]
        self.assertEqual(dicts, [])

    def test_add_refuses_a_duplicate(self):
        with self.assertRaises(ValueError):
            M.add("read_iops", "IO/s", M.THROUGHPUT, "again")
        with self.assertRaises(ValueError):
            M.add("new_metric_x", "x", M.LEVEL, "x", "no-such-flag")
        self.assertNotIn("new_metric_x", M.METRICS)

    def test_entries(self):
        for key, m in M.METRICS.items():
            with self.subTest(metric=key):
                self.assertIn(m.kind, (M.THROUGHPUT, M.LATENCY, M.COST, M.LEVEL))
                self.assertLessEqual(m.flags, set(M.FLAGS))
                self.assertGreater(m.min_effect_pct, 0)

    def test_primary_flag_matches_rules(self):
        named = {metric.format(d=d) for _, _, metric in M.PRIMARY for d in ("read", "write")}
        self.assertEqual(named, set(M.selected("primary")))

    def test_headlines(self):
        pages = {M.REPORT, M.HISTORY} | {g for g, _ in M.HEADLINE_GROUPS}
        for h in M.HEADLINES:
            self.assertIn(h.metric, M.METRICS)
            self.assertLessEqual(set(h.pages), pages, h)
        self.assertEqual(M.headlines(M.REPORT),
                         ["read_iops", "read_bw", "write_iops", "write_bw", "cpu_s_per_gib"])
        self.assertTrue(M.is_headline("write_bw", "pressure-writeback", "memory"))
        self.assertFalse(M.is_headline("write_bw", "pressure-writeback", M.HISTORY))

    def test_min_effect_default_and_overrides(self):
        for m in ("read_iops", "write_clat_p99_us", "cpu_s_per_gib"):
            self.assertEqual(M.min_effect(m), 1.0)
        self.assertEqual(M.min_effect("read_iops", {"*": 5}), 5.0)
        self.assertEqual(M.min_effect("read_iops", {"*": 5, "read_iops": 2}), 2.0)
        self.assertEqual(M.kind("cpu_s_per_gib"), M.COST)


if __name__ == "__main__":
    unittest.main()
