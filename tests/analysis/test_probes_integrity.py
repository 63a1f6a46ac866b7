# SPDX-License-Identifier: GPL-2.0
"""probes.py (function_graph parsing) and integrity.py (fio verify)."""
import gzip
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "bench"))

from analysis import integrity as I  # noqa: E402
from analysis import probes as P  # noqa: E402

# A function_graph trace as 6.12 prints it: a write bounced at submit, a
# read completion whose nested bio_endio (the original bio) is not the
# bounce's own time, a call cut by the trace start, and CPU 1 interleaved.
TRACE = """\
# tracer: function_graph
#
# CPU  DURATION                  FUNCTION CALLS
# |     |   |                     |   |   |   |
 1)               |    bounce_end_io() {
 0)   4.500 us    |  __blk_queue_bounce();
 0)               |  bio_endio() {
 1) + 12.000 us   |    }
 0)               |    bounce_end_io_read() {
 0)               |      bounce_end_io() {
 0)   7.000 us    |        bio_endio();
 0)   9.000 us    |      }
 0) + 11.500 us   |    }
 0) + 13.000 us   |  }
 1) ! 150.250 us  |  __blk_queue_bounce();
 0)               |  bounce_end_io_write() {
 0)   2.000 us    |    bio_endio();
"""


class Probes(unittest.TestCase):
    def test_parse_and_summary(self):
        calls = P.parse(TRACE)
        names = [c[0] for c in calls]
        # the cut call on CPU 1 closes nothing; the open write is dropped
        self.assertEqual(names.count("__blk_queue_bounce"), 2)
        self.assertNotIn("bounce_end_io_write", names)
        s = P.summary(calls)
        self.assertEqual(sorted(s["submit"].tolist()), [4.5, 150.25])
        # 11.5 us less the nested bio_endio's 7 us
        self.assertEqual(s["completion"].tolist(), [4.5])

    def test_gzip_and_overrun(self):
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "probe-trace.txt.gz")
            with gzip.open(path, "wt") as f:
                f.write(TRACE)
            self.assertEqual(P.read_trace_text(path), TRACE)
            self.assertIsNone(P.read_trace_text(os.path.join(tmp, "none.gz")))
        self.assertEqual(P.read_overrun("x", lambda p: "cpu0 0\ncpu1 3\n"), 3)
        self.assertIsNone(P.read_overrun("x", lambda p: None))


STDERR = """\
verify: bad magic header 0, wanted acca at file /dev/sda offset 126464, length 512 (requested block: offset=126464, length=512)
fio: pid=80, err=84/file:io_u.c:2224, func=io_u_queued_complete, error=Invalid or incomplete multibyte or wide character
verify: bad magic header 0, wanted acca at file /dev/sda offset 4096, length 512 (requested block: offset=4096, length=512)
verify: bad magic header 0, wanted acca at file /dev/sda offset 126464, length 512 (requested block: offset=126464, length=512)
"""


class Integrity(unittest.TestCase):
    def fio(self, total_err=None):
        job = {"write": {"total_ios": 2048}, "read": {"total_ios": 2048}}
        if total_err is not None:
            job["total_err"] = total_err
        return {"jobs": [job]}

    def test_counts_from_stderr(self):
        r = I.job_result(self.fio(), STDERR)
        self.assertEqual((r["written"], r["checked"], r["bad"]), (2048, 2048, 2))
        self.assertEqual(r["first_bad"], "126464 4096")

    def test_total_err_wins_when_larger(self):
        self.assertEqual(I.job_result(self.fio(total_err=40), STDERR)["bad"], 40)

    def test_clean_and_missing(self):
        self.assertEqual(I.job_result(self.fio(total_err=0), "")["bad"], 0)
        self.assertIsNone(I.job_result(None, STDERR))


if __name__ == "__main__":
    unittest.main()


class IntegrityReport(unittest.TestCase):
    """headline.integrity_section on a synthetic run: pre-fixed corrupts
    on ram-bounce, pre does not."""

    def run_with(self, bad):
        import types
        import pandas as pd
        from analysis.questions import integrity as Hd
        rows = []
        for boot, (variant, nbad, bounces) in enumerate(bad, 1):
            for metric, value in (("integrity_bad_blocks", nbad),
                                  ("integrity_checked_blocks", 2048),
                                  ("integrity_written_blocks", 2048),
                                  ("bounces", bounces)):
                rows.append(dict(variant=variant, disk="ram-bounce",
                                 job="integrity-direct-512-qd8", pressure="none",
                                 rep=1, boot=boot, metric=metric, value=value, unit=""))
        run = types.SimpleNamespace(tidy=pd.DataFrame(rows))
        return Hd.integrity_section(run)

    def test_names_the_corrupting_variant(self):
        text = "\n".join(self.run_with([("pre", 0, 0), ("pre-fixed", 1700, 4096)]))
        self.assertIn("**pre-fixed corrupts data**", text)
        self.assertIn("1700 of 2048", text)
        self.assertIn("no bad block on pre.", text)

    def test_clean_run(self):
        text = "\n".join(self.run_with([("pre", 0, 0), ("post", 0, 0)]))
        self.assertIn("no kernel corrupted data", text)
        self.assertNotIn("corrupts data", text)


class HistoryIntegrity(unittest.TestCase):
    def test_table_and_sentence(self):
        import pandas as pd
        from tracker import markdown
        rows = []
        for v, bad in (("pre", "0;0"), ("pre-fixed", "1792;1790")):
            for metric, vals in (("integrity_bad_blocks", bad),
                                 ("integrity_checked_blocks", "2048;2048")):
                rows.append(dict(started="2026-12-03T00:00:00Z", run_id="r1",
                                 kernel_source_version="6.12.118", variant=v,
                                 disk="ram-bounce", job="integrity-direct-512-qd8",
                                 metric=metric, values=vals))
        text = "\n".join(markdown.integrity_lines(pd.DataFrame(rows)))
        self.assertIn("**3582** / 4096", text)
        self.assertIn("| 0 / 4096 |", text)
        self.assertIn("Corrupted data: pre-fixed in r1.", text)
        self.assertEqual(markdown.integrity_lines(pd.DataFrame(rows[:0], columns=list(rows[0]))), [])
