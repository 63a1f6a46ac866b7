# SPDX-License-Identifier: GPL-2.0
# bench/lab.conf for shell scripts: the one description of the guest
# machine, its disks and the variants' roles. Source it after
# lib/common.sh. The file is parsed once, by bench/lab/labconf.py
# (the lab's one parser of it), into the arrays BL_LAB and BL_LAB_NAMES;
# the functions below only look values up.

BL_LAB_FILE=${BOUNCELAB_LAB_FILE:-$BL_ROOT/bench/lab.conf}
_bl_lab_out=$(/usr/bin/python3 "$BL_ROOT/bench/lab/labconf.py" --shell "$BL_LAB_FILE") ||
	bl_die "cannot read $BL_LAB_FILE"
eval "$_bl_lab_out"
unset _bl_lab_out

# _bl_lab TYPE NAME FIELD: a field of the line "TYPE NAME ..." ("-" is
# empty); fails when there is no such line.
_bl_lab()
{
	[ -n "${BL_LAB[$1/$2]:-}" ] || return 1
	printf '%s\n' "${BL_LAB[$1/$2/$3]:-}"
}

# Names of every line of TYPE, in file order, one per line.
bl_lab_names()
{
	[ -z "${BL_LAB_NAMES[$1]:-}" ] || printf '%s\n' ${BL_LAB_NAMES[$1]}
}

# "unknown KIND 'NAME' (known: ...)", and exit 1.
_bl_lab_unknown()
{
	bl_die "unknown $1 '$2' (known: $(bl_lab_names "$1" | tr '\n' ' '))"
}

bl_lab_default()
{
	_bl_lab default "$1" value || bl_die "no default '$1' in $BL_LAB_FILE"
}

# bl_lab_disk NAME channel|knob|role|label
bl_lab_disk()
{
	_bl_lab disk "$1" "$2" || _bl_lab_unknown disk "$1"
}

# bl_lab_channel NAME find|args
bl_lab_channel()
{
	_bl_lab channel "$1" "$2" || bl_die "unknown channel '$1' in $BL_LAB_FILE"
}

# The refusal message of channel $1, empty when it has none.
bl_lab_refusal()
{
	_bl_lab refusal "$1" message || true
}

# Role of a kernel variant, empty when lab.conf gives it none.
bl_lab_role()
{
	_bl_lab role "$1" role || true
}

# bl_lab_pressure NAME kind|mib|label (mib is empty for the default)
bl_lab_pressure()
{
	_bl_lab pressure "$1" "$2" || _bl_lab_unknown pressure "$1"
}

# bl_lab_clock NAME cpus|icount|label: a clock of lab.conf (icount is
# empty for host time).
bl_lab_clock()
{
	_bl_lab clock "$1" "$2" || _bl_lab_unknown clock "$1"
}

# The disks of one boot: a matrix entry "ram-bounce+ram" names several
# disks that share the boot. Dies when two of them need the same channel
# with a knob that holds for the whole boot (usb-pio+usb-dma).
bl_lab_boot_disks()
{
	local d knob ch seen=' '
	for d in ${1//+/ }; do
		knob=$(bl_lab_disk "$d" knob) || exit 1
		ch=$(bl_lab_disk "$d" channel) || exit 1
		case $knob in
		param:*) ;;
		*)	[[ $seen != *" $ch "* ]] ||
				bl_die "disks '$1' share channel '$ch' in one boot, but its knob holds for the whole boot"
			seen="$seen$ch " ;;
		esac
		echo "$d"
	done
}
