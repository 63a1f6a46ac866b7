# SPDX-License-Identifier: GPL-2.0
"""The instruction counts of a job on an exact clock: the reader of the
insnprof QEMU plugin (bench/qemu-plugin/insnprof.c) and its guest marks
(guest/helpers/insnmark.c). Files (missing: not measured, never zero):

  BOOT/insnprof.txt   a window a job: user and kernel instructions, per
                      kernel symbol its instructions, calls and rep movs
                      iterations, and (format 2) the bytes they moved
  JOB/insn-window     "open N NS" and "close N NS": the window, the clock

-> µs per I/O of the window (instructions x 2^S ns plus idle), by part of
the kernel (PARTS by symbol, first match wins; every symbol's rep movs
iterations are "copy"), and the counts per I/O (count_rows).
"""
import os
import re

PARTS = (
    # ^rb_ is the ring buffer's, less lib/rbtree's (the scheduler's and
    # the timers' trees); (?<!p)trace leaves ptrace out
    ("instruments", r"ftrace|fgraph|graph_|(?<!p)trace|tracing|hist_|_hist|"
                    r"^event_|ring_buffer|lab_occ|hash_contains_ip|"
                    r"^rb_(?!(erase|insert_color|first|last|next|prev|"
                    r"replace_node|replace_node_rcu|first_postorder|"
                    r"next_postorder)$)"),
    ("bounce page", r"^mempool_|alloc_pages|get_page_from_freelist|rmqueue|"
                    r"free_unref_page|free_pcppages|^__free_pages|^free_pages|"
                    r"zone_page_state|next_zones_zonelist|prep_new_page|"
                    r"post_alloc_hook|zone_watermark|_raw_spin_trylock"),
    ("bio clone", r"^bio_alloc|bio_clone|^bio_free|^bio_put|^bio_init|"
                  r"^bio_uninit|bio_split|bvec_alloc|bvec_free|"
                  r"^kmem_cache_alloc|^kmem_cache_free|__blk_queue_bounce|"
                  r"bounce_clone_bio"),
    ("kmap", r"kmap|kunmap|^page_address|migrate_enable|migrate_disable|"
             r"flush_tlb_one"),
    ("completion", r"bounce_end_io|^bio_endio"),
)
COPY, OTHER = "copy", "other kernel"
PART_NAMES = (COPY,) + tuple(p for p, _ in PARTS) + (OTHER,)
_PATTERNS = tuple((p, re.compile(rx)) for p, rx in PARTS)
# every bounced bio completes through one of these (since 2.6)
BOUNCE_ENDS = ("bounce_end_io_read", "bounce_end_io_write")
# the units that carry to another CPU: counts per I/O, not times
COUNTS = ("insn_instructions_per_io", "insn_copy_iters_per_io", "insn_copy_bytes_per_io")


def part_of(symbol):
    return next((part for part, rx in _PATTERNS if rx.search(symbol)), OTHER)


def metric_key(part):
    return "insn_part_" + re.sub(r"\W+", "_", part) + "_us_per_io"


def read_profile(path):
    """{window: {"user", "kernel", "syms": {name: (count, calls, copy)},
    "copy_bytes": {name: bytes} (None in a format 1 file)}} of the closed
    windows, {} when the file is missing or not insnprof's."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return {}
    fmt = lines[0].split()[:2] if lines else []
    if fmt not in (["insnprof", "1"], ["insnprof", "2"]) or "vcpus=1 " not in lines[0] + " ":
        return {}           # not insnprof's, or racing counters: not exact, not used
    out, cur, wid = {}, None, None
    for p in filter(None, map(str.split, lines[1:])):
        if p[0] == "window" and len(p) == 4:
            wid = int(p[1])
            cur = {"user": int(p[2].split("=")[1]), "kernel": int(p[3].split("=")[1]),
                   "syms": {}, "copy_bytes": {} if fmt[1] == "2" else None}
        # "sym NAME COUNT CALLS COPY", format 2 with the bytes copied after
        elif p[0] == "sym" and cur is not None and len(p) == (5 if fmt[1] == "1" else 6):
            cur["syms"][p[1]] = tuple(int(x) for x in p[2:5])
            if len(p) == 6:
                cur["copy_bytes"][p[1]] = int(p[5])
        elif p[0] == "end" and cur is not None and int(p[1]) == wid:
            out[wid] = cur
            cur = None
    return out


def read_window(path):
    """(window, open_ns, close_ns) of a job's insn-window file, or None."""
    ends = {}
    try:
        with open(path, encoding="utf-8") as f:
            for p in map(str.split, f):
                if len(p) == 3 and p[0] in ("open", "close"):
                    ends[p[0]] = (int(p[1]), int(p[2]))
    except (OSError, ValueError):
        return None
    if set(ends) != {"open", "close"} or ends["open"][0] != ends["close"][0]:
        return None
    return ends["open"][0], ends["open"][1], ends["close"][1]


def boot_dir(jdir):
    """BOOT of BOOT/guest/jobs/JOB."""
    return os.path.dirname(os.path.dirname(os.path.dirname(os.path.normpath(jdir))))


def job_profile(jdir, cache=None):
    """(window counts, window ns) of a job folder, or None. cache: a dict
    kept across the jobs of a run (each boot's profile read once)."""
    win = read_window(os.path.join(jdir, "insn-window"))
    if win is None:
        return None
    path = os.path.join(boot_dir(jdir), "insnprof.txt")
    cache = {} if cache is None else cache
    if path not in cache:
        cache[path] = read_profile(path)
    counts = cache[path].get(win[0])
    return None if counts is None else (counts, win[2] - win[1])


def bounces(counts):
    """Bounced bios of a window: the calls of the bounce completions, or
    None when the kernel has neither (no bounce code)."""
    calls = [counts["syms"][s][1] for s in BOUNCE_ENDS if s in counts["syms"]]
    return sum(calls) if calls else None


def job_rows(counts, window_ns, ios, ns_per_insn):
    """[(metric, value)] of one window: µs per I/O of the whole window, of
    user, kernel and idle time, and of each part of the kernel's."""
    if not ios or not ns_per_insn:
        return []
    per_io = ns_per_insn / 1000.0 / ios
    parts = dict.fromkeys(PART_NAMES, 0)
    for name, (count, _calls, copy) in counts["syms"].items():
        parts[COPY] += copy
        parts[part_of(name)] += count - copy
    insns = counts["user"] + counts["kernel"]
    rows = [("insn_window_us_per_io", window_ns / 1000.0 / ios),
            ("insn_user_us_per_io", counts["user"] * per_io),
            ("insn_kernel_us_per_io", counts["kernel"] * per_io),
            ("insn_idle_us_per_io", (window_ns - insns * ns_per_insn) / 1000.0 / ios)]
    rows += [(metric_key(p), n * per_io) for p, n in parts.items()]
    n = bounces(counts)
    if n is not None:
        rows.append(("insn_bounces_per_io", n / ios))
    return rows


def count_rows(counts, ios):
    """[(metric, value)] of one window in counts per I/O: instructions, the rep movs iterations
    among them, and the bytes they moved (none from a format 1 file)."""
    if not ios:
        return []
    rows = [("insn_instructions_per_io", (counts["user"] + counts["kernel"]) / ios),
            ("insn_copy_iters_per_io",
             sum(copy for _c, _n, copy in counts["syms"].values()) / ios)]
    if counts.get("copy_bytes") is not None:
        rows.append(("insn_copy_bytes_per_io", sum(counts["copy_bytes"].values()) / ios))
    return rows
