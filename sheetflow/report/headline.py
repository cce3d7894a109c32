"""The decision, panel and arms in words (Summary sheet and command output), and the
figure the plan sizes in a line (command output)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis.decision import headline_text
from ..analysis.p003_answer_review import refusal_line
from ..analysis.readings import reading_bounds, reading_said
from ..words import counted, interval_said, shown_number

if TYPE_CHECKING:
    from ..spec.study import Study


def headline_lines(summary: dict[str, Any]) -> list[str]:
    """The decision, panel and arms in words: the Summary sheet's first rows and the
    last lines ``sheetflow analyze`` prints (the same text in both places)."""
    decision = summary["decision"]
    lines = [headline_text(decision["status"], decision["reasons"]), f"rule: {decision['rule']}"]
    lines += [f"- {reason}" for reason in decision["reasons"]]
    lines.append(_panel_line(summary["panel"]))
    named = " ".join(m["reason"] for m in summary["panel"]["missing_packs"])
    lines += [f"file left out: {f['file']} ({f['rater'] or 'rater unknown'}): {f['reason']}"
              for f in summary["panel"]["excluded_files"] if f"file {f['file']} " not in named]
    lines += [f"note: {n}" for n in summary["panel"]["notes"]]
    if summary.get("arms"):
        lines.append(f"arms: {summary['arms']['sentence']}")
    return lines + list(summary.get("readings", []))


def study_counts(summary: dict[str, Any], study: Study) -> list[str]:
    """The raters and items the analysis rests on, each of those the study has when
    fewer: ["2 raters", "16 items"], ["1 of 2 raters", "4 of 16 items rated"] (the
    header of the Summary sheet and of ``sheetflow analyze``).

    The items counted are those some answer was given to (``n_cases``); a 16-item study
    analysed on 4 read "4 cases", as if the study had 4.
    """
    n_raters, n_items = summary["n_raters"], summary["n_cases"]
    expected, items = len(summary["panel"]["expected"]), len(study.items)
    raters = f"{n_raters} of {counted(expected, 'rater')}" if n_raters < expected else \
        counted(n_raters, "rater")
    rated = f"{n_items} of {counted(items, 'item')} rated" if n_items < items else \
        counted(n_items, "item")
    return [raters, rated]


NAMED_INCLUDED = 12  # included raters named in the line; missing ones are always all named
NAMED_DISPUTES = 12
"""Gold-disputed items named in the line; the Gold disputes sheet lists every one."""


def review_lines(summary: dict[str, Any]) -> list[str]:
    """Protocol 003's refusal counts per system and its gold-dispute list, a line each
    (the Summary sheet and ``sheetflow analyze`` say the same words); none without them.

    Parameters
    ----------
    summary : dict
        The analysis's summary (its ``refusals`` and ``gold_disputes``).

    Returns
    -------
    list of str
        "system: over-refusal 2, under-refusal 0, of 18 ratings (...)" per system, then
        "gold disputes: 2 items (HV-04, HV-11)".
    """
    lines = [refusal_line(arm, r) for arm, r in (summary.get("refusals") or {}).items()]
    if "gold_disputes" in summary:
        lines.append(_disputes_line(summary["gold_disputes"]))
    return lines


def deviations_line(summary: dict[str, Any]) -> str:
    """Protocol 001's deviations in one line, for beside the intra-rater kappa: how many
    the batch times show (and whose), how many the owners reported, and whose second
    sitting began under the protocol's 24 hours; "" when there is none.

    Parameters
    ----------
    summary : dict
        The analysis's summary (its ``deviations``).

    Returns
    -------
    str
        E.g. "3 in the batch times (owner-01), 1 reported by an owner; sitting 2
        began less than 24 hours after sitting 1 (owner-01), so the repeated marks
        may be remembered ones; each is listed on the Summary".
    """
    from ..analysis.owner_record import began_too_soon

    found = summary.get("deviations") or []
    timed = [d for d in found if d["source"] == "batch times"]
    told = len(found) - len(timed)
    parts = [f"{len(timed)} in the batch times ({_owners(timed)})"] if timed else []
    parts += [f"{told} reported by {'an owner' if told == 1 else 'the owners'}"] if told \
        else []
    if not parts:
        return ""
    soon = [d for d in timed if began_too_soon(d)]
    why = (f"; sitting 2 began less than 24 hours after sitting 1 ({_owners(soon)}), so "
           "the repeated marks may be remembered ones") if soon else ""
    return ", ".join(parts) + why + "; each is listed on the Summary"


def _owners(records: list[dict[str, Any]]) -> str:
    return ", ".join(dict.fromkeys(str(d["owner"]) for d in records))


def _disputes_line(items: list[str]) -> str:
    """How many items a rater flagged gold_dispute, and which (the first
    :data:`NAMED_DISPUTES`; the Gold disputes sheet has every one, with its note)."""
    named = ", ".join(items[:NAMED_DISPUTES])
    if len(items) > NAMED_DISPUTES:
        named += f" and {len(items) - NAMED_DISPUTES} more, all on the Gold disputes sheet"
    return f"gold disputes: {counted(len(items), 'item')}" + (f" ({named})" if items else "")



def _panel_line(panel: dict[str, Any]) -> str:
    expected, included = panel["expected"], panel["included"]
    named = ", ".join(included[:NAMED_INCLUDED]) or "none"
    if len(included) > NAMED_INCLUDED:
        named += (f" and {len(included) - NAMED_INCLUDED} more, all listed in summary.json "
                  "under panel.included")
    line = (f"panel: {len(set(included) & set(expected))} of "
            f"{counted(len(expected), 'expected rater')} with ratings ({named})")
    packs = panel["missing_packs"]
    for word, entries in (
            ("MISSING", [m for m in packs if not m.get("partial") and not m.get("empty")]),
            ("RETURNED EMPTY", [m for m in packs if m.get("empty")]),
            ("IN PART", [m for m in packs if m.get("partial")])):
        # a rater whose answers are used in part is not missing; one whose return has
        # every answer blank is not "with ratings" either
        if entries:
            line += f"; {word} " + "; ".join(
                f"{m['rater']}" + (f" sitting {m['sitting']}" if m["sitting"] != 1 else "")
                + f": {m['reason']}" for m in entries)
    return line


def planned_figures(study: Study, summary: dict[str, Any]) -> list[dict[str, Any]]:
    """The reported figures of the statistic the study's plan sizes, for the command's
    lines beside alpha.

    Parameters
    ----------
    study : Study
    summary : dict
        The analysis's summary (its ``reported`` figures).

    Returns
    -------
    list of dict
        The ``reported`` records of the plan's statistic
        (:func:`sheetflow.plan.defaults.study_defaults`): the ICC on the total (002,
        004), pairwise Cohen's kappa (two raters, 003), on the plan's measure when it
        names one; the intra-rater kappa of a second sitting (001) on every measure,
        the plan's first (the protocol: report it "even if it is bad", so an undefined
        one is printed with its reason too). None where the plan sizes alpha, whose
        lines are printed whole, or Fleiss' kappa, which is not among the reported
        figures.
    """
    from ..plan.defaults import study_defaults

    chosen = study_defaults(study)
    analysis = {"icc": "icc", "cohen_kappa": "intra_rater_kappa" if chosen.sittings
                else "cohen_kappa"}.get(chosen.statistic)
    figures = [f for f in summary.get("reported") or [] if f.get("analysis") == analysis]
    on_measure = [f for f in figures if f["measure"] == chosen.measure]
    if analysis == "intra_rater_kappa":
        return on_measure + [f for f in figures if f["measure"] != chosen.measure]
    return on_measure or figures


def figure_line(figure: dict[str, Any], named: str) -> str:
    """A reported figure in one line, as the alpha lines read: "{measure}: {figure}
    {value} [{low}, {high}] ({units}, {raters}) {reading} ({scale})", then its target
    and note.

    Parameters
    ----------
    figure : dict
        A ``reported`` record of the summary.
    named : str
        Its measure as the workbook names it ("Recomputed total (0-100) (total)").

    Returns
    -------
    str
        The value on the side of its scale's bounds its full value is on; "n/a" and the
        reason when it is undefined.
    """
    at_least, above = reading_bounds(figure["scale"])
    value = shown_number(figure["value"], at_least, above)
    ends = [shown_number(figure[k]) for k in ("ci_low", "ci_high")]
    interval = f" {interval_said(*ends)}" if "n/a" not in ends else ""
    units = "{}-{} units".format(*figure["units_range"]) if figure.get("units_range") else \
        counted(figure["units"], "unit") if figure["units"] is not None else ""
    raters = counted(figure["raters"], "rater") if figure["raters"] is not None else ""
    counts = ", ".join(filter(None, (units, raters)))
    reading = reading_said(figure)
    target = "" if figure["target"] is None else \
        f"; target {shown_number(figure['target'])}: {'met' if figure['met'] else 'not met'}"
    note = f"; {figure['note']}" if figure.get("note") else ""
    return (f"{named}: {figure['figure']} {value}{interval}"
            f"{f' ({counts})' if counts else ''} {reading}{target}{note}")
