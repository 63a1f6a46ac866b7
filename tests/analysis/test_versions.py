# SPDX-License-Identifier: GPL-2.0
"""Kernel versions in the history (analysis/versions.py): Debian version
order and the markers."""
import shutil
import subprocess
import unittest

import helpers  # noqa: F401 (puts bench/ on sys.path)
from analysis import versions as V

VERSION_ORDER = ["5.10.262-1", "6.1.192-3", "6.12.118-1~deb12u1", "7.2.13-1"]


class Order(unittest.TestCase):
    PAIRS = [("5.10.262-1", "6.1.192-3"), ("6.1.176-1", "6.1.192-3"),
             ("6.1.192-3", "6.12.118-1~deb12u1"), ("6.12.118-1~deb12u1", "6.12.118-1"),
             ("6.12.118-1", "6.12.120-1~deb12u1"), ("6.12.120-1~deb12u1", "7.2.13-1"),
             ("7.2.13-1", "1:4.19.0-1"), ("6.16~rc1-1", "6.16-1"), ("6.16", "6.16.1"),
             ("5.10.262-1", "5.10.262-1+b1")]

    def test_pairs(self):
        for a, b in self.PAIRS:
            self.assertLess(V.compare(a, b), 0, (a, b))
            self.assertGreater(V.compare(b, a), 0, (b, a))
            self.assertEqual(V.compare(a, a), 0)

    @unittest.skipUnless(shutil.which("dpkg"), "no dpkg")
    def test_same_as_dpkg(self):
        for a, b in self.PAIRS:
            res = subprocess.run(["dpkg", "--compare-versions", a, "lt", b])
            self.assertEqual(res.returncode, 0, (a, b))

    def test_sort_is_not_text_order(self):
        shuffled = ["7.2.13-1", "6.12.118-1~deb12u1", "6.9.12-1", "5.10.262-1", "6.1.192-3"]
        want = ["5.10.262-1", "6.1.192-3", "6.9.12-1", "6.12.118-1~deb12u1", "7.2.13-1"]
        self.assertEqual(V.sort_versions(shuffled), want)
        self.assertNotEqual(sorted(shuffled), want)

    def test_upstream_and_package(self):
        self.assertEqual(V.upstream("1:6.12.118-1~deb12u1"), "6.12.118")
        self.assertEqual(V.package_of("", "5.10.262-1"), "linux-source-5.10")
        self.assertEqual(V.package_of("6.1.192", "unknown"), "linux-source-6.1")
        self.assertEqual(V.package_of("", "unknown"), "")


class Markers(unittest.TestCase):
    def test_four_versions(self):
        m = V.markers(VERSION_ORDER)
        self.assertEqual([(x, at) for x, at, _ in m], [(0.5, "5.13"), (2.5, "6.16")])
        self.assertIn("9bb33f24abbd", m[0][2])
        self.assertIn("removed", m[1][2])

    def test_at_the_edges(self):
        m = V.markers(["6.12.118-1~deb12u1", "7.2.13-1"])
        self.assertEqual([x for x, _, _ in m], [-0.5, 0.5])
        m = V.markers(["5.10.262-1", "6.12.118-1"])
        self.assertEqual([x for x, _, _ in m], [0.5, 1.5])


if __name__ == "__main__":
    unittest.main()
