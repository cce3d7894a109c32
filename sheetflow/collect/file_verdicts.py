"""Each input file's verdict as ``out/collection.json`` records it: who it is, whether
its ratings are used and, if not, why (``analyze`` names every file left out from it)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from ..words import counted
from .validate import ERROR, SET_ASIDE, Issue, ValidationReport

_REASON_ISSUES = 3  # issues quoted in a file's reason; the rest are counted


def file_verdicts(report: ValidationReport) -> list[dict[str, Any]]:
    """Per input file: who it is, whether its ratings are used and, if not, why.

    ``analyze`` reads these (from ``out/collection.json``) to name every file whose
    ratings are left out. The reason quotes the file's first errors (or, for a file
    without errors that is still not used, its first warnings) with sheet and cell.
    """
    by_file: dict[str, list[Issue]] = defaultdict(list)
    for item in report.issues:
        by_file[item.file].append(item)
    out = []
    for f in report.files:
        issues = by_file.get(f.file, [])
        errors = [i for i in issues if i.severity == ERROR]
        quoted = errors or ([] if f.used else issues)
        out.append({**f.to_dict(), "reason": "" if f.used and not errors else
                    _reason(quoted, len(errors)),
                    # the rater's newer file stands for them: nothing of theirs is lost
                    "set_aside": any(i.code in SET_ASIDE for i in issues)})
    return out


def _reason(issues: list[Issue], n_errors: int) -> str:
    parts = []
    for item in issues[:_REASON_ISSUES]:
        where = "!".join(x for x in (item.sheet, item.cell) if x)
        parts.append(f"{item.code}{' at ' + where if where else ''}")
    more = len(issues) - _REASON_ISSUES
    head = f"{counted(n_errors, 'error')}: " if n_errors else ""
    tail = f" and {more} more (see validation.xlsx)" if more > 0 else ""
    return head + ", ".join(parts) + tail if parts else "not used (see validation.xlsx)"
