#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# report.html (bench/analysis/html.py) opened in a real headless browser,
# Debian's chromium:
#   - bench/analyze writes it beside report.md, self-contained: every
#     figure of the report inline, none fetched from the run folder;
#   - in the browser every figure renders (the page marks each image
#     data-rendered="yes" once loaded), as many as report.md shows;
#   - a figure that cannot render is marked "no" and said on the page
#     (the check can fail).
# The run is tests/analysis' small default-like run (helpers.default_run).
set -uo pipefail

. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
RUN=$WORK/default-small

# chromium --dump-dom of FILE, after its images loaded (as root, chromium
# runs only without its sandbox).
dom()
{
	timeout 120 chromium --headless --no-sandbox --disable-gpu --virtual-time-budget=10000 \
		--dump-dom "file://$1" 2>/dev/null
}

t_plan 4

"$PY" -c 'import sys; sys.path.insert(0, sys.argv[1]); import helpers; helpers.default_run(sys.argv[2])' \
	"$BL_ROOT/tests/analysis" "$RUN" >/dev/null &&
	"$BL_ROOT/bench/analyze" --resamples 200 "$RUN" >"$WORK/analyze.out" 2>&1
figures=$(grep -c '^!\[' "$RUN/report.md" 2>/dev/null)
t_check "bench/analyze writes report.html, self-contained ($figures figures in report.md)" \
	bash -c "[ -s '$RUN/report.html' ] && [ '${figures:-0}' -gt 0 ] &&
		[ \$(grep -o '<img[^>]*src=\"data:image/png;base64,' '$RUN/report.html' | wc -l) = '$figures' ] &&
		! grep -q '<img[^>]*src=\"plots/' '$RUN/report.html'"

dom "$RUN/report.html" >"$WORK/dom.html"
yes=$(grep -o 'data-rendered="yes"' "$WORK/dom.html" | wc -l)
t_check "chromium renders every figure ($yes of $figures)" \
	bash -c "[ '$yes' = '$figures' ] && ! grep -q 'data-rendered=\"no\"' '$WORK/dom.html'"

# one figure broken on purpose: its data cut to a few bytes
sed '0,/base64,[A-Za-z0-9+\/=]*/s//base64,AAAA/' "$RUN/report.html" >"$WORK/broken.html"
dom "$WORK/broken.html" >"$WORK/broken-dom.html"
t_check "a figure that cannot render is marked so" \
	grep -q 'data-rendered="no"' "$WORK/broken-dom.html"
t_check "and said on the page" \
	grep -q 'figure did not render: ' "$WORK/broken-dom.html"

t_summary
