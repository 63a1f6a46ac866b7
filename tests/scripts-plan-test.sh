#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What a run will boot, decided before any boot: compare's and run.sh's
# arguments (a bad one exits 2), the guest's plan variables, an unknown job,
# ./run.sh compare --dry-run, the one description of the lab (lab.conf) and
# kernels/variants with the stacks it names.
# Sandboxes and stubs: tests/scripts-lib.sh.
set -uo pipefail

. "$(dirname "$0")/scripts-lib.sh"

# --- the guest's plan variables from the host --------------------------------

# plan_holds NAME RC PLAN OUT WAIT INTERVAL TIMEOUT: a run that exited RC
# (output in OUT) wrote the guest's PLAN with those three values.
plan_holds()
{
	local name=$1 rc=$2 plan=$3 out=$4
	[ $rc = 0 ] && [ -n "$plan" ] && grep -qx "BL_DISK_WAIT=$5" "$plan" &&
	   grep -qx "BL_MON_INTERVAL_MS=$6" "$plan" && grep -qx "BL_JOB_TIMEOUT=$7" "$plan" &&
		t_ok "$name" ||
		t_fail "$name" "exit $rc" "$(cat "$plan" 2>/dev/null)" "$(tail -n 3 "$out")"
}

test_plan_options()
{
	local sb rc=0
	sb=$(sandbox plan-options)
	fake_cache
	fake_qemu "$sb"
	"$sb/bench/guest-run" -v pre -j "virtio:smoke-randread.fio" -d 1 -o "$WORK/plan-gr" \
		-W 7 -I 50 -T 90 >"$WORK/plan-gr.out" 2>&1 || rc=$?
	plan_holds "guest-run -W -I -T: BL_DISK_WAIT, BL_MON_INTERVAL_MS, BL_JOB_TIMEOUT in the plan" \
		$rc "$WORK/plan-gr/plan/plan" "$WORK/plan-gr.out" 7 50 90

	rc=0
	"$sb/bench/compare" --variants pre --disks virtio --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none \
		--accel tcg --run-id plan --disk-wait 8 \
		--mon-interval-ms 60 --job-timeout 91 >"$WORK/plan-cmp.out" 2>&1 || rc=$?
	plan_holds "compare --disk-wait --mon-interval-ms --job-timeout reach the boots' plans" \
		$rc "$(ls "$sb"/results/plan/boots/*/plan/plan 2>/dev/null | head -n 1)" \
		"$WORK/plan-cmp.out" 8 60 91

	rc=0
	"$sb/bench/compare" --variants pre --disks virtio --pressure none --reps 1 \
		--jobs smoke-randread --probe-jobs none --integrity-jobs none \
		--accel tcg --run-id plan-bad --job-timeout 5m \
		>"$WORK/plan-bad.out" 2>&1 || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/results/plan-bad" ] &&
	   grep -q "want a positive number, not '5m'" "$WORK/plan-bad.out" &&
		t_ok "compare --job-timeout 5m refused before the run (exit 2)" ||
		t_fail "compare --job-timeout 5m refused before the run (exit 2)" "exit $rc" \
			"$(tail -n 3 "$WORK/plan-bad.out")"
}

# --- ./run.sh compare --dry-run ---------------------------------------------

# old_run SANDBOX ID AGE BOOTS_TSV_ROWS...: a finished run in results/.
old_run()
{
	local run=$1/results/$2 row
	mkdir -p "$run"
	printf 'boot\tvariant\tdisk\tpressure\trep\tstatus\tseconds\tdir\n' >"$run/boots.tsv"
	for row in "${@:4}"; do printf '%s\n' "$row" | tr ' ' '\t' >>"$run/boots.tsv"; done
	printf '{\n  "jobs": "a b c d e f",\n  "reps": 3\n}\n' >"$run/meta.json"
	touch -d "$3" "$run/boots.tsv"
}

test_dry_run()
{
	local sb out rc=0
	sb=$(sandbox dry-run)
	rm -rf "$WORK/cache"	# (BL_CACHE is $WORK/cache here: no fakes)
	stub "$sb/kernels/build" 'touch "$(dirname "$0")/BUILT"; exit 1'
	stub "$sb/bench/guest-run" 'touch "$(dirname "$0")/BOOTED"; exit 1'
	# and never apt: a dry run that reached the deps would install them
	echo 'bl_deps_install() { touch "$BL_ROOT/kernels/BUILT"; return 1; }' >>"$sb/lib/deps.sh"

	# default matrix, first round: ram-bounce+ram under insn in its 2
	# exact_reps (the rest of its reps come on top only when it spreads),
	# usb-pio (QEMU completes its I/O on host time) in its 4, and
	# ram-bounce under full24 (chaotic) in all 5: 33 boots for 3
	# variants, 2 side by side
	out=$("$sb/run.sh" compare --dry-run -j 2 2>&1) || rc=$?
	if [ $rc = 0 ] && grep -q 'no earlier boot of it: a guess' <<<"$out" &&
	   grep -q 'total: about 12m56s (2 side by side' <<<"$out" &&
	   [ "$(grep -cE '^  [0-9]+ ' <<<"$out")" = 33 ] &&
	   grep -Eq '^  1 +pre +ram-bounce\+ram +none +1 +insn$' <<<"$out" &&
	   grep -Eq '^  6 +post +usb-pio +none +1 +insn$' <<<"$out" &&
	   grep -Eq '^  7 +pre +ram-bounce +full24 +1 +insn$' <<<"$out" &&
	   grep -Eq '^  15 +post +usb-pio +none +2 +insn$' <<<"$out" &&
	   grep -Eq '^  18 +post +ram-bounce +full24 +2 +insn$' <<<"$out" &&
	   grep -Eq '^  25 +pre +usb-pio +none +4 +insn$' <<<"$out" &&
	   grep -Eq '^  30 +post +ram-bounce +full24 +4 +insn$' <<<"$out" &&
	   grep -Eq '^  33 +post +ram-bounce +full24 +5 +insn$' <<<"$out"; then
		t_ok "compare --dry-run, no earlier run: 33 boots in order, the stated default guess"
	else
		t_fail "compare --dry-run, no earlier run: 33 boots in order, the stated default guess" \
			"exit $rc" "$out"
	fi

	# the newest run with the boot's disk and pressure counts, its ok
	# boots only; a disk no run has gets the newest run's mean
	old_run "$sb" 20250101-000000 '2025-01-01' '1 pre usb-pio none 1 ok 500 boots/x'
	old_run "$sb" 20250202-000000 '2025-02-02' '1 pre usb-pio none 1 ok 60 boots/x' \
		'2 pre virtio none 1 ok 30 boots/x' '3 pre virtio none 1 ok 50 boots/x' \
		'4 post virtio none 1 failed:_bound 900 boots/x'
	old_run "$sb" 20250303-000000 '2025-03-03' '1 pre usb-pio none 1 failed:_panic 9 boots/x'
	rc=0
	out=$("$sb/run.sh" compare --dry-run -j 2 2>&1) || rc=$?
	if [ $rc = 0 ] &&
	   grep -Eq '^  usb-pio +none +12 boot\(s\) x +60s, side by side$' <<<"$out" &&
	   grep -Eq '^  ram-bounce +full24 +15 boot\(s\) x +47s, side by side \(no earlier' <<<"$out" &&
	   grep -q 'total: about 14m10s' <<<"$out"; then
		t_ok "compare --dry-run: estimate from the newest runs' ok boots, per disk and pressure (14m10s)"
	else
		t_fail "compare --dry-run: estimate from the newest runs' ok boots, per disk and pressure" "exit $rc" "$out"
	fi

	[ ! -e "$sb/kernels/BUILT" ] && [ ! -e "$sb/bench/BOOTED" ] &&
	   [ "$(ls "$sb/results")" = "$(printf '%s\n' 20250101-000000 20250202-000000 20250303-000000)" ] &&
		t_ok "compare --dry-run builds, boots and writes nothing" ||
		t_fail "compare --dry-run builds, boots and writes nothing" "$(ls "$sb/results" "$sb/kernels" "$sb/bench")"
}

# --- bench/compare: an unknown job is named as such ---------------------------

# A job name with no job file is refused as an unknown job whichever list
# names it, in a dry run too, before any other check of the lists (a probe
# job not among the jobs, say) can blame something else.
test_unknown_jobs()
{
	local sb out rc opt dry
	local small=(--variants pre --disks virtio --pressure none --reps 1
		--jobs smoke-randread --probe-jobs none --integrity-jobs none
		--pressure-disks none)
	sb=$(sandbox unknown-jobs)
	fake_cache
	fake_qemu "$sb"	# (a job name let through must boot nothing)
	for dry in '' --dry-run; do
		for opt in --jobs --probe-jobs --integrity-jobs --pressure-jobs; do
			rc=0
			# (pressure jobs count only with pressure disks)
			[ $opt != --pressure-jobs ] || opt="--pressure-disks ram --pressure-levels full24 $opt"
			out=$("$sb/bench/compare" "${small[@]}" $opt nosuchjob $dry --accel tcg \
				--run-id "uj${opt##* }$dry" 2>&1) || rc=$?
			[ $rc = 2 ] && [ -z "$(ls "$sb/results")" ] &&
			   grep -q "unknown job 'nosuchjob': job file not found: $sb/bench/jobs/nosuchjob.fio" <<<"$out" &&
			   ! grep -q 'probe job' <<<"$out" &&
				t_ok "compare ${opt##* } nosuchjob${dry:+ $dry}: refused as an unknown job (exit 2)" ||
				t_fail "compare ${opt##* } nosuchjob${dry:+ $dry}: refused as an unknown job (exit 2)" "exit $rc" "$out"
		done
	done
}

# --- the job files, parsed by fio before anything is built -------------------

# fake_fio_parser: the guest fio of the fake cache, a stand-in for the
# static i386 fio that ./run.sh guest builds (this suite builds nothing).
# What is tested is the planner's side: every job file goes to the guest's
# fio with --parse-only and the guest's variables, and fio's verdict stops
# the run; not fio's parser, which compare-test.sh has reject a job for
# real. Like fio 3.33 (parse.c) it rejects rw=nonsense with "fio: failed
# parsing rw=nonsense" and exit 1; it logs each call to $WORK/fio-calls.
fake_fio_parser()
{
	stub "$BL_CACHE/guest/bin/fio" <<-EOF
	[ "\$1" = --help ] && exit 0
	echo "\$* BL_DISK=\${BL_DISK:-unset} BL_FS_DIR=\${BL_FS_DIR:-unset}" >>"$WORK/fio-calls"
	[ "\$1" = --parse-only ] || { echo "fio: not a parse: \$*"; exit 3; }
	if grep -qx 'rw=nonsense' "\${@: -1}"; then
		echo 'fio: failed parsing rw=nonsense' >&2
		exit 1
	fi
	EOF
}

# A job file fio rejects exits 2 naming the file and fio's message, in a
# dry run and before ./run.sh compare builds anything; with no guest fio
# built yet a dry run says it did not check the jobs.
test_jobs_parsed()
{
	local sb out rc name jobs=$WORK/nonsense-jobs
	local small=(--variants pre --disks virtio --pressure none --reps 1
		--probe-jobs none --integrity-jobs none --pressure-disks none
		--jobs-dir "$jobs")
	sb=$(run_sh_sandbox jobs-parsed)
	fake_fio_parser
	mkdir -p "$jobs"
	cp "$sb/bench/jobs/smoke-randread.fio" "$jobs/"
	printf '[bad]\nfilename=${BL_DISK}\nrw=nonsense\n' >"$jobs/bad.fio"

	name="compare --dry-run: a job file fio rejects exits 2, naming the file and fio's message"
	rc=0
	out=$("$sb/run.sh" compare "${small[@]}" --jobs smoke-randread,bad --dry-run 2>&1) || rc=$?
	[ $rc = 2 ] && grep -qx "bouncelab: error: fio rejects job file $jobs/bad.fio (see above)" <<<"$out" &&
	   grep -qx '  fio: failed parsing rw=nonsense' <<<"$out" && ! grep -q 'total: about' <<<"$out" &&
		t_ok "$name" || t_fail "$name" "exit $rc" "$out"

	name="compare --dry-run: each job file parsed by the guest fio with the guest's variables"
	rc=0 && rm -f "$WORK/fio-calls"
	out=$("$sb/run.sh" compare "${small[@]}" --jobs smoke-randread --dry-run 2>&1) || rc=$?
	[ $rc = 0 ] && grep -q 'total: about' <<<"$out" &&
	   grep -qx -- "--parse-only --warnings-fatal $jobs/smoke-randread.fio BL_DISK=/dev/null BL_FS_DIR=/tmp" \
		"$WORK/fio-calls" &&
		t_ok "$name" || t_fail "$name" "exit $rc" "$out" "calls: $(cat "$WORK/fio-calls" 2>&1)"

	name="run.sh compare: a job file fio rejects exits 2 before anything is built"
	rc=0
	out=$("$sb/run.sh" compare "${small[@]}" --jobs bad --accel tcg --run-id jp-run 2>&1) || rc=$?
	[ $rc = 2 ] && [ ! -e "$sb/kernels/BUILT" ] && [ ! -e "$sb/results/jp-run" ] &&
	   grep -q "fio rejects job file $jobs/bad.fio" <<<"$out" &&
		t_ok "$name" || t_fail "$name" "exit $rc" "built: $(ls "$sb/kernels/BUILT" 2>&1)" "$out"

	name="compare --dry-run with no guest fio built: the plan, and a word that the jobs were not checked"
	rc=0
	out=$(BOUNCELAB_CACHE=$WORK/no-fio-cache "$sb/run.sh" compare "${small[@]}" --jobs bad --dry-run 2>&1) ||
		rc=$?
	[ $rc = 0 ] && grep -q 'total: about' <<<"$out" &&
	   grep -q "job files not checked by fio: no guest fio at $WORK/no-fio-cache/guest/bin/fio yet" <<<"$out" &&
		t_ok "$name" || t_fail "$name" "exit $rc" "$out"
	fake_cache
}

# --- bench/compare, ./run.sh compare: a bad argument exits 2 -------------------

# Every refused argument exits 2 with its message, before any run folder
# (and, through ./run.sh compare, before anything is built); what is not
# built or missing on the host stays exit 1.
test_bad_arguments()
{
	local sb out rc what
	local small=(--variants pre --disks virtio --pressure none --reps 2
		--jobs smoke-randread --probe-jobs none --integrity-jobs none
		--pressure-disks none)
	sb=$(run_sh_sandbox bad-args)
	stub "$BL_CACHE/guest/bin/fio" '[ "$1" = --help ] || [[ ${@: -1} != */bad.fio ]]'
	printf '[bad]\nrw=sideways\n' >"$WORK/bad.fio"
	cp "$sb/bench/jobs/smoke-randread.fio" "$WORK/"
	mkdir -p "$sb/results/taken"

	refused_before_run "an unknown variant" ba-variant "unknown variant 'nosuch'" --variants pre,nosuch
	refused_before_run "--reps 0" ba-reps "--reps wants a positive number, not '0'" --reps 0
	refused_before_run "--exact-reps 0" ba-exact "--exact-reps wants a positive number, not '0'" --exact-reps 0
	refused_before_run "--integrity-reps x" ba-ireps "--integrity-reps wants a positive number, not 'x'" --integrity-reps x
	refused_before_run "--integrity-reps 1 with no other jobs" ba-ireps-only "with no other jobs the boots of reps 2-2 would run nothing" \
		--jobs none --integrity-jobs smoke-randread --integrity-reps 1
	refused_before_run "-j 0" ba-j "-j wants a positive number of boots side by side, not '0'" -j 0
	refused_before_run "an unreadable --sshloginfile" ba-ssh "--sshloginfile: cannot read '$WORK/no-such-file'" \
		--sshloginfile "$WORK/no-such-file"
	refused_before_run "an unknown matrix set" ba-set "no matrix set 'nosuch' in bench/matrix" --set nosuch
	refused_before_run "--accel fast" ba-accel "--accel is auto, tcg or kvm, not 'fast'" --accel fast
	refused_before_run "--timeout 0" ba-timeout "--timeout wants seconds, not '0'" --timeout 0
	refused_before_run "--until-ci x" ba-until "--until-ci wants a percentage, not 'x'" --until-ci x
	refused_before_run "--budget-min 0" ba-budget "--budget-min wants minutes, not '0'" --budget-min 0
	refused_before_run "--lowfree-mb 0" ba-lowfree "--lowfree-mb wants MiB, not '0'" --lowfree-mb 0
	refused_before_run "a disk entry's reps of 0" ba-disk0 "disk entry 'virtio:0': the reps after ':' must be a positive number" --disks virtio:0
	refused_before_run "an empty matrix" ba-empty "empty matrix" --jobs none --integrity-reps 2
	refused_before_run "a probe job not among the jobs" ba-probe "probe job 'lat-randread-4k-qd1' is not among the jobs" \
		--probe-jobs lat-randread-4k-qd1
	refused_before_run "a job file fio rejects" ba-fio "fio rejects job file $WORK/bad.fio" --jobs-dir "$WORK" --jobs bad
	refused_before_run "an unknown option" ba-option "unknown option '--bogus'" --bogus
	refused_before_run "a run id already taken" ba-taken "results/taken exists; a run never overwrites another" \
		--run-id taken

	# an option without its value, at the end of the line
	rc=0
	out=$("$sb/bench/compare" "${small[@]}" --accel tcg --reps 2>&1) || rc=$?
	[ $rc = 2 ] && grep -qx "bouncelab: error: --reps wants a value" <<<"$out" &&
		t_ok "compare: an option without its value is refused (exit 2)" ||
		t_fail "compare: an option without its value is refused (exit 2)" "exit $rc" "$out"

	# not built: no guest fio in an empty cache
	rc=0
	out=$(BOUNCELAB_CACHE=$WORK/empty-cache "$sb/bench/compare" "${small[@]}" --accel tcg \
		--run-id ba-unbuilt 2>&1) || rc=$?
	[ $rc = 1 ] && [ ! -e "$sb/results/ba-unbuilt" ] && grep -q "no guest fio at" <<<"$out" &&
		t_ok "compare: nothing built is refused with exit 1, not 2" ||
		t_fail "compare: nothing built is refused with exit 1, not 2" "exit $rc" "$out"

	# ./run.sh compare passes the 2 on, having built nothing
	for what in "--variants pre,nosuch|unknown variant 'nosuch'" \
		"--reps 0|--reps wants a positive number, not '0'" \
		"--set nosuch|no matrix set 'nosuch'" \
		"--set versions --quick|--quick and --set name two matrix sets (versions, quick)"; do
		rc=0
		out=$("$sb/run.sh" compare "${small[@]}" ${what%%|*} --accel tcg --run-id ba-run 2>&1) || rc=$?
		[ $rc = 2 ] && [ ! -e "$sb/kernels/BUILT" ] && [ ! -e "$sb/results/ba-run" ] &&
		   grep -qF -- "${what#*|}" <<<"$out" &&
			t_ok "run.sh compare ${what%%|*}: exit 2 before building anything" ||
			t_fail "run.sh compare ${what%%|*}: exit 2 before building anything" "exit $rc" \
				"built: $(ls "$sb/kernels/BUILT" 2>&1)" "$out"
	done
	fake_cache
}

# --- one description of the lab ------------------------------------------------

# Adding a disk kind must not need code changed: no code line (comments
# and docstrings aside) outside bench/lab.conf, bench/matrix and the job
# files names a serial, a disk or a kernel variant (tests/lab/hard-coded.py).
test_lab_description()
{
	local hits rc=0
	hits=$(/usr/bin/python3 "$BL_ROOT/tests/lab/hard-coded.py" "$BL_ROOT") || rc=$?
	[ $rc = 0 ] &&
		t_ok "no serial, disk or variant name in the code outside bench/lab.conf" ||
		t_fail "no serial, disk or variant name in the code outside bench/lab.conf" "$hits"
	printf 'serial=BLUSB0001\n' >"$WORK/hc-probe.sh"
	rc=0
	hits=$(sb=$(sandbox hard-coded) && cp "$WORK/hc-probe.sh" "$sb/lib/" &&
		/usr/bin/python3 "$BL_ROOT/tests/lab/hard-coded.py" "$sb") || rc=$?
	[ $rc = 1 ] && grep -q 'lib/hc-probe.sh:1' <<<"$hits" &&
		t_ok "the check finds a serial written into lib/" ||
		t_fail "the check finds a serial written into lib/" "exit $rc" "$hits"
}

# --- kernels/variants and the stacks it names ----------------------------

# variants CODE: CODE run with lib/variants.sh sourced, in a subshell; its
# output and errors on stdout.
variants()
{
	( . "$BL_ROOT/lib/variants.sh"; eval "$1" ) 2>&1
}

# Every variant of every base finds its stacks, each a folder
# kernels/patches/BASE/STACK of the variant's own base, and the patch files
# kernels/build would apply (what kernels/build reads, without a build).
check_variant_stacks()
{
	local v b s p fail=0
	for v in $(variants 'bl_variants --all'); do
		b=$(variants "bl_variant_base $v")
		for s in $(variants "bl_variant_stacks $v"); do
			[ "${s%%/*}" = "$b" ] && [ -d "$BL_ROOT/kernels/patches/$s" ] ||
				{ echo "$v (base $b): stack $s is not a folder kernels/patches/$b/STACK"; fail=1; }
		done
		p=$(variants "bl_variant_patches $v") ||
			{ echo "$v: $(tail -n 1 <<<"$p")"; fail=1; continue; }
		for s in $p; do
			[ -f "$s" ] && [[ $s == *.patch ]] ||
				{ echo "$v: $s is not a patch file"; fail=1; }
		done
		[ -n "$p" ] || { echo "$v: no patch"; fail=1; }
	done
	return $fail
}

test_variants()
{
	local out def short long

	t_check "variants: every variant's stacks are its base's folders, with patches" \
		check_variant_stacks

	# the default base's variants: named DEFAULT/VARIANT in the table,
	# listed and cached by the short name, both names the same variant
	def=$(bases bl_default_base)
	short=$(variants 'bl_variants' | paste -sd ' ')
	long=$(awk -v d="$def/" 'index($1, d) == 1 { print substr($1, length(d) + 1) }' \
		"$BL_ROOT/kernels/variants" | paste -sd ' ')
	out=$(variants 'for v in $(bl_variants); do
		[ "$(bl_variant_stacks "$v")" = "$(bl_variant_stacks '"$def"'/"$v")" ] ||
			echo "$v: stacks differ from '"$def"'/$v"
		[ "$(bl_variant_base "$v")" = '"$def"' ] || echo "$v: base $(bl_variant_base "$v")"
	done')
	[ -n "$short" ] && [ "$short" = "$long" ] && [ -z "$out" ] &&
		t_ok "variants: the default base's $long, written $def/VARIANT, are called VARIANT too" ||
		t_fail "variants: the default base's variants, written $def/VARIANT, are called VARIANT too" \
			"bl_variants: '$short'" "kernels/variants: '$long'" "$out"

	# a line without "BASE/" is a variant of the default base as well
	printf '%s/x\ta\ny\tb\n9.99/z\tc\n' "$def" >"$WORK/variants"
	out=$(variants 'export BOUNCELAB_VARIANTS_FILE='"$WORK"'/variants
		BL_VARIANTS_FILE=$BOUNCELAB_VARIANTS_FILE
		echo $(bl_variants) / $(bl_variants --all) / $(bl_variant_stacks '"$def"'/y)')
	[ "$out" = "x y / x y 9.99/z / b" ] &&
		t_ok "variants: DEFAULT/x and y are both the default base's, 9.99/z is not" ||
		t_fail "variants: DEFAULT/x and y are both the default base's, 9.99/z is not" "$out"
}

t_plan 48
test_plan_options
test_dry_run
test_unknown_jobs
test_jobs_parsed
test_bad_arguments
test_lab_description
test_variants
t_summary
