# SPDX-License-Identifier: GPL-2.0
# Reading bench/matrix, the benchmark matrix. Source it after lib/common.sh.

BL_MATRIX_FILE=$BL_ROOT/bench/matrix

# Values of KEY in SET ("default" or "quick") of bench/matrix.
bl_matrix_get()
{
	awk -v s="$1" -v k="$2" '$1 == s && $2 == k { $1 = $2 = ""; sub(/^ +/, ""); print }' \
		"$BL_MATRIX_FILE"
}
