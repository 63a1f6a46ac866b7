# SPDX-License-Identifier: GPL-2.0
"""The markdown of the reports (report.md, tables.md, history.md): one
number format, one table, one wording of each verdict class, and the
verdict row of a pair turned the way a table shows it (oriented).

The verdict classes are stats.relevance()'s labels: a significant row is
"relevant" (its verdict word, in bold on a table) or "negligible"; a row
without a verdict says "no difference, could detect ±X%", "not
significant after adjustment (its own CI excludes 1)" or "too few
repetitions"; a row with nothing to test says "no data" or "bounce path
not exercised".
"""
import numpy as np

from . import stats as S


def fmt(x, digits=3, missing="n/a", fixed=None, sign=False):
    """A number: digits significant digits, an integer part longer than
    that in full, an exponent only below 1e-3 or from 1e8 on; fixed:
    that many decimals instead (sign: always signed). missing for None
    or NaN."""
    if x is None or not np.isfinite(x):
        return missing
    if fixed is not None:
        return f"{x:{'+' if sign else ''}.{fixed}f}"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    ax = abs(x)
    if ax != 0 and (ax >= 1e8 or ax < 1e-3):
        return f"{x:.{digits - 1}e}"
    if ax >= 10 ** digits:
        return f"{x:.0f}"
    return f"{x:.{digits}g}"


def delta(x, nd=1):
    """A difference: signed, nd decimals ("+1.2")."""
    return fmt(x, fixed=nd, sign=True)


def p_text(x):
    """A p-value: two digits, an exponent below 0.001; "" for none."""
    return "" if not np.isfinite(x) else (f"{x:.2g}" if x >= 0.001 else f"{x:.1e}")


def table(header, rows):
    """A markdown table (a | in a cell is escaped), as one string."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" for _ in header) + "|"]
    cells = ([str(c).replace("|", "\\|").replace("\n", " ") for c in row] for row in rows)
    out += ["| " + " | ".join(row) + " |" for row in cells]
    return "\n".join(out)


def ratio_text(row):
    """"1.41 (95% CI 1.30-1.52)" or just the ratio when there is no CI."""
    if not np.isfinite(row["ratio"]):
        return ""
    text = fmt(row["ratio"], 3, "")
    if np.isfinite(row["ci_low"]):
        text += f" (95% CI {fmt(row['ci_low'], 3, '')}–{fmt(row['ci_high'], 3, '')})"
    return text


def verdict_words(o):
    """What a verdict row says, in its class's one wording (the module docstring)."""
    verdict = str(o["verdict"])
    rel = o.get("relevance") or ""
    return verdict if rel == S.RELEVANT else (rel or verdict)


def verdict_cell(o):
    """A ratio with its CI and its verdict: "**1.21 (1.20–1.22) faster**"
    (bold: relevant), "1.00 (0.99–1.01) no difference, could detect ±1%";
    o is oriented()'s row, None: "n/a"."""
    if o is None:
        return "n/a"
    words = verdict_words(o)
    if not np.isfinite(o["ratio"]):
        return words
    text = fmt(o["ratio"])
    if np.isfinite(o["lo"]) and np.isfinite(o["hi"]):
        text += f" ({fmt(o['lo'])}–{fmt(o['hi'])})"
    if o.get("relevance") == S.RELEVANT:
        return f"**{text} {words}**"
    return f"{text} {words}"


def _inverse(x):
    return 1.0 / x if np.isfinite(x) and x != 0 else np.nan


def oriented(verdicts, metric, disk, job, pressure, num, den):
    """The verdict row of num against den (ratio num/den), turned round
    when verdict.csv has it the other way; None when there is none.
    pressure None: the first row of any pressure."""
    v = verdicts
    sel = v[(v["metric"] == metric) & (v["disk"] == disk) & (v["job"] == job)]
    if pressure is not None:
        sel = sel[sel["pressure"] == pressure]
    row = sel[(sel["b"] == num) & (sel["a"] == den)]
    turned = not len(row)
    if turned:
        row = sel[(sel["b"] == den) & (sel["a"] == num)]
    if not len(row):
        return None
    r = row.iloc[0]
    o = dict(ratio=r["ratio"], lo=r["ci_low"], hi=r["ci_high"], verdict=r["verdict"],
             mde=r.get("mde_pct", np.nan), relevance=r.get("relevance", ""), note=r.get("note", ""))
    if turned:
        o.update(ratio=_inverse(r["ratio"]), lo=_inverse(r["ci_high"]), hi=_inverse(r["ci_low"]))
        if S.is_significant(o["verdict"]):
            # the word is said of B against A: turned round with the ratio
            o["verdict"] = S.word(metric, o["ratio"] > 1)
    return o
