"""The words a rater reads: labels, guides beside each answer, input messages, how-to."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..spec.rubric import Bin, Dimension
from ..workbook import layout as L
from .text import clip

TITLE_LIMIT = 32


def flags_needing_notes(dims: Iterable[Dimension]) -> dict[str, tuple[Dimension, ...]]:
    """Each note a marked flag makes required, with the flags that name it.

    A flag may name a text dimension as its ``note`` (protocol 003: "Put Y in
    gold_dispute and one line in rater_note"); collect refuses a marked flag whose note
    is blank. A note required anyway is left out: it needs no condition.

    Parameters
    ----------
    dims : iterable of Dimension
        The rubric's dimensions.

    Returns
    -------
    dict
        Note dimension id -> the flag dimensions naming it, in rubric order.
    """
    dims = list(dims)
    optional = {d.id for d in dims if d.kind == "text" and not d.required}
    out: dict[str, tuple[Dimension, ...]] = {}
    for flag in dims:
        if flag.kind == "flag" and flag.note in optional:
            out[flag.note] = (*out.get(flag.note, ()), flag)
    return out


def note_requirement(flags: tuple[Dimension, ...]) -> str:
    """When a note is required: "Required when Gold answer disputed is Y; otherwise
    optional." (``flags`` as :func:`flags_needing_notes` gives them)."""
    return f"Required when {_marked(flags)}; otherwise optional."


def _marked(flags: tuple[Dimension, ...]) -> str:
    """The flags marked, in words: "Gold answer disputed is Y"."""
    return " or ".join(f"{display_label(f)} is {' or '.join(f.choices)}" for f in flags)


def messages(title: str, message: str, error: str) -> dict[str, Any]:
    """xlsxwriter input-message (and stop-alert) options, clipped to Excel's limits."""
    out = {"input_title": clip(title, TITLE_LIMIT), "input_message": clip(message, 255)}
    if error:
        out.update({"error_type": "stop", "error_title": clip(title, TITLE_LIMIT),
                    "error_message": clip(error, 255)})
    return out


def display_label(dim: Dimension) -> str:
    """The dimension's label, made readable when the spec left it as the bare id.

    ``overall_rating`` reads "Overall rating"; a label the spec wrote is kept as is.
    """
    if dim.label != dim.id:
        return dim.label
    words = dim.id.replace("_", " ").replace("-", " ").split()
    return " ".join(words)[:1].upper() + " ".join(words)[1:] if words else dim.id


def answer_label(dim: Dimension) -> str:
    """The label on a dimension's answer line; a count says it wants a count."""
    label = display_label(dim)
    return f"{label} (count)" if dim.kind == "count" else label


def question_label(dim: Dimension, index: int, question: str) -> str:
    """The label on a checklist's answer line for its ``index``-th question: the first
    says which dimension the questions belong to."""
    return f"{display_label(dim)}: {question}" if index == 0 else question


def word_range(dim: Dimension) -> str:
    """The word range of a text answer as an instruction ("Write 50-100 words.")."""
    lo, hi = dim.min_words, dim.max_words
    if lo is not None and hi is not None:
        return f"Write {lo}-{hi} words."
    if hi is not None:
        return f"At most {hi} words."
    if lo is not None:
        return f"At least {lo} words."
    return ""


def green_cells(dims: Iterable[Dimension], totals: bool) -> str:
    """What the pack's green (computed) cells are, in the words of its legend; "" for a
    pack with none: a legend naming green where nothing is green misleads the rater.

    Parameters
    ----------
    dims : iterable of Dimension
        The pack's dimensions: a count has its points computed under it.
    totals : bool
        Whether the pack has totals (each computed once its parts are answered).
    """
    if totals:
        return "a total once all its parts are answered"
    return "the points a count earns" if any(d.kind == "count" for d in dims) else ""


def legend(dims: Iterable[Dimension], timed: bool = False, totals: bool = False) -> str:
    """The colours of the Scoring sheet in one line (under the progress line); green
    only where the pack has computed cells (:func:`green_cells`), purple only where a
    text answer has a word range or (``timed``) batches have times."""
    dims = tuple(dims)
    text = ("Yellow: your answers. Orange: required, still blank, in a case you have "
            "reached. Red: a value not allowed there. Grey: the material to judge "
            "(locked).")
    green = green_cells(dims, totals)
    if green:
        text += f" Green: computed for you ({green})."
    purple = []
    if any(d.kind == "text" and word_range(d) for d in dims):
        purple.append("a text outside its word range")
    if timed:
        purple.append("a batch time that is not a date and time")
    if purple:
        text += f" Purple: {' or '.join(purple)} (allowed; please check)."
    return text


def describe_bins(bins: tuple[Bin, ...]) -> str:
    """Count bins as a rater reads them: ``0-1 \u2192 0 pts, 2-3 \u2192 2 pts, 6+ \u2192 5 pts``."""
    return ", ".join(b.describe().replace(" -> ", " \u2192 ") + " pts" for b in bins)


def number_span(dim: Dimension) -> str:
    """What a number cell takes, e.g. ``a whole number from 0 to 10``."""
    lo, hi = dim.minimum or 0, dim.maximum
    if dim.kind == "number" and dim.decimals:
        return f"a number from {lo} to {hi} (decimals allowed, e.g. 6.5)"
    if hi is None:
        return f"a whole number, {lo} or more"
    return f"a whole number from {lo} to {hi}"


def rule_text(dim: Dimension) -> str:
    """What the answer cell takes, in one or two short sentences."""
    kind = dim.kind
    if kind == "count":
        return ("Type how many you counted (a whole number), not the points. "
                f"Points: {describe_bins(dim.bins)}.")
    if kind == "checklist":
        return "Yes or No for each question; 1 point per Yes."
    if kind == "scale" and dim.labels:
        return "\n".join(f"{v} = {text}" for v, text in dim.labels.items())
    if kind in ("scale", "number"):
        return f"Type {number_span(dim)}."
    if kind == "text":
        return word_range(dim) or "Free text."
    if kind == "flag":
        return f"Pick {dim.choices[0]} if it applies; otherwise leave blank."
    if kind == "binary" and dim.blank_means:
        return f"Pick {' or '.join(dim.choices)}; blank counts as {dim.blank_means}."
    return "Pick one: " + ", ".join(dim.choices) + "."


def guide(dim: Dimension, needed_by: tuple[Dimension, ...] = ()) -> str:
    """The short guidance beside an answer line.

    The dimension's help, then what a count earns, a scale's anchors or a text's word
    range; the allowed values when there is no help (the dropdown shows them anyway).
    A note that the flags ``needed_by`` make required says when it is, not "Optional."
    """
    kind = dim.kind
    if kind == "count":
        parts = [dim.help, f"Points: {describe_bins(dim.bins)}."]
    elif (kind == "scale" and dim.labels) or kind == "text":
        parts = [dim.help, rule_text(dim) if kind != "text" else word_range(dim)]
    else:
        parts = [dim.help or rule_text(dim)]
        if kind == "binary" and dim.blank_means:
            parts.append(f"Blank counts as {dim.blank_means}.")
    if needed_by:
        parts.append(note_requirement(needed_by))
    elif not dim.required and kind != "flag" and not dim.blank_means and \
            not _says_optional(dim.help):
        parts.append("Optional.")
    return "\n".join(p for p in parts if p)


def _says_optional(help_text: str) -> bool:
    """Whether the rubric's own help already opens with "Optional" (the paired
    template's notes: "Optional: brief notes ..."), which a second "Optional." repeats."""
    return help_text.lstrip().lower().startswith("optional")


def rubric_lines(dim: Dimension, needed_by: tuple[Dimension, ...] = ()) -> list[str]:
    """The dimension's entry in the More instructions sheet's rubric section (a note
    the flags ``needed_by`` make required says when it is)."""
    lines = [dim.help] if dim.help else []
    if dim.kind == "checklist":
        lines.append("Answer Yes or No to each question: " + "; ".join(dim.questions))
    lines.append(rule_text(dim))
    if dim.confidence:
        lines.append("Also give your confidence: Low, Medium or High.")
    if needed_by:
        lines.append(note_requirement(needed_by))
    else:
        lines.append("Required." if dim.required else "Optional.")
    return lines


def _what_can_change(computed: str) -> str:
    """The cells a rater can change, and the green ones only where the pack has them
    (``computed``: :func:`green_cells`)."""
    said = "Only the yellow cells can be changed; the grey text is the material to judge"
    if not computed:
        return f"{said}."
    green = "a total appears once every score it adds up is filled in" \
        if computed.startswith("a total") else "the points each count earns"
    return f"{said} and the green cells are computed for you ({green})."


def how_to_lines(spec: Any, paired: bool) -> tuple[list[str], list[str]]:
    """How to fill one pack (a writer ``PackSpec``): what a rater needs before the first
    card (for the Instructions sheet), and the rest (for More instructions)."""
    dims = spec.dimensions
    essential = [
        f"Score on the '{L.SCORING_SHEET}' sheet. Each case is a card: read the grey text, "
        "then fill in the yellow cells on its answer lines (only they can be changed). "
        "A cell with a dropdown: click it and pick from the arrow.",
    ]
    if paired:
        a, b = spec.labels
        essential.append(f"Each case shows two responses, {a} and {b}, labelled at random for "
                         f"each case: score each on its own ({a} in the left answer columns, "
                         f"{b} in the right ones).")
    if any(d.kind == "count" for d in dims):
        essential.append("Lines marked (count) take the number of things you counted, not "
                         "points; the points it earns show in green below it.")
    if any(d.confidence for d in dims):
        essential.append("Where a Confidence cell is shown beside a score, pick Low, Medium "
                         "or High: how sure you are of that score.")
    if any(d.kind == "binary" and d.blank_means for d in dims):
        names = ", ".join(display_label(d) for d in dims if d.blank_means)
        essential.append(f"{names}: pick Yes where it applies; a blank cell counts as No.")
    if spec.batch_size:
        essential.append(f"Cards come in batches of {spec.batch_size}. Type the date and time "
                         "(yyyy-mm-dd hh:mm, e.g. 2026-11-02 14:05) when you start each batch "
                         "and when you finish it. A time that is not a date and time (a "
                         "time of day alone, words) turns purple: it is allowed, but the "
                         "time between your sittings cannot be checked from it.")
    if spec.include_study_answers and any(d.scope == "study" for d in dims):
        essential.append("After the last card, fill in the Submission area at the bottom of "
                         f"the '{L.SCORING_SHEET}' sheet.")
    essential += [
        "Orange: a required answer still blank in a case you have reached. Red: a value "
        "not allowed there; correct it. The progress line at the top turns green when "
        "every required answer is filled and none is red.",
    ]
    if any(d.kind == "text" and word_range(d) for d in dims):
        essential.append("Purple: a text shorter or longer than its suggested word range. "
                         "It is allowed and does not stop the progress line from turning "
                         "green; please check it says what you mean.")
    essential += [_note_line(note, flags, dims) for note, flags in
                  flags_needing_notes(dims).items()]
    essential += [
        "Type or pick answers: do not paste into answer cells or type formulas, and do not "
        "rename, add, move or delete sheets, rows or columns, or rename the file.",
        "When you are done, save the workbook as .xlsx (File > Save) and email it back to "
        "the study coordinator as an attachment.",
    ]
    details = [
        _what_can_change(green_cells(dims, bool(spec.totals))),
        "A case counts as reached once you have answered anything in it or in a case after "
        "it: its required answers still blank then turn orange, so a case skipped on the "
        "way shows what it still needs. The cases ahead stay plain yellow.",
        "The progress line counts the required answers you have filled and the red cells "
        "still to correct, and says where the first of each is (case and row).",
        "Number cells take the number shown when you click the cell. A paste can remove a "
        "cell's dropdown rule; a value the rule refuses turns red and is counted on the "
        "progress line until corrected.",
        "A card is not split across printed pages unless it is longer than one; then each "
        "of its pages names the case.",
    ]
    return essential, details


def _note_line(note_id: str, flags: tuple[Dimension, ...], dims: Any) -> str:
    """How-to line for a note a marked flag makes required (collect refuses the pack
    without it, so the rater must know before returning it)."""
    note = display_label(next(d for d in dims if d.id == note_id))
    return (f"Where {_marked(flags)}, {note} is required: it turns orange while blank, and the "
            "progress line counts it as a note still to write until you fill it in.")
