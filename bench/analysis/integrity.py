# SPDX-License-Identifier: GPL-2.0
"""Data integrity: what fio's verify found, per job.

An integrity job (its job file says "; bouncelab-class: integrity", the
guest copies that into the job's "class" file) writes every block once,
reads every block back from the device and checks it, and keeps going
after a bad block (continue_on_error=verify). Its verify errors are its
result, not a failure of the lab.

Counted per job:
- written: blocks fio wrote (write total_ios);
- checked: blocks read back and checked (read total_ios of the verify
  pass);
- bad: blocks that failed the check: fio's total_err where it reports it
  (continue_on_error), else the distinct offsets of its "verify"
  messages on stderr;
- first_bad: the first few bad offsets, from those messages.
"""
import re

_BAD = re.compile(r"(?:verify|bad magic|bad header|crc32c).*?offset (\d+), length (\d+)",
                  re.IGNORECASE)
FIRST_BAD = 5


def job_result(fio, stderr_text):
    """{"written", "checked", "bad", "first_bad"} of one integrity job;
    None when fio wrote no report."""
    jobs = (fio or {}).get("jobs") or []
    if not jobs:
        return None
    written = sum(int((j.get("write") or {}).get("total_ios", 0) or 0) for j in jobs)
    checked = sum(int((j.get("read") or {}).get("total_ios", 0) or 0) for j in jobs)
    # the distinct (offset, length) pairs fio's verify messages name, in order
    found = (_BAD.search(line) for line in (stderr_text or "").splitlines())
    offsets = list(dict.fromkeys(tuple(map(int, m.groups())) for m in found if m))
    errs = [j.get("total_err") for j in jobs if j.get("total_err") is not None]
    bad = max(sum(int(e) for e in errs), len(offsets)) if errs else len(offsets)
    return {"written": written, "checked": checked, "bad": bad,
            "first_bad": " ".join(str(o) for o, _ in offsets[:FIRST_BAD])}
