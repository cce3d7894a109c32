"""The internal scores file (``[analysis.params] internal_scores_file``), checked at load.

Protocol 000 compares the external validators with the team's own scores: one row per
case and arm, columns ``case_id`` (an item id), ``arm`` (an arm id of the design) and
``total`` (a number on the rubric's own scale: the team scores with the same rubric).
``check`` refuses anything else here, with the file and row named, so the analysis
never meets a missing column, a case or arm that does not exist, a total that is not a
number or that no total of the rubric can take (a percentage, a slip of the keyboard),
or a pair scored twice.
"""

from __future__ import annotations

import math
from pathlib import Path

from ..errors import SpecError
from ..words import counted
from .limits import MAX_SPEC_BYTES
from .model import Design, Item
from .rubric import Rubric, total_bounds
from .tables import read_table
from .templates import data_dir

INTERNAL_COLUMNS = ("case_id", "arm", "total")
EXAMPLE_SCORES = ("paired-rubric", "internal_scores.csv")
"""The bundled template and file holding example internal scores, not a team's."""


def input_changed(shown: str, sealed: str, now: str) -> str:
    """The line telling that an input file sealed at generate has other bytes now.

    Parameters
    ----------
    shown : str
        The file as messages name it, with the study folder (``my-study/scores.csv``).
    sealed : str
        The sha256 sealed at generate.
    now : str
        The sha256 of the bytes read now (or what stands for a missing file).

    Returns
    -------
    str
    """
    return (f"{shown} changed after generate: sha256 {sealed} was sealed, it is now "
            f"{now}; restore the file as it was at generate")


def example_scores_warning(path: Path, data: bytes) -> str:
    """A warning when the internal scores at ``path`` are, byte for byte, the example
    a template ships ("" when they are not).

    The example's totals bear no relation to any study's ratings, and the internal team
    counts as one more rater in the decision's alpha: a study that kept them would have
    a low alpha for no reason of its raters. Not an error: a study may be tried out on
    the template whole.

    Parameters
    ----------
    path : Path
        The study's internal scores file, already checked (named in the warning).
    data : bytes
        Its bytes, as read once for the check.

    Returns
    -------
    str
    """
    template, name = EXAMPLE_SCORES
    example = data_dir("templates") / template / name
    try:
        same = len(data) == example.stat().st_size and data == example.read_bytes()
    except OSError:  # no bundled example to compare with
        return ""
    if not same:
        return ""
    return (f"{path}: holds the {template} template's example internal scores byte for "
            "byte, not your team's: the internal team counts as one more rater in the "
            "decision's alpha, so example totals pull it down; replace them with the "
            "internal team's own totals (case_id, arm, total) before generate, which seals "
            "the file")


def internal_scores_problems(path: Path, items: tuple[Item, ...], design: Design,
                             rubric: Rubric | None = None, *,
                             data: bytes | None = None) -> list[SpecError]:
    """Every problem of the internal scores at ``path`` (empty when it is sound).

    Parameters
    ----------
    path : Path
        The file (CSV or XLSX).
    items : tuple of Item
        The study's items: every ``case_id`` must be one of their ids.
    design : Design
        Its arms: every ``arm`` must be one of their ids.
    rubric : Rubric, optional
        Its totals: every ``total`` must lie in the range one of them can take
        (:func:`~sheetflow.spec.rubric.total_bounds`, what its dimensions give; from
        the lowest to the highest when there are several). Not checked when not given
        or when the rubric has no total.
    data : bytes, optional
        The file's bytes as already read (and hashed) by the caller: what is checked is
        what ``generate`` seals (read from ``path`` when not given).
    """
    try:
        header, rows = read_table(path, max_bytes=MAX_SPEC_BYTES, data=data)
    except SpecError as exc:
        return [exc]
    name = str(path)
    missing = [c for c in INTERNAL_COLUMNS if c not in header]
    if missing:
        return [SpecError(f"needs the columns {', '.join(INTERNAL_COLUMNS)}; "
                          f"{', '.join(missing)} missing (the file has: {', '.join(header)})",
                          file=name, where="header")]
    ids, arms = {it.id for it in items}, {a.id for a in design.arms}
    unknown_case: dict[str, int] = {}
    unknown_arm: dict[str, int] = {}
    not_number: dict[str, int] = {}
    outside: dict[str, int] = {}
    span = _totals_span(rubric)
    twice: dict[tuple[str, str], int] = {}
    seen: dict[tuple[str, str], int] = {}
    for row_no, row in rows:
        case, arm, total = row.get("case_id", ""), row.get("arm", ""), row.get("total", "")
        if case not in ids:
            unknown_case.setdefault(case, row_no)
        if arm not in arms:
            unknown_arm.setdefault(arm, row_no)
        if not _is_number(total):
            not_number.setdefault(total, row_no)
        elif span is not None and not span[0] <= float(total) <= span[1]:
            outside.setdefault(total, row_no)
        if (case, arm) in seen:
            twice.setdefault((case, arm), row_no)
        seen.setdefault((case, arm), row_no)
    problems = []
    if unknown_case:
        problems.append(_one(name, unknown_case, "case_id", ("an item id", "item ids"),
                             "of the study"))
    if unknown_arm:
        problems.append(_one(name, unknown_arm, "arm", ("an arm", "arms"),
                             f"of the design {sorted(arms)}"))
    if not_number:
        problems.append(_one(name, not_number, "total", ("a number", "numbers"), ""))
    if outside and span is not None:
        problems.append(_outside(name, outside, span))
    if twice:
        first = min(twice.values())
        pairs = ", ".join(f"{c!r} x {a!r}" for c, a in list(twice)[:3])
        problems.append(SpecError(f"{counted(len(twice), 'case and arm pair')} "
                                  f"{'is' if len(twice) == 1 else 'are'} scored twice "
                                  f"({pairs}{', ...' if len(twice) > 3 else ''})",
                                  file=name, where=f"row {first}"))
    if not problems:  # the rows are sound: is every case and arm there?
        problems += _coverage(name, set(seen), items, design)
    return problems


def _coverage(name: str, scored: set[tuple[str, str]], items: tuple[Item, ...],
              design: Design) -> list[SpecError]:
    """Every case must be scored for every arm it shows: one missing pair would leave
    the comparison with the internal scores on fewer cases, in silence."""
    if design.paired:
        wanted = [(it.id, a.id) for it in items for a in design.arms]
    else:
        column = design.arm_column or ""
        wanted = [(it.id, it.fields.get(column, "")) for it in items]
    missing = [pair for pair in wanted if pair not in scored]
    if not missing:
        return []
    shown = ", ".join(f"{c!r} x {a!r}" for c, a in missing[:3])
    return [SpecError(f"has no total for {len(missing)} of the {len(wanted)} case and arm "
                      f"pairs ({shown}{', ...' if len(missing) > 3 else ''}); every case "
                      "needs a total for each arm it shows", file=name)]


def _one(name: str, found: dict[str, int], column: str, what: tuple[str, str],
         of: str) -> SpecError:
    """One problem for every row with a bad ``column`` value, at the first such row."""
    shown = ", ".join(repr(v) for v in list(found)[:3]) + (", ..." if len(found) > 3 else "")
    verdict = f"is not {what[0]}" if len(found) == 1 else \
        f"are not {what[1]} ({len(found)} values)"
    return SpecError(f"{column} {shown} {verdict} {of}".rstrip(), file=name,
                     where=f"row {min(found.values())}")


def _outside(name: str, found: dict[str, int], span: tuple[float, float]) -> SpecError:
    """One problem for every total no total of the rubric can take, at the first row."""
    shown = ", ".join(repr(v) for v in list(found)[:3]) + (", ..." if len(found) > 3 else "")
    which = "is" if len(found) == 1 else f"are ({len(found)} values)"
    return SpecError(f"total {shown} {which} outside {_fmt(span[0])}-{_fmt(span[1])}, the "
                     "points a total of the rubric can take: the team scores with the "
                     "study's rubric, so enter the total it gives", file=name,
                     where=f"row {min(found.values())}")


def _totals_span(rubric: Rubric | None) -> tuple[float, float] | None:
    """From the lowest to the highest value the rubric's totals can take (None when
    there is no rubric or it has no total)."""
    if rubric is None or not rubric.totals:
        return None
    ranges = [total_bounds(t, rubric) for t in rubric.totals]
    return (min(lo for lo, _ in ranges), max(hi for _, hi in ranges))


def _fmt(x: float) -> str:
    """A bound without a trailing ``.0`` when it is whole."""
    return str(int(x)) if float(x).is_integer() else str(x)


def _is_number(text: str) -> bool:
    try:
        return math.isfinite(float(text))
    except ValueError:
        return False
