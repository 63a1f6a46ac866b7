# SPDX-License-Identifier: GPL-2.0
# Reading bench/lab.conf, the one description of the guest machine, its
# disks and the variants' roles. Source it after lib/common.sh.

BL_LAB_FILE=${BOUNCELAB_LAB_FILE:-$BL_ROOT/bench/lab.conf}

# Field $3 (1-based after TYPE and NAME; the last field takes the rest of
# the line) of the line "TYPE NAME ..." ; fails when there is no such line.
# _bl_lab TYPE NAME FIELD NFIELDS
_bl_lab()
{
	awk -v t="$1" -v n="$2" -v f="$3" -v nf="$4" '
		$1 == t && $2 == n {
			found = 1
			line = $0
			# drop TYPE NAME and the fields before f
			for (i = 1; i < f + 2; i++)
				sub(/^[[:space:]]*[^[:space:]]+[[:space:]]*/, "", line)
			if (f < nf) { split(line, w, /[[:space:]]+/); line = w[1] }
			print (line == "-" ? "" : line)
			exit
		}
		END { exit !found }' "$BL_LAB_FILE"
}

# Names of every line of TYPE, in file order.
bl_lab_names()
{
	awk -v t="$1" '$1 == t { print $2 }' "$BL_LAB_FILE"
}

bl_lab_default()
{
	_bl_lab default "$1" 1 1 || bl_die "no default '$1' in $BL_LAB_FILE"
}

# bl_lab_disk NAME channel|knob|role|label
bl_lab_disk()
{
	local i
	case $2 in channel) i=1 ;; knob) i=2 ;; role) i=3 ;; label) i=4 ;;
	*) bl_die "bl_lab_disk: no field '$2'" ;; esac
	_bl_lab disk "$1" $i 4 ||
		bl_die "unknown disk '$1' (known: $(bl_lab_names disk | tr '\n' ' '))"
}

# bl_lab_channel NAME find|args
bl_lab_channel()
{
	local i
	case $2 in find) i=1 ;; args) i=2 ;;
	*) bl_die "bl_lab_channel: no field '$2'" ;; esac
	_bl_lab channel "$1" $i 2 || bl_die "unknown channel '$1' in $BL_LAB_FILE"
}

# The refusal message of channel $1, empty when it has none.
bl_lab_refusal()
{
	_bl_lab refusal "$1" 1 1 || true
}

# Role of a kernel variant, empty when lab.conf gives it none.
bl_lab_role()
{
	_bl_lab role "$1" 1 2 || true
}

# Dies unless every argument is a disk of lab.conf.
bl_lab_check_disks()
{
	local d
	for d in "$@"; do
		bl_lab_disk "$d" role >/dev/null
	done
}

bl_lab_check_pressures()
{
	local p
	for p in "$@"; do
		bl_lab_pressure "$p" kind >/dev/null
	done
}

# bl_lab_pressure NAME kind|mib|label (mib is empty for the default)
bl_lab_pressure()
{
	local i
	case $2 in kind) i=1 ;; mib) i=2 ;; label) i=3 ;;
	*) bl_die "bl_lab_pressure: no field '$2'" ;; esac
	_bl_lab pressure "$1" $i 3 ||
		bl_die "unknown pressure '$1' (known: $(bl_lab_names pressure | tr '\n' ' '))"
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

# The JSON object {NAME: ROLE, ...} of every line of TYPE (disk or role).
bl_lab_roles_json()
{
	local type=$1 field=$2 nf=$3 n first=1
	printf '{'
	for n in $(bl_lab_names "$type"); do
		[ $first = 1 ] || printf ', '
		first=0
		printf '"%s": "%s"' "$n" "$(_bl_lab "$type" "$n" "$field" "$nf")"
	done
	printf '}'
}

# bl_lab_clock NAME cpus|icount|label: a clock of lab.conf (icount is
# empty for host time).
bl_lab_clock()
{
	local i
	case $2 in cpus) i=1 ;; icount) i=2 ;; label) i=3 ;;
	*) bl_die "bl_lab_clock: no field '$2'" ;; esac
	_bl_lab clock "$1" $i 3 ||
		bl_die "unknown clock '$1' (known: $(bl_lab_names clock | tr '\n' ' '))"
}

# The clocks with an -icount shift, one per line: exact clocks, whose
# boots may run side by side (bench/compare) and whose cells may be
# decided by the determinism bound.
bl_lab_exact_clocks()
{
	awk '$1 == "clock" && $4 != "-" { print $2 }' "$BL_LAB_FILE"
}

# A matrix entry is DISKS[@CLOCK][:REPS] ("ram-bounce+ram@insn:3").
# bl_lab_entry_disks ENTRY: its DISKS.
bl_lab_entry_disks()
{
	local e=${1%%:*}
	echo "${e%%@*}"
}

# bl_lab_entry_clock ENTRY [DEFAULT]: its CLOCK, else DEFAULT (else
# lab.conf's default clock).
bl_lab_entry_clock()
{
	local e=${1%%:*}
	if [[ $e == *@* ]]; then
		echo "${e#*@}"
	else
		echo "${2:-$(bl_lab_default clock)}"
	fi
}
