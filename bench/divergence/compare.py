# SPDX-License-Identifier: GPL-2.0
"""Where two boots of one bundle part: two divtrace fingerprints
(bench/qemu-plugin/divtrace.c) in, a few lines out (bench/diverge compare
TRACE_A TRACE_B; exit 0 identical, 1 they part, 2 unreadable or not taken
alike). Under -icount with one vCPU two boots of a bundle run the same
instructions until the host gives them something at another instruction:
an interrupt (its first difference names the source: the entry stub's
vector and its handler), or a value read from a device.
"""
import sys

# irq_entries_start has one stub per vector from FIRST_EXTERNAL_VECTOR,
# IDT_ALIGN bytes apart (i386 without IBT)
FIRST_EXTERNAL_VECTOR = 0x20
IDT_ALIGN = 8


class Trace:
    """One divtrace file: cps {count: hash}, last_fn {count: symbol}, irqs
    [(count, entry, handler)], marks [(count, open|close, id)], fns [(count,
    symbol)] (a second pass) and end (count, hash), None if QEMU did not
    exit cleanly."""

    def __init__(self, path):
        self.cps, self.last_fn = {}, {}
        self.fns, self.irqs, self.marks, self.end = [], [], [], None
        with open(path) as f:
            head = f.readline().split()
            if head[:2] != ["divtrace", "1"]:
                raise ValueError(f"{path}: not a divtrace file")
            opts = dict(w.split("=", 1) for w in head[2:])
            self.every = int(opts["every"])
            self.vcpus = int(opts.get("vcpus", 1))
            for w in map(str.split, f):
                kind, n = (w[0], len(w)) if w else ("", 0)
                if kind == "cp" and n in (3, 4):
                    self.cps[int(w[1])] = w[2]
                    self.last_fn[int(w[1])] = w[3] if n == 4 else "?"
                elif kind == "fn" and n == 3:
                    self.fns.append((int(w[1]), w[2]))
                elif kind == "irq" and n == 4:
                    self.irqs.append((int(w[1]), w[2], w[3]))
                elif kind == "mark" and n == 4:
                    self.marks.append((int(w[1]), w[2], int(w[3])))
                elif kind == "end" and n == 3:
                    self.end = (int(w[1]), w[2])

    def where(self, count):
        """Where COUNT lies among the lab's windows (its jobs)."""
        last = None
        for c, kind, wid in self.marks:
            if c > count:
                if kind == "close" and last == ("open", wid):
                    return f"in window {wid}"
                return f"before window {wid}" if last is None else \
                    f"after window {last[1]}, before window {wid}"
            last = (kind, wid)
        return f"after window {last[1]} (the last)" if last else "before the first window"


def irq_text(irq):
    """(count, entry, handler) in words: an entry irq_entries_start+0x28 is
    "vector 0x25", any other its symbol."""
    if irq is None:
        return "none"
    count, entry, handler = irq
    sym, _, off = entry.partition("+")
    if sym == "irq_entries_start" and off:
        sym = f"vector {FIRST_EXTERNAL_VECTOR + int(off, 16) // IDT_ALIGN:#x}"
    return f"{sym} ({handler}) at instruction {count:,}"


def compare(a, b):
    """{identical, agree_until (the last checkpoint both share), first_diff
    (None when only the end differs), cause_a / cause_b (the first
    differing interrupt of each), fn_a / fn_b (the first differing
    function entry), where (the windows around the parting), ends}."""
    if a.every != b.every:
        raise ValueError(f"checkpoints every {a.every} against every {b.every}")
    common = sorted(set(a.cps) & set(b.cps))
    first = next((c for c in common if a.cps[c] != b.cps[c]), None)
    agree = max((c for c in common if first is None or c < first), default=0)
    identical = first is None and a.end is not None and a.end == b.end
    res = {"identical": identical, "agree_until": agree, "first_diff": first,
           "cause_a": None, "cause_b": None, "fn_a": None, "fn_b": None,
           "where": None, "ends": (a.end, b.end)}
    if identical:
        return res
    # interrupts before the last common checkpoint are the same in both
    ca, cb = _first_apart(a.irqs, b.irqs)
    bound = first if first is not None else float("inf")
    if ca and ca[0] > bound and cb and cb[0] > bound:
        ca = cb = None     # no interrupt parts them first: a value did
    res.update(cause_a=ca, cause_b=cb, where=a.where(agree))
    # each side's first function entry (count, symbol) after agree where
    # the lists differ; none when a trace lists none
    fa, fb = ([f for f in t.fns if f[0] >= agree] for t in (a, b))
    if fa and fb:
        res["fn_a"], res["fn_b"] = _first_apart(fa, fb)
    return res


def _first_apart(xs, ys):
    """The first items at which two lists differ (None past a list's end)."""
    n = next((i for i, (x, y) in enumerate(zip(xs, ys)) if x != y), min(len(xs), len(ys)))
    return (xs[n] if n < len(xs) else None), (ys[n] if n < len(ys) else None)


def report(a, b, res):
    if res["identical"]:
        return [f"identical: {a.end[0]:,} instructions, the same fingerprint at every "
                f"checkpoint ({len(a.cps)} of them, every {a.every:,})"]
    agree, first = res["agree_until"], res["first_diff"]
    ea, eb = res["ends"]
    if first is not None:
        lines = [f"the boots part between instructions {agree:,} and {first:,} ({res['where']}); "
                 f"last function entered there: A {a.last_fn.get(first, '?')}, "
                 f"B {b.last_fn.get(first, '?')}"]
    elif ea and eb:
        lines = [f"the boots agree at every common checkpoint (up to {agree:,}) but end "
                 f"apart: {ea[0]:,} against {eb[0]:,} instructions"]
    else:
        lines = [f"the boots agree up to instruction {agree:,}; a boot has no end line "
                 "(QEMU did not exit cleanly)"]
    fa, fb = res["fn_a"], res["fn_b"]
    if fa or fb:
        lines.append("first function entry that differs: " + ", ".join(
            f"{n} {f[1]} at instruction {f[0]:,}" if f else f"{n} none"
            for n, f in (("A", fa), ("B", fb))))
    ca, cb = res["cause_a"], res["cause_b"]
    if ca or cb:
        lines += ["first interrupt that differs:", f"  A: {irq_text(ca)}", f"  B: {irq_text(cb)}"]
        if ca and cb and ca[1:] == cb[1:]:
            lines.append(f"  the same interrupt, {abs(ca[0] - cb[0]):,} "
                         f"instructions apart: its source runs on host time")
    else:
        lines.append("no interrupt differs before they part: a value the guest read "
                     "(a device register, or memory a device wrote) differs")
    return lines


def main(argv):
    if len(argv) != 3:
        print("usage: bench/diverge compare TRACE_A TRACE_B", file=sys.stderr)
        return 2
    try:
        a, b = Trace(argv[1]), Trace(argv[2])
        if a.vcpus != 1 or b.vcpus != 1:
            raise ValueError("a trace with more than one vCPU is not exact")
        res = compare(a, b)
    except (OSError, ValueError, KeyError) as e:
        print(f"divergence: {e}", file=sys.stderr)
        return 2
    print("\n".join(report(a, b, res)))
    return 0 if res["identical"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
