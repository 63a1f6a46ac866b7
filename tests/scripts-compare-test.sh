#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/compare's runner on a fake QEMU: the analysis's failure is the run's,
# two runs checking their job files at once, --until-ci's rounds, the
# exact-clock determinism round, the clocks each boot is given, and the
# pressure boots.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

# --- ./run.sh compare: the analysis's failure is the run's ------------------

# A run whose boots are all ok but whose analysis fails is no success:
# ./run.sh compare exits 4, saying the analysis failed and where the run is.
test_compare_analysis_fails()
{
	local sb out rc=0
	local small=(--variants pre --disks virtio --pressure none --reps 1 --jobs smoke-randread
		--probe-jobs none --integrity-jobs none --pressure-disks none --accel tcg)
	sb=$(run_sh_sandbox analysis-fails)
	stub "$sb/bench/analyze" 'echo "analyze: Traceback (most recent call last)" >&2; exit 1'
	out=$("$sb/run.sh" compare "${small[@]}" --run-id an-fail 2>&1) || rc=$?
	[ $rc = 4 ] && grep -q "analysis failed (exit 1); the raw results are intact: $sb/results/an-fail\$" <<<"$out" &&
		t_ok "run.sh compare: a failed analysis exits 4, naming the run" ||
		t_fail "run.sh compare: a failed analysis exits 4, naming the run" "exit $rc" "$(tail -n 5 <<<"$out")"

	rc=0
	stub "$sb/bench/analyze" 'exit 0'
	out=$("$sb/run.sh" compare "${small[@]}" --run-id an-ok 2>&1) || rc=$?
	[ $rc = 0 ] && grep -q "results: $sb/results/an-ok\$" <<<"$out" &&
		t_ok "run.sh compare: boots and analysis ok: exit 0" ||
		t_fail "run.sh compare: boots and analysis ok: exit 0" "exit $rc" "$(tail -n 5 <<<"$out")"
}

# --- bench/compare: the KVM probe's answer is kept --------------------------

# The first run with --accel auto probes KVM with a short boot (the fake
# QEMU reaches /init: kvm) and keeps the answer in the cache; the next
# one boots no probe and says where its answer came from.
test_accel_probe_kept()
{
	local sb rc=0 out
	local small=(--variants pre --disks virtio --pressure none --reps 1 --jobs smoke-randread
		--probe-jobs none --integrity-jobs none --pressure-disks none --accel auto)
	sb=$(run_sh_sandbox accel-kept)
	: >"$WORK/fake-kvm-kept"
	stub "$sb/bench/analyze" 'exit 0'
	out=$(BL_KVM_DEV=$WORK/fake-kvm-kept "$sb/run.sh" compare "${small[@]}" --run-id kvm-1 2>&1) || rc=$?
	out+=$(BL_KVM_DEV=$WORK/fake-kvm-kept "$sb/run.sh" compare "${small[@]}" --run-id kvm-2 2>&1) || rc=$?
	if [ $rc = 0 ] && [ -e "$sb/results/kvm-1/accel-probe.serial.log.started" ] &&
	   [ ! -e "$sb/results/kvm-2/accel-probe.serial.log.started" ] &&
	   grep -q '^probe not run: kvm, as probed before for ' "$sb/results/kvm-2/accel-probe.serial.log" &&
	   grep -q '"accel": "kvm"' "$sb/results/kvm-2/meta.json"; then
		t_ok "compare: the KVM probe's answer is kept, and the next run boots no probe"
	else
		t_fail "compare: the KVM probe's answer is kept, and the next run boots no probe" \
			"exit $rc" "$(tail -n 5 <<<"$out")" "$(cat "$sb/results/kvm-2/accel-probe.serial.log" 2>&1)"
	fi
}

# --- bench/compare: two runs checking their job files at once ---------------

# Two compares whose guest fio rejects their job files at the same moment
# (a fake fio that waits for the other's before it exits): each shows
# fio's complaint about its own job file, not the other run's.
test_parse_out_private()
{
	local sb a b rca=0 rcb=0 ok=1 x
	sb=$(sandbox parse-out)
	fake_cache
	stub "$BL_CACHE/guest/bin/fio" <<-EOF
	[ "\$1" = --help ] && exit 0
	echo "fio: cannot parse \$(basename "\${@: -1}")"
	touch "$WORK/fio-barrier.\$\$"
	for i in \$(seq 1 100); do
		[ \$(ls "$WORK"/fio-barrier.* | wc -l) -ge 2 ] && break
		sleep 0.1
	done
	exit 1
	EOF
	for x in a b; do
		mkdir -p "$WORK/jobs-$x"
		printf '[bad-%s]\nrw=read\n' $x >"$WORK/jobs-$x/bad-$x.fio"
		"$sb/bench/compare" --variants pre --disks virtio --pressure none --reps 1 \
			--jobs bad-$x --probe-jobs none --integrity-jobs none --pressure-disks none \
			--jobs-dir "$WORK/jobs-$x" --accel tcg --run-id parse-$x >"$WORK/parse-$x.out" 2>&1 &
		eval "pid_$x=\$!"
	done
	wait "$pid_a" || rca=$?
	wait "$pid_b" || rcb=$?
	for x in a b; do
		grep -qx "  fio: cannot parse bad-$x.fio" "$WORK/parse-$x.out" &&
			! grep -q "cannot parse bad-[^$x]" "$WORK/parse-$x.out" || ok=''
	done
	fake_cache
	[ -n "$ok" ] && [ $rca != 0 ] && [ $rcb != 0 ] &&
		t_ok "compare: two runs rejected by fio at once each show their own job file's error" ||
		t_fail "compare: two runs rejected by fio at once each show their own job file's error" \
			"exit $rca, $rcb" "a: $(cat "$WORK/parse-a.out")" "b: $(cat "$WORK/parse-b.out")"
}

# --- bench/compare --until-ci -------------------------------------------------

# A fake bench/analyze whose --ci-check says "too wide" once, then "narrow
# enough": compare adds exactly one round of boots, numbered on.
test_until_ci()
{
	local sb rc=0 run
	sb=$(sandbox until-ci)
	fake_cache
	fake_qemu "$sb"
	stub "$sb/bench/analyze" <<-'EOF'
	[ "$1" = --ci-check ] || exit 0
	f=$3/.checks
	echo x >>"$f"
	[ "$(wc -l <"$f")" -ge 2 ] && { echo "ci-check: narrow enough"; exit 0; }
	echo "ci-check: too wide: 0 of 4 primary rows"; exit 1
	EOF
	# (no pressure boots: the default matrix's would add a boot per variant)
	"$sb/bench/compare" --variants pre,post --disks virtio --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none --accel tcg \
		--pressure-disks none --run-id until --until-ci 3 >"$WORK/until.out" 2>&1 || rc=$?
	run=$sb/results/until
	[ $rc = 0 ] && [ "$(awk -F'\t' 'NR > 1 { print $1 ":" $2 ":" $5 }' "$run/boots.tsv" | tr '\n' ' ')" = \
		"1:pre:1 2:post:1 3:pre:2 4:post:2 " ] && grep -q '"reps": 2' "$run/meta.json" &&
		t_ok "compare --until-ci: one more interleaved round while the CIs are too wide" ||
		t_fail "compare --until-ci: one more interleaved round while the CIs are too wide" \
			"exit $rc" "$(cat "$run/boots.tsv" 2>/dev/null)" "$(tail -n 4 "$WORK/until.out")"
}

# --- clocks: host time, instruction time -------------------------------------

# --- bench/compare: exact-clock boots side by side, more reps if they spread --

# A fake bench/analyze whose --determinism-check names the ram entry once:
# its boots get reps 2 and 3, side by side, before the host-time boots.
test_determinism_round()
{
	local sb rc=0 run got
	sb=$(sandbox determinism)
	fake_cache
	fake_qemu "$sb"
	# the bounce summary is the real one: it names the failed boots
	cp "$sb/bench/analyze" "$sb/bench/analyze.real"
	stub "$sb/bench/analyze" <<-'EOF'
	[ "$1" = --bounce-summary ] && exec "$(dirname "$0")/analyze.real" "$@"
	[ "$1" = --early ] && { echo "early answer (stub): $(grep -c ok "$2/boots.tsv") boots in"; exit 0; }
	[ "$1" = --determinism-check ] || exit 0
	echo "determinism-check: 1 of 2 exact-clock cells within ±0.2%"
	echo "extend ram none"
	echo "  post ram lat-randread-4k-qd1 none read_iops: n=1, spread nan%"
	exit 1
	EOF
	"$sb/bench/compare" --variants pre,post --disks ram@insn,virtio --pressure none \
		--reps 3 --exact-reps 1 --jobs smoke-randread --probe-jobs none \
		--integrity-jobs none --accel tcg --pressure-disks none -j 2 \
		--run-id det >"$WORK/det.out" 2>&1 || rc=$?
	run=$sb/results/det
	got=$(awk -F'\t' 'NR > 1 { print $1 ":" $2 ":" $3 ":" $5 ":" $9 }' "$run/boots.tsv" | sort -n | tr '\n' ' ')
	[ $rc = 0 ] && [ "$got" = "1:pre:ram:1:local 2:post:ram:1:local 3:pre:virtio:1:local \
4:post:virtio:1:local 5:pre:virtio:2:local 6:post:virtio:2:local 7:pre:virtio:3:local \
8:post:virtio:3:local 9:pre:ram:2:local 10:post:ram:2:local 11:pre:ram:3:local 12:post:ram:3:local " ] &&
	   [ "$(awk -F'\t' 'NR > 1 { print $3 }' "$run/boots.tsv" | uniq | tr '\n' ' ')" = "ram virtio " ] &&
	   grep -q '^extend ram none' "$run/determinism-check.txt" &&
	   grep -q '"exact_reps": 1' "$run/meta.json" && grep -q '"side_by_side": 2' "$run/meta.json" &&
	   [ ! -e "$run/.stage" ] && [ -z "$(ls -d "$run"/boots/*/bundle 2>/dev/null)" ] &&
		t_ok "compare: a spread exact entry gets the rest of its reps, side by side, before the host-time boots" ||
		t_fail "compare: a spread exact entry gets the rest of its reps, side by side, before the host-time boots" \
			"exit $rc" "$got" "$(tail -n 4 "$WORK/det.out")"
	# the early answer once the exact boots without pressure are in, before
	# the host-time boots; the console kept in the run folder
	got=$(grep -n -e '^early answer' -e '] boot [0-9]* (' "$run/console.log" 2>/dev/null |
		sed 's/:.*boot \([0-9]*\) (.*/:boot \1/; s/:early answer.*/:early/' | cut -d: -f2 | tr '\n' ' ')
	# (boots 1 and 2 side by side: either may end first)
	[[ $got == "boot "[12]" boot "[12]" early boot "* ]] &&
	   [ "$(grep -o early <<<"$got" | wc -l)" = 1 ] &&
		t_ok "compare: the early answer once the exact boots without pressure are in, kept in console.log" ||
		t_fail "compare: the early answer once the exact boots without pressure are in, kept in console.log" \
			"order: $got"

	# a boot side by side that fails: the run goes on, the boot and its
	# serial log are kept, exit 3
	rc=0
	BL_COMPARE_FAIL_BOOT=2 "$sb/bench/compare" --variants pre,post,pre-fixed --disks ram@insn \
		--pressure none --reps 1 --jobs smoke-randread --probe-jobs none --integrity-jobs none \
		--accel tcg --pressure-disks none -j 2 --run-id det-fail >"$WORK/det-fail.out" 2>&1 || rc=$?
	run=$sb/results/det-fail
	got=$(awk -F'\t' 'NR > 1 { print $1 ":" $6 }' "$run/boots.tsv" | sort -n | tr '\n' ' ')
	[ $rc = 3 ] && [[ $got == "1:ok 2:failed: kernel panic: Kernel panic - not syncing: No working init found. 3:ok " ]] &&
	   [ -s "$run/boots/002-post-ram-none-r1/serial.log" ] &&
	   grep -q 'boot 2 post ram none rep 1: failed: kernel panic' "$WORK/det-fail.out" &&
		t_ok "compare: a side-by-side boot that panics is kept and marked failed, the others run, exit 3" ||
		t_fail "compare: a side-by-side boot that panics is kept and marked failed, the others run, exit 3" \
			"exit $rc" "$got" "$(tail -n 4 "$WORK/det-fail.out")"

	rc=0
	"$sb/bench/compare" --variants pre --disks ram@insn --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none --accel tcg \
		--pressure-disks none -j 0 --run-id det-bad >"$WORK/det-bad.out" 2>&1 || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/det-bad" ] && grep -q "^bouncelab: error: -j wants a positive number" "$WORK/det-bad.out" &&
		t_ok "compare -j 0 refused before the run (exit 2)" ||
		t_fail "compare -j 0 refused before the run (exit 2)" "exit $rc" "$(tail -n 3 "$WORK/det-bad.out")"
}

# meta_key RUN KEY: meta.json's KEY of RUN, as one line of JSON.
meta_key()
{
	/usr/bin/python3 -c 'import json, sys; print(json.dumps(json.load(open(sys.argv[1]))[sys.argv[2]]))' \
		"$1/meta.json" "$2" 2>&1
}

# boot_clock RUN BOOT_GLOB: what the fake QEMU of that boot was given.
boot_clock()
{
	cat "$1"/boots/$2/serial.log.clock 2>/dev/null
}

# An entry's @CLOCK reaches QEMU as lab.conf's vCPUs and icount shift, the
# other entries keep the default clock; meta.json records each disk's.
test_clocks()
{
	local sb rc=0 run out
	sb=$(sandbox clocks)
	fake_cache
	fake_qemu "$sb"
	local small=(--variants pre --pressure none --reps 1 --jobs smoke-randread
		--probe-jobs none --integrity-jobs none --accel tcg)

	"$sb/bench/compare" "${small[@]}" --disks ram-bounce+ram@insn,virtio --run-id clk \
		>"$WORK/clk.out" 2>&1 || rc=$?
	run=$sb/results/clk
	[ $rc = 0 ] && [ "$(boot_clock "$run" '001-*')" = "cpus=1 icount=3" ] &&
	   [ "$(boot_clock "$run" '002-*')" = "cpus=2 icount=" ] &&
	   [ "$(cat "$run"/boots/001-*/clock)" = insn ] &&
	   [ "$(meta_key "$run" disk_clocks)" = '{"ram-bounce": "insn", "ram": "insn", "virtio": "host"}' ] &&
		t_ok "compare: ram-bounce+ram@insn boots with 1 vCPU and icount 3, virtio on host time" ||
		t_fail "compare: ram-bounce+ram@insn boots with 1 vCPU and icount 3, virtio on host time" \
			"exit $rc" "$(cat "$run"/boots/*/serial.log.clock 2>/dev/null)" \
			"$(meta_key "$run" disk_clocks)" "$(tail -n 3 "$WORK/clk.out")"

	rc=0
	"$sb/bench/compare" "${small[@]}" --disks virtio --clock insn --run-id clk-all \
		>"$WORK/clk-all.out" 2>&1 || rc=$?
	[ $rc = 0 ] && [ "$(boot_clock "$sb/results/clk-all" '001-*')" = "cpus=1 icount=3" ] &&
	   grep -q '"clock": "insn"' "$sb/results/clk-all/meta.json" &&
		t_ok "compare --clock insn: the entries without a clock take it" ||
		t_fail "compare --clock insn: the entries without a clock take it" "exit $rc" \
			"$(tail -n 3 "$WORK/clk-all.out")"

	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --disks virtio@sundial --run-id clk-bad 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/clk-bad" ] && grep -q "unknown clock 'sundial'" <<<"$out" &&
		t_ok "compare: an unknown clock is refused before the run (exit 2)" ||
		t_fail "compare: an unknown clock is refused before the run (exit 2)" "exit $rc" "$out"

	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --disks ram-bounce+ram@insn,ram --run-id clk-mix 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/clk-mix" ] &&
	   grep -q "disk 'ram' is in entries with different clocks (insn, host)" <<<"$out" &&
		t_ok "compare: one disk under two clocks is refused (exit 2)" ||
		t_fail "compare: one disk under two clocks is refused (exit 2)" "exit $rc" "$out"
}

# --- bench/compare: pressure boots -------------------------------------------

# The pressure_disks entries are booted again under each pressure level,
# running only the pressure jobs; a level that is also a pressure of
# every boot, pressure disks without levels or jobs, and an unknown level
# are refused before the run.
test_pressure_boots()
{
	local sb out rc=0 run plan known
	sb=$(sandbox pressure)
	# what the refusals name: every pressure of lab.conf, in its order
	known=$(. "$BL_ROOT/lib/lab.sh" && bl_lab_names pressure | tr '\n' ' ')
	fake_cache
	fake_qemu "$sb"
	local small=(--variants pre,post --disks virtio --pressure none --reps 2
		--jobs smoke-randread --probe-jobs none --integrity-jobs none
		--pressure-disks ram-bounce+ram@insn --pressure-levels full24,full64
		--pressure-jobs pressure-writeback)

	# 2 reps x (2 virtio boots + 2 variants x 2 levels): 12, in rounds
	out=$("$sb/bench/compare" --dry-run "${small[@]}" 2>&1) || rc=$?
	if [ $rc = 0 ] && grep -q '; 12 boots;' <<<"$out" &&
	   [ "$(grep -cE '^  [0-9]+ ' <<<"$out")" = 12 ] &&
	   [ "$(grep -E '^  [0-9]+ ' <<<"$out" | awk '{ printf "%s:%s:%s:%s:%s ", $1, $2, $3, $4, $5 }')" = \
	     "$(printf '%s ' 1:pre:virtio:none:1 2:post:virtio:none:1 \
		3:pre:ram-bounce+ram:full24:1 4:post:ram-bounce+ram:full24:1 \
		5:pre:ram-bounce+ram:full64:1 6:post:ram-bounce+ram:full64:1 \
		7:pre:virtio:none:2 8:post:virtio:none:2 \
		9:pre:ram-bounce+ram:full24:2 10:post:ram-bounce+ram:full24:2 \
		11:pre:ram-bounce+ram:full64:2 12:post:ram-bounce+ram:full64:2)" ] &&
	   [ -z "$(ls "$sb/results")" ]; then
		t_ok "compare --dry-run --pressure-disks/-levels/-jobs: 12 boots, full24 and full64 on ram-bounce+ram"
	else
		t_fail "compare --dry-run --pressure-disks/-levels/-jobs: 12 boots, full24 and full64 on ram-bounce+ram" \
			"exit $rc" "$out" "results: $(ls "$sb/results")"
	fi

	# a run (fake QEMU): a pressure boot runs only the pressure jobs,
	# under its level's kind and size; meta.json keeps the three keys
	rc=0
	"$sb/bench/compare" "${small[@]}" --variants pre --reps 1 --pressure-levels full24 \
		--accel tcg --run-id press >"$WORK/press.out" 2>&1 || rc=$?
	run=$sb/results/press
	plan=$(ls "$run"/boots/002-pre-ram-bounce+ram-full24-r1/plan/plan 2>/dev/null)
	if [ $rc = 0 ] && [ -n "$plan" ] &&
	   grep -qx 'BL_JOBS="ram-bounce:pressure-writeback.fio ram:pressure-writeback.fio"' "$plan" &&
	   grep -qx BL_PRESSURE=full "$plan" && grep -qx BL_LOWFREE_TARGET_MB=24 "$plan" &&
	   grep -qx 'BL_JOBS="virtio:smoke-randread.fio"' "$run"/boots/001-pre-virtio-none-r1/plan/plan &&
	   grep -qx BL_PRESSURE=none "$run"/boots/001-pre-virtio-none-r1/plan/plan &&
	   grep -q '"pressure_disks": "ram-bounce+ram@insn"' "$run/meta.json" &&
	   grep -q '"pressure_levels": "full24"' "$run/meta.json" &&
	   grep -q '"pressure_jobs": "pressure-writeback"' "$run/meta.json"; then
		t_ok "compare: a full24 boot runs only pressure-writeback, BL_PRESSURE=full, LowFree 24; meta.json has the keys"
	else
		t_fail "compare: a full24 boot runs only pressure-writeback, BL_PRESSURE=full, LowFree 24; meta.json has the keys" \
			"exit $rc" "$(cat "$plan" 2>/dev/null)" "$(grep pressure "$run/meta.json" 2>/dev/null)" \
			"$(tail -n 3 "$WORK/press.out")"
	fi

	# refused before the run: nothing booted, no run folder
	refused_before_run "a level that is also in --pressure" press-twice \
		"pressure 'full24' is both a pressure of every boot and a pressure level; name it once" \
		--pressure none,full24
	refused_before_run "pressure disks without pressure jobs" press-nojobs \
		"pressure disks 'ram-bounce+ram@insn' need pressure levels and pressure jobs (levels 'full24 full64', jobs '')" \
		--pressure-jobs none
	refused_before_run "pressure disks without pressure levels" press-nolevels \
		"pressure disks 'ram-bounce+ram@insn' need pressure levels and pressure jobs (levels '', jobs 'pressure-writeback')" \
		--pressure-levels none

	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --pressure-levels full24,full99 --accel tcg \
		--run-id press-unknown 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/press-unknown" ] &&
	   grep -q "unknown pressure 'full99' (known: $known)" <<<"$out" &&
		t_ok "compare: an unknown pressure level is refused (exit 2), naming the known ones" ||
		t_fail "compare: an unknown pressure level is refused (exit 2), naming the known ones" "exit $rc" "$out"

	# guest-run dies on the pressure before it looks for a kernel: an
	# empty cache, and no OUTDIR made
	rc=0
	out=$(BOUNCELAB_CACHE=$WORK/no-cache "$sb/bench/guest-run" -v pre -o "$WORK/gr-press" \
		-j "virtio:smoke-randread.fio" -p full99 2>&1) || rc=$?
	[ $rc != 0 ] && [ ! -e "$WORK/gr-press" ] &&
	   grep -q "unknown pressure 'full99' (known: $known)" <<<"$out" &&
	   ! grep -q 'no kernel' <<<"$out" &&
		t_ok "guest-run -p full99: refused before any kernel or boot, naming the known pressures" ||
		t_fail "guest-run -p full99: refused before any kernel or boot, naming the known pressures" \
			"exit $rc" "$out"
}

t_plan 20
test_compare_analysis_fails
test_accel_probe_kept
test_parse_out_private
test_clocks
test_pressure_boots
test_until_ci
test_determinism_round
t_summary
