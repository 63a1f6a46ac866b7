# SPDX-License-Identifier: GPL-2.0
# Running the planned boots of a bench/compare run: one at a time (boots
# on host time, alone on the machine), or side by side with GNU parallel
# (boots on an exact clock, whose numbers do not depend on the host's
# load), here or on the hosts of an sshloginfile. Source it after
# lib/common.sh; bench/compare sets the variables it reads (RUN, NBOOTS,
# RUN_START, TIMEOUT, SIDE_JOBS, SSHLOGINFILE), the counters it keeps (OK,
# FAILED, DONE, BOOT_PID) and boot_args (N LABEL KERNEL DISK PRESSURE REP
# -> the array BOOT_ARGS of bench/guest-run's options but -o).

# record_boot N LABEL DISK PRESSURE REP NAME SECONDS HOST: a finished boot
# into boots.tsv and the progress line.
record_boot()
{
	local n=$1 label=$2 disk=$3 pressure=$4 rep=$5 name=$6 secs=$7 host=$8 status
	status=$(cat "$RUN/boots/$name/status" 2>/dev/null ||
		echo "failed: $(tail -n 1 "$RUN/boots/$name.out" 2>/dev/null)")
	printf '%d\t%s\t%s\t%s\t%d\t%s\t%d\tboots/%s\t%s\n' "$n" "$label" "$disk" \
		"$pressure" "$rep" "$status" "$secs" "$name" "$host" >>"$RUN/boots.tsv"
	DONE=$((DONE + 1))
	if [ "$status" = ok ]; then OK=$((OK + 1)); else FAILED="$FAILED $n"; fi
	local elapsed=$(( $(bl_now) - RUN_START ))
	bl_log "boot $n ($DONE/$NBOOTS) $label $disk $pressure rep $rep${host:+ on $host}: $status (${secs}s); elapsed $(fmt_time $elapsed), about $(fmt_time $(( elapsed * (NBOOTS - DONE) / DONE ))) left"
}

# boot_name N LABEL DISK PRESSURE REP: the boot's folder name.
boot_name()
{
	# a variant of another base (5.10/stock) names a folder, not a path
	printf '%03d-%s-%s-%s-r%d' "$1" "${2//\//_}" "$3" "$4" "$5"
}

# run_one N LABEL KERNEL DISK PRESSURE REP: boot it here, in the
# foreground, in a process group of its own (so Ctrl-C can stop QEMU).
run_one()
{
	local n=$1 name start
	name=$(boot_name "$n" "$2" "$4" "$5" "$6")
	start=$(bl_now)
	boot_args "$@"
	set -m
	"$BL_ROOT/bench/guest-run" "${BOOT_ARGS[@]}" -o "$RUN/boots/$name" \
		>"$RUN/boots/$name.out" 2>&1 &
	BOOT_PID=$!
	set +m
	wait $BOOT_PID || true
	BOOT_PID=''
	record_boot "$n" "$2" "$4" "$5" "$6" "$name" $(( $(bl_now) - start )) local
}

# run_side_by_side MATRIX_LINES_FILE: its boots, SIDE_JOBS at a time
# (GNU parallel), here or, with SSHLOGINFILE, on those hosts. Each boot is
# prepared here (bench/guest-run -P: its bundle), booted by
# bench/boot-bundle wherever parallel puts it, and judged here
# (bench/boot-status) as soon as it is back, so progress and boots.tsv
# follow the boots as they end.
run_side_by_side()
{
	local lines=$1 stage=$RUN/.stage n label kernel disk pressure rep name
	local -A meta=()
	mkdir -p "$stage"
	: >"$stage/names"
	while IFS=$'\t' read -r n label kernel disk pressure rep _; do
		name=$(boot_name "$n" "$label" "$disk" "$pressure" "$rep")
		meta[$name]="$n $label $disk $pressure $rep"
		boot_args "$n" "$label" "$kernel" "$disk" "$pressure" "$rep"
		if ! "$BL_ROOT/bench/guest-run" -P "${BOOT_ARGS[@]}" \
				-o "$RUN/boots/$name" >"$RUN/boots/$name.out" 2>&1; then
			record_boot "$n" "$label" "$disk" "$pressure" "$rep" "$name" 0 local
			continue
		fi
		[ -z "$SSHLOGINFILE" ] ||
			tar -chf "$stage/$name.tar" -C "$RUN/boots" "$name/bundle"
		echo "$name" >>"$stage/names"
	done <"$lines"
	[ -s "$stage/names" ] || return 0

	set -m
	side_by_side_parallel "$stage" >"$stage/done" 2>"$stage/parallel.log" &
	BOOT_PID=$!
	set +m
	local seen=0 alive=1 host
	while [ $alive = 1 ]; do
		kill -0 $BOOT_PID 2>/dev/null || alive=0
		while read -r name host; do
			seen=$((seen + 1))
			finish_side_boot "$stage" "$name" "$host" ${meta[$name]}
		done < <(tail -n +$((seen + 1)) "$stage/done")
		[ $alive = 0 ] || sleep 1
	done
	wait $BOOT_PID || true
	BOOT_PID=''
	# a boot parallel never reported (it died, or lost its host) fails
	while read -r name; do
		[ -e "$RUN/boots/$name/status" ] || grep -q "^$name " "$stage/done" || {
			echo "failed: GNU parallel never reported it ($(tail -n 1 "$stage/parallel.log" 2>/dev/null))" >"$RUN/boots/$name/status"
			set -- ${meta[$name]}
			record_boot "$1" "$2" "$3" "$4" "$5" "$name" 0 '?'
		}
	done <"$stage/names"
	rm -rf "$stage"
}

# The GNU parallel command of run_side_by_side: one line "NAME HOST" on
# stdout per boot as it ends (HOST: "local", or "ssh:LOGIN").
side_by_side_parallel()
{
	local stage=$1
	if [ -z "$SSHLOGINFILE" ]; then
		parallel --will-cite -j "$SIDE_JOBS" --joblog "$stage/joblog" \
			"$BL_ROOT/bench/boot-bundle {}/bundle {} >>{}.out 2>&1; echo {} local" \
			:::: <(sed "s|^|$RUN/boots/|" "$stage/names") |
			sed -u "s|^$RUN/boots/||"
		return
	fi
	# Each job runs in a fresh folder on its host (--workdir ...): the
	# bundle goes there, the boot's files come back, the folder goes.
	cd "$stage"
	parallel --will-cite -j "$SIDE_JOBS" --sshloginfile "$SSHLOGINFILE" \
		--joblog "$stage/joblog" --workdir ... --transferfile {}.tar \
		--return {}.result.tar --cleanup \
		'tar -xf {}.tar && bash {}/bundle/boot-bundle {}/bundle {}/out >{}/bundle.log 2>&1; tar -cf {}.result.tar {}/bundle.log {}/out; echo {} "ssh:${PARALLEL_SSHLOGIN##* }"' \
		:::: "$stage/names"
}

# finish_side_boot STAGE NAME HOST N LABEL DISK PRESSURE REP: bring a
# boot's files home (from another host: its result tar), judge it, record it.
finish_side_boot()
{
	local stage=$1 name=$2 host=$3 dir=$RUN/boots/$2 secs
	if [ "$host" != local ]; then
		if tar --warning=no-timestamp -xf "$stage/$name.result.tar" -C "$stage" 2>>"$dir.out"; then
			cat "$stage/$name/bundle.log" >>"$dir.out" 2>/dev/null || true
			cp -r "$stage/$name/out/." "$dir/"
		fi
		rm -rf "$stage/$name" "$stage/$name.tar" "$stage/$name.result.tar"
	fi
	"$BL_ROOT/bench/boot-status" "$dir" "$TIMEOUT" "${BL_POWEROFF_GRACE:-30}" || true
	secs=$(cat "$dir/seconds" 2>/dev/null || echo 0)
	rm -rf "$dir/bundle"
	record_boot "$4" "$5" "$6" "$7" "$8" "$name" "$secs" "$host"
}
