# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Booting the real guest (bench/guest-run) and reading what it measured:
# the helpers of the truth-table suites (guest-test.sh for the default
# base, versions-test.sh for the others). Source it after tests/lib.sh
# and lib/lab.sh, with RUNS set to the folder the boots go to.

# The jobs both suites' rows run, and what a kernel without bounce code says.
WV=smoke-randwrite-verify.fio
I512=integrity-direct-512-qd8.fio
IBUF=integrity-buffered-1k.fio
# 64 KiB at QD8: at most 8 x 16 = 128 bounce pages in flight
OCC=occupancy-write-64k-qd8.fio
REFUSAL=$(bl_lab_refusal "$(bl_lab_disk usb-pio channel)")
SDEBUG_IGNORED='lab_no_highmem ignored: no driver can ask for bounce buffering any more'

# boot NAME VARIANT PRESSURE JOBS...: one guest; prints nothing, the
# folder is $RUNS/NAME.
boot()
{
	local name=$1 variant=$2 pressure=$3 start rc=0
	shift 3
	local args=(-v "$variant" -o "$RUNS/$name" -j "$*" -d 64 -t 600 -p "$pressure")
	start=$(bl_now)
	"$BL_ROOT/bench/guest-run" "${args[@]}" >"$RUNS/$name.out" 2>&1 || rc=$?
	bl_log "guest-test: $name: $(cat "$RUNS/$name/status" 2>/dev/null || echo 'no status') ($(( $(bl_now) - start ))s)"
	return $rc
}

# Job folder N of boot NAME.
jobdir()
{
	ls -d "$RUNS/$1/guest/jobs/$(printf '%02d' "$2")-"* 2>/dev/null | head -n 1
}

# The job ran, fio exited 0 and reported no error (verify errors included).
job_ok()
{
	local d
	d=$(jobdir "$1" "$2")
	[ -n "$d" ] || { echo "no job $2 in $1"; return 1; }
	[ ! -f "$d/skipped" ] || { echo "skipped: $(cat "$d/skipped")"; return 1; }
	[ "$(cat "$d/fio.rc")" = 0 ] ||
		{ echo "fio rc $(cat "$d/fio.rc")"; cat "$d/fio.stderr"; return 1; }
	python3 - "$d/fio.json" <<-'PY'
	import json, sys
	jobs = json.load(open(sys.argv[1]))["jobs"]
	bad = [(j["jobname"], j["error"]) for j in jobs if j["error"]]
	ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs)
	if bad or ios == 0:
	    sys.exit("fio errors %s, %d I/Os" % (bad, ios))
	PY
}

bounces()
{
	cat "$(jobdir "$1" "$2")/bounces" 2>/dev/null
}

# check_bounces NAME JOB OP VALUE: the job's counted bounces compare so.
check_bounces()
{
	local n
	n=$(bounces "$1" "$2")
	case $3 in
	eq) [ "$n" = "$4" ] ;;
	gt) [ "$n" != absent ] && [ -n "$n" ] && [ "$n" -gt "$4" ] ;;
	esac || { echo "bounces: '$n', wanted $3 $4"; return 1; }
}

disk_absent()
{
	grep -qx "$2 absent .*" "$RUNS/$1/guest/disks.txt" ||
		{ cat "$RUNS/$1/guest/disks.txt"; return 1; }
}

# bad_blocks NAME JOB: "BAD CHECKED" of an integrity job, as the analysis
# counts them, or "none".
bad_blocks()
{
	local d
	d=$(jobdir "$1" "$2")
	[ -n "$d" ] || { echo none; return; }
	BL_ROOT=$BL_ROOT /usr/bin/python3 - "$d" <<-'PY'
	import os, sys
	sys.path.insert(0, os.path.join(os.environ["BL_ROOT"], "bench"))
	from analysis import integrity as I, rawfiles as R
	d = sys.argv[1]
	r = I.job_result(R.read_fio(os.path.join(d, "fio.json")),
	                 R.read_text(os.path.join(d, "fio.stderr")))
	print("none" if r is None else f"{r['bad']} {r['checked']}")
	PY
}

# check_bad NAME JOB OP VALUE: the job's bad blocks compare so (OP eq,
# gt or ge; ge 0: measured at all).
check_bad()
{
	local n
	n=$(bad_blocks "$1" "$2")
	set -- "$1" "$2" "$3" "$4" $n
	[ "${5:-none}" != none ] && [ "${6:-0}" -gt 0 ] ||
		{ echo "no integrity result (checked ${6:-0} blocks)"; return 1; }
	case $3 in
	eq) [ "$5" = "$4" ] ;;
	gt) [ "$5" -gt "$4" ] ;;
	ge) [ "$5" -ge "$4" ] ;;
	esac || { echo "bad blocks: $5 of $6, wanted $3 $4"; return 1; }
}

# The buffered integrity job read back from the device at least the data
# it wrote (diskstats read sectors >= fio's written bytes / 512), so its
# verify checked the disk, not the page cache. (The disk's written sectors
# are more: ext2 metadata, synced with every O_SYNC write.)
reads_device()
{
	local d dev data
	d=$(jobdir "$1" "$2")
	dev=$(basename "$(cat "$d/device")")
	data=$(/usr/bin/python3 -c 'import json, sys; t = sys.stdin.read()
print(sum(j["write"]["io_bytes"] for j in json.loads(t[t.index("{"):])["jobs"]) // 512)' <"$d/fio.json")
	awk -v dev="$dev" -v data="$data" '
		FILENAME ~ /before/ && $3 == dev { r0 = $6; w0 = $10 }
		FILENAME ~ /after/ && $3 == dev { r1 = $6; w1 = $10 }
		END { printf "read %d sectors; fio wrote %d sectors of data (%d with metadata)\n", r1 - r0, data, w1 - w0
		      exit !(data > 0 && r1 - r0 >= data) }' \
		"$d/before/diskstats" "$d/after/diskstats"
}

# lowhog held LowFree within 10% of its target for the whole job, and
# HighFree above half of HighTotal.
lowmem_held()
{
	local d target high_total
	d=$(jobdir "$1" "$2")
	grep -q holding "$RUNS/$1/guest/lowhog.out" ||
		{ cat "$RUNS/$1/guest/lowhog.out"; return 1; }
	target=$(( $(sed -n 's/^BL_LOWFREE_TARGET_MB=//p' "$RUNS/$1/guest/plan") * 1024 ))
	high_total=$(awk '$1 == "HighTotal:" { print $2 }' "$d/before/meminfo")
	awk -F, -v t="$target" -v ht="$high_total" '
		NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
		$c["LowFree"] != "" { n++; if ($c["LowFree"] < t * 0.9 || $c["LowFree"] > t * 1.1) bad++
			if (lo == "" || $c["LowFree"] < lo) lo = $c["LowFree"]
			if (hi == "" || $c["LowFree"] > hi) hi = $c["LowFree"]
			if (hf == "" || $c["HighFree"] < hf) hf = $c["HighFree"] }
		END { printf "LowFree %d-%d kB (target %d), HighFree min %d of %d kB, %d samples\n", lo, hi, t, hf, ht, n
		      exit !(n > 0 && bad == 0 && hf > ht / 2) }' "$d/labmon.csv"
}

# The probed job timed bounced bios: __blk_queue_bounce calls in its trace.
probes_timed()
{
	local d
	d=$(jobdir "$1" "$2")
	[ -s "$d/probe-trace.txt.gz" ] || { echo "no probe trace"; return 1; }
	zcat "$d/probe-trace.txt.gz" | grep -c '__blk_queue_bounce' | awk '{ print $1 " calls"; exit !($1 > 0) }'
}

# occupancy NAME JOB KEY: a value of the job's exact bounce-page count
# (bounce-occupancy), or its one word (absent, missing).
occupancy()
{
	local f
	f=$(jobdir "$1" "$2")/bounce-occupancy
	[ -f "$f" ] || return 1
	awk -v k="$3" 'NF == 1 { print; exit } $1 == k { print $2; exit }' "$f"
}

# check_occupancy NAME JOB KEY OP VALUE [KEY OP VALUE ...]: each value of
# the count compares so (eq, gt, le: numbers; is: the file's one word,
# KEY "-").
check_occupancy()
{
	local name=$1 job=$2 key v
	shift 2
	[ $# -ge 3 ] || { echo "check_occupancy: no KEY OP VALUE"; return 1; }
	while [ $# -ge 3 ]; do
		key=$1
		v=$(occupancy "$name" "$job" "$key")
		case $2 in
		is) [ "$v" = "$3" ] ;;
		eq) [[ $v =~ ^[0-9]+$ ]] && [ "$v" -eq "$3" ] ;;
		gt) [[ $v =~ ^[0-9]+$ ]] && [ "$v" -gt "$3" ] ;;
		le) [[ $v =~ ^[0-9]+$ ]] && [ "$v" -le "$3" ] ;;
		*) false ;;
		esac || { echo "$key: '$v', wanted $2 $3"; cat "$(jobdir "$name" "$job")/bounce-occupancy"; return 1; }
		shift 3
	done
}

# The hog held and did not work: at most MAX ticks (USER_HZ) of its CPU
# during the job.
hog_idle()
{
	local t
	t=$(cat "$(jobdir "$1" "$2")/hog-ticks" 2>/dev/null) || { echo "no hog-ticks"; return 1; }
	set -- $t "$3"
	echo "hog ticks $1 -> $2"
	[ $(($2 - $1)) -le "$3" ]
}

# The dose job JOB started from is its level's in both zones, within
# lab.conf's dose_band_kb: LowFree and HighFree against the targets
# guest/init wrote beside them.
dose_in_band()
{
	local band
	band=$(bl_lab_default dose_band_kb)
	awk -v band="$band" '
		$1 == "target" { for (i = 2; i <= NF; i++) { split($i, kv, "="); t[kv[1]] = kv[2] } }
		$1 == "LowFree:" { low = $2 }
		$1 == "HighFree:" { high = $2 }
		END { dl = low - t["lowfree_kb"]; dh = high - t["highfree_kb"]
		      printf "LowFree %d kB (%+d), HighFree %d kB (%+d), band %d kB\n", low, dl, high, dh, band
		      exit !(t["highfree_kb"] > 0 && dl * dl <= band * band && dh * dh <= band * band) }' \
		"$(jobdir "$1" "$2")/dose"
}

# A pressure shape's job JOB ran, from its level's dose, and its bounce
# kernel took bounce pages in it.
shape_ok()
{
	job_ok "$1" "$2" && dose_in_band "$1" "$2" &&
		check_occupancy "$1" "$2" allocated gt 0
}

meminfo_bounce_zero()
{
	grep -Eq '^Bounce: +0 kB$' "$RUNS/$1/guest/proc-end/meminfo"
}

# row NAME VARIANT KNOB JOBS: boot it (two tests); ROW_OK says whether
# the row's own checks (rcheck) can run, ROW_JOBS are its JOBS.
row()
{
	local name=$1
	shift
	ROW_OK=0
	ROW_JOBS=$3
	if boot "$name" "$@"; then
		ROW_OK=1
		t_ok "$name: guest ran its plan"
		t_check "$name: clocksource is hpet" \
			grep -qx hpet "$RUNS/$name/guest/clocksource.txt"
		return
	fi
	t_fail "$name: guest ran its plan" "status: $(cat "$RUNS/$name/status" 2>/dev/null)" \
		"$(tr -d '\r' <"$RUNS/$name/serial.log" 2>/dev/null | grep -v '^Jobs:' | tail -n 8)"
	t_skip "$name: clocksource is hpet" "the boot failed"
}

# rcheck NAME COMMAND...: t_check within a row, skipped when its boot failed.
rcheck()
{
	if [ "$ROW_OK" = 1 ]; then
		t_check "$@"
	else
		t_skip "$1" "the boot failed"
	fi
}

# bounce_checks NAME BOUNCES: one check per write+verify job of the row:
# on a knob-on disk (usb-pio, ram-bounce) bounces > 0 when BOUNCES is yes,
# else 0 (the inverted check); 0 on every other disk.
bounce_checks()
{
	local n=$1 i=0 job disk
	for job in $ROW_JOBS; do
		i=$((i + 1))
		[ "${job#*:}" = "$WV" ] || continue
		disk=${job%%:*}
		case $disk:$2 in
		usb-pio:yes | ram-bounce:yes)
			rcheck "$n: bounces > 0 on $disk ($(bounces $n $i))" check_bounces $n $i gt 0 ;;
		usb-pio:* | ram-bounce:*)
			rcheck "$n: 0 bounces on $disk (inverted check)" check_bounces $n $i eq 0 ;;
		*)	rcheck "$n: 0 bounces on $disk" check_bounces $n $i eq 0 ;;
		esac
	done
}

# refused_checks NAME: a kernel without bounce code, its row's first jobs
# write+verify on usb-pio, virtio and ram-bounce: usb-storage refuses the
# usb disk, the other two work with no bounce tracepoint, and scsi_debug
# says its knob cannot bounce.
refused_checks()
{
	local n=$1
	rcheck "$n: no usb disk" disk_absent $n usb-pio
	rcheck "$n: usb-storage refuses the probe with lab.conf's message" \
		grep -q "$REFUSAL" "$RUNS/$n/guest/dmesg.txt"
	rcheck "$n: virtio write+verify works" job_ok $n 2
	rcheck "$n: no bounce tracepoint" check_bounces $n 2 eq absent
	rcheck "$n: ram-bounce write+verify works" job_ok $n 3
	rcheck "$n: scsi_debug says its knob cannot bounce" \
		grep -q "$SDEBUG_IGNORED" "$RUNS/$n/guest/dmesg.txt"
}

# boot_insn NAME VARIANT JOBS: boot on the insn clock (BOUNCELAB_INSNPROF
# of the caller: with or without the insnprof plugin).
boot_insn()
{
	local name=$1 variant=$2 rc=0
	"$BL_ROOT/bench/guest-run" -v "$variant" -o "$RUNS/$name" -j "$3" -d 64 \
		-t 600 -c insn >"$RUNS/$name.out" 2>&1 || rc=$?
	bl_log "guest-test: $name: $(cat "$RUNS/$name/status" 2>/dev/null || echo 'no status')"
	return $rc
}

# insn_py JOBDIR EXPR: EXPR of the job's insnprof window w (user, kernel),
# its guest time ns and fio's f (the job's JSON), bounces b; prints it.
insn_py()
{
	PYTHONPATH=$BL_ROOT/bench python3 - "$1" "$2" <<-'PY'
	import json, os, sys
	from analysis import insnprof as X
	d, expr = sys.argv[1], sys.argv[2]
	prof = X.job_profile(d)
	if prof is None:
	    sys.exit(f"{d}: no insnprof window")
	w, ns = prof
	text = open(os.path.join(d, "fio.json")).read()
	f = json.loads(text[text.index("{"):])["jobs"][0]
	b = open(os.path.join(d, "bounces")).read().strip()
	print(eval(expr))
	PY
}

idle_pct()
{
	insn_py "$1" '"%.3f" % ((ns - 8 * (w["user"] + w["kernel"])) / ns * 100)' 2>/dev/null
}

# window_exact JOBDIR PCT: instructions x 8 ns is the window's time, to
# PCT % (the rest is idle, never negative).
window_exact()
{
	local v
	v=$(insn_py "$1" '(ns - 8 * (w["user"] + w["kernel"])) / ns * 100') || return 1
	python3 -c "import sys; v = float(sys.argv[1]); sys.exit(not (-1e-6 <= v <= $2))" "$v" ||
		{ echo "idle $v % of the window, wanted 0 to $2"; return 1; }
}

bounces_agree()
{
	local v
	v=$(insn_py "$1" 'f"{X.bounces(w)} {b}"') || return 1
	[ "${v% *}" = "${v#* }" ] && [ "${v% *}" -gt 0 ] ||
		{ echo "plugin $v hist"; return 1; }
}

# few_instruments JOBDIR US: the lab's instruments (insnprof's part
# "instruments": tracing, the hist) cost at most US us per I/O in the
# job's window; a sampled hist costs 1.3 (guest/monitors/30-labmon.sh).
few_instruments()
{
	local v
	v=$(insn_py "$1" 'dict(X.job_rows(w, ns, f["read"]["total_ios"] + f["write"]["total_ios"], 8))["insn_part_instruments_us_per_io"]') ||
		return 1
	python3 -c "import sys; sys.exit(not float(sys.argv[1]) <= $2)" "$v" ||
		{ echo "instruments $v us per I/O, wanted at most $2"; return 1; }
}

# fio_iops JOBDIR: the job's read + write IOPS.
fio_iops()
{
	python3 - "$1/fio.json" <<-'PY'
	import json, sys
	t = open(sys.argv[1]).read()
	j = json.loads(t[t.index("{"):])["jobs"][0]
	print(j["read"]["iops"] + j["write"]["iops"])
	PY
}

# same_iops JOB1 JOB2 PCT: their IOPS within PCT %.
same_iops()
{
	local a b
	a=$(fio_iops "$1") && b=$(fio_iops "$2") || return 1
	python3 -c "import sys; a, b = map(float, sys.argv[1:]); sys.exit(not abs(a / b - 1) * 100 <= $3)" "$a" "$b" ||
		{ echo "IOPS $a with the plugin, $b without"; return 1; }
}

# reference_check JOBDIR TSV: one test: the job's insnprof metrics equal
# TSV's lines for its kernel's build_key, each within its tolerance; a
# SKIP naming the lines to add when the kernel build has none.
reference_check()
{
	local d=$1 tsv=$2 key out rc=0
	key=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["build_key"])' \
		"$(dirname "$(dirname "$(dirname "$d")")")/build-info.json" 2>/dev/null)
	if [ "$ROW_OK" != 1 ] || [ -z "$key" ]; then
		t_skip "insn: the counts are the reference's" "the boot failed"
		return
	fi
	out=$(PYTHONPATH=$BL_ROOT/bench python3 - "$d" "$tsv" "$key" <<-'PY'
	import json, sys
	from analysis import insnprof as X
	d, tsv, key = sys.argv[1:]
	ref = [l.split("\t") for l in open(tsv).read().splitlines()
	       if l and not l.startswith("#")]
	ref = {m: (float(v), float(tol)) for k, m, v, tol in ref if k == key}
	w, ns = X.job_profile(d)
	text = open(f"{d}/fio.json").read()
	f = json.loads(text[text.index("{"):])["jobs"][0]
	got = dict(X.job_rows(w, ns, f["read"]["total_ios"] + f["write"]["total_ios"], 8))
	names = ("insn_user_us_per_io", "insn_kernel_us_per_io", "insn_part_copy_us_per_io",
	         "insn_part_bounce_page_us_per_io", "insn_bounces_per_io")
	if not ref:
	    print("\n".join(f"{key}\t{m}\t{got[m]:.4f}\t-" for m in names))
	    sys.exit(3)
	bad = [f"{m} {got.get(m)} vs {v} (±{tol}%)" for m, (v, tol) in ref.items()
	       if m not in got or abs(got[m] - v) > abs(v) * tol / 100]
	print("; ".join(bad) or "; ".join(f"{m} {got[m]:.4f}" for m in ref))
	sys.exit(1 if bad else 0)
	PY
	) || rc=$?
	case $rc in
	0) t_ok "insn: the counts are the reference's ($out)" ;;
	3) t_skip "insn: the counts are the reference's" \
		"kernel build $key has no line in $tsv (a kernel input moved them); measured: $(echo "$out" | tr '\n' ' ')" ;;
	*) t_fail "insn: the counts are the reference's" "$out" ;;
	esac
}
