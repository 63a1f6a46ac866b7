# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Host-run unit tests for insnmark. Sourced by run-tests.sh, which gives
# BIN, TMP, run_test and expect (bad_usage: copyref-lowhog-tests.sh). The marker is a no-op without
# the QEMU plugin, so on the host only the notes and the usage are seen.

INSNMARK=$BIN/insnmark

t_im_notes()
{
	local f=$TMP/im.window o c

	rm -f "$f"
	"$INSNMARK" open 7 "$f" && "$INSNMARK" close 7 "$f" || return 1
	o=$(awk '$1 == "open" && $2 == 7 { print $3 }' "$f")
	c=$(awk '$1 == "close" && $2 == 7 { print $3 }' "$f")
	expect "lines" "$(wc -l <"$f")" 2 || return 1
	[ -n "$o" ] && [ -n "$c" ] && [ "$c" -ge "$o" ] ||
		{ echo "open '$o' close '$c' not in order"; return 1; }
}

t_im_bad_args()
{
	bad_each bad_usage "$INSNMARK" , open 1 , shut 1 "$TMP/x" \
		, open 0 "$TMP/x" , open 65536 "$TMP/x" , close 1x "$TMP/x" \
		, open 1 "$TMP/x" extra
}

t_im_unwritable()
{
	local rc=0

	"$INSNMARK" open 1 "$TMP/no/such/dir/w" 2>"$TMP/im.err" || rc=$?
	expect "exit status" "$rc" 1
}

for t in \
	"insnmark notes open and close in order:t_im_notes" \
	"insnmark bad arguments exit 2:t_im_bad_args" \
	"insnmark unwritable note file exits 1:t_im_unwritable"; do
	run_test "${t%:*}" "${t##*:}"
done
