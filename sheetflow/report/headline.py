"""The decision, panel and arms in words (Summary sheet and command output)."""

from __future__ import annotations

from typing import Any

from ..words import counted


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """The decision, panel and arms in words: the Summary sheet's first rows and the
    last lines ``sheetflow analyze`` prints (the same text in both places)."""
    decision = summary["decision"]
    first = f"DECISION: {decision['status'].upper()}"
    if decision["status"] == "reported" and decision["reasons"]:
        # no pass rule: the first line answers the protocol's question, never "PASS"
        first = f"RESULT: {decision['reasons'][0]}"
    elif decision["status"] == "null" and decision["reasons"]:
        # the protocol's null is a result, published as one: "NULL: why", never "FAIL"
        first = f"NULL: {decision['reasons'][0]}"
    lines = [first, f"rule: {decision['rule']}"]
    lines += [f"- {reason}" for reason in decision["reasons"]]
    lines.append(_panel_line(summary["panel"]))
    named = " ".join(m["reason"] for m in summary["panel"]["missing_packs"])
    lines += [f"file left out: {f['file']} ({f['rater'] or 'rater unknown'}): {f['reason']}"
              for f in summary["panel"]["excluded_files"] if f"file {f['file']} " not in named]
    lines += [f"note: {n}" for n in summary["panel"]["notes"]]
    if summary.get("arms"):
        lines.append(f"arms: {summary['arms']['sentence']}")
    return lines + list(summary.get("readings", []))

NAMED_INCLUDED = 12  # included raters named in the line; missing ones are always all named


def _panel_line(panel: dict[str, Any]) -> str:
    expected, included = panel["expected"], panel["included"]
    named = ", ".join(included[:NAMED_INCLUDED]) or "none"
    if len(included) > NAMED_INCLUDED:
        named += (f" and {len(included) - NAMED_INCLUDED} more, all listed in summary.json "
                  "under panel.included")
    line = (f"panel: {len(set(included) & set(expected))} of "
            f"{counted(len(expected), 'expected rater')} with ratings ({named})")
    for word, entries in (("MISSING", [m for m in panel["missing_packs"] if not m.get("partial")]),
                          ("IN PART", [m for m in panel["missing_packs"] if m.get("partial")])):
        if entries:  # a rater whose answers are used in part is not missing
            line += f"; {word} " + "; ".join(
                f"{m['rater']}" + (f" sitting {m['sitting']}" if m["sitting"] != 1 else "")
                + f": {m['reason']}" for m in entries)
    return line
