"""The rubric: dimensions of several kinds, totals, and the values each allows.

A dimension says what a rater enters in one answer cell (or, for a checklist, in one
cell per question), which values are allowed, whether it is required, whether it asks
for a Low/Medium/High confidence, and how it is analysed (level of measurement).

Kinds
-----
``count``       a whole number >= 0, turned into points by bins (protocol 000)
``checklist``   Yes/No per listed question; points are the number of Yes (000)
``scale``       one value of an ordered numeric scale with labels or anchors (002, 004)
``categorical`` one label from a list, ordered or not; some labels may mean N/A (003)
``binary``      Yes/No, optionally "blank means No" (001 KEEP / KNOWN)
``flag``        an optional single mark such as ``Y`` (003 gold_dispute)
``number``      a bounded number, whole unless ``decimals`` allows more (002 material-error
                count; hours worked)
``text``        free text, optional or required, with an optional word range
``preference``  a paired judgement per case: A>B, B>A or Tied (000)

Scopes
------
``response``  once per response: per label in a paired design, per row in a single one
``case``      once per case (paired direction, per-case notes)
``study``     once per workbook, in the pack's Submission area (hours worked, acknowledgment,
              blinding concerns, methodology notes)

Which answer cells are *required* is defined once, by :func:`answer_required`: the
pack's progress line counts those cells and collect counts the same ones.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

KINDS = (
    "count",
    "checklist",
    "scale",
    "categorical",
    "binary",
    "flag",
    "number",
    "text",
    "preference",
)
SCOPES = ("response", "case", "study")
LEVELS = ("nominal", "ordinal", "interval", "ratio")
CONFIDENCE_LEVELS = ("Low", "Medium", "High")
YES_NO = ("Yes", "No")
PREFERENCE_CHOICES = ("A>B", "B>A", "Tied")


@dataclass(frozen=True)
class Bin:
    """A count range [low, high] (high None means open-ended) worth ``points``."""

    low: int
    high: int | None
    points: float

    def contains(self, count: int) -> bool:
        """Whether ``count`` falls in this bin."""
        return count >= self.low and (self.high is None or count <= self.high)

    def describe(self) -> str:
        """The bin as a rater reads it, e.g. ``2-3 -> 2`` or ``6+ -> 5``."""
        if self.high is None:
            span = f"{self.low}+"
        elif self.high == self.low:
            span = f"{self.low}"
        else:
            span = f"{self.low}-{self.high}"
        return f"{span} -> {_fmt_number(self.points)}"


@dataclass(frozen=True)
class Dimension:
    """One thing a rater judges.

    Attributes
    ----------
    id : str
        Stable identifier (snake_case), used in the ratings table.
    label : str
        What the rater reads as the column heading.
    kind : str
        One of :data:`KINDS`.
    scope : str
        One of :data:`SCOPES`.
    help : str
        Guidance shown as the cell's input message and on the Instructions sheet.
    required : bool
        Whether a blank answer is an error.
    confidence : bool
        Whether a Low/Medium/High confidence is asked beside the answer.
    level : str
        Level of measurement used in the analysis.
    choices : tuple of str
        Allowed labels (categorical, binary, flag, preference).
    na_choices : tuple of str
        Labels that mean "not applicable": stored, but missing for the analysis.
    minimum, maximum : int or None
        Whole-number bounds (count, scale, number).
    labels : dict
        Scale value -> label or anchor text.
    bins : tuple of Bin
        Count -> points (count).
    questions : tuple of str
        Checklist questions (checklist).
    min_words, max_words : int or None
        Word range (text).
    decimals : int
        Digits allowed after the decimal point (number; 0 = whole numbers only).
    blank_means : str or None
        For binary: the value a blank cell stands for (e.g. ``"No"``).
    note : str or None
        For a flag: the id of the text dimension that must hold a note whenever the
        flag is marked (003: ``gold_dispute = Y`` needs one line in ``rater_note``).
    consent : str or None
        For a binary study question asking the rater's consent (001: "I consent to my
        marks being analysed and released"): the choice that gives it. Any other answer,
        or none, keeps the rater's file out of the ratings (``consent-refused``).
    level_written : bool
        Whether the spec wrote ``level`` (False: the kind's default was taken). It does
        not change the analysis; the spec hash reads it
        (:func:`~sheetflow.spec.model.canonical_spec`).
    """

    id: str
    label: str
    kind: str
    scope: str = "response"
    help: str = ""
    required: bool = True
    confidence: bool = False
    level: str = "nominal"
    choices: tuple[str, ...] = ()
    na_choices: tuple[str, ...] = ()
    minimum: int | None = None
    maximum: int | None = None
    labels: dict[int, str] = field(default_factory=dict)
    bins: tuple[Bin, ...] = ()
    questions: tuple[str, ...] = ()
    min_words: int | None = None
    max_words: int | None = None
    blank_means: str | None = None
    note: str | None = None
    decimals: int = 0
    consent: str | None = None
    level_written: bool = field(default=True, compare=False, repr=False)

    @property
    def points_range(self) -> tuple[float, float] | None:
        """The smallest and largest points this dimension can give, if it scores."""
        if self.kind == "count":
            pts = [b.points for b in self.bins]
            return (min(pts), max(pts)) if pts else None
        if self.kind == "checklist":
            return (0.0, float(len(self.questions)))
        if self.kind in ("scale", "number"):
            if self.minimum is None or self.maximum is None:
                return None  # a broken spec, already reported by the loader
            return (float(self.minimum), float(self.maximum))
        return None

    @property
    def scores(self) -> bool:
        """Whether the dimension yields a number that can enter a total."""
        return self.points_range is not None

    def points_for_count(self, count: int) -> float:
        """The points a count earns under this dimension's bins."""
        for b in self.bins:
            if b.contains(count):
                return b.points
        raise ValueError(f"count {count} is outside the bins of {self.id!r}")

    def value_domain(self) -> list[Any]:
        """Every analysable value, in order (for alpha's ``value_domain``).

        Counts analyse their points; checklists their sum; categorical, binary and
        preference dimensions their labels without the N/A ones.
        """
        if self.kind == "count":
            return sorted({b.points for b in self.bins})
        if self.kind == "checklist":
            return list(range(len(self.questions) + 1))
        if self.kind in ("scale", "number") and not self.decimals \
                and self.maximum is not None:  # a number without a cap: values as observed
            return list(range(self.minimum, self.maximum + 1))  # type: ignore[arg-type]
        if self.kind in ("categorical", "binary", "preference", "flag"):
            return [c for c in self.choices if c not in self.na_choices]
        return []

    def entry_choices(self) -> tuple[str, ...]:
        """What the dropdown offers (labels, with N/A ones last)."""
        return self.choices


def answer_required(dim: Dimension | None, part: str) -> bool:
    """Whether one answer cell must be filled: the single definition of "required".

    The pack's progress line counts these cells (and only these), and collect counts
    the same cells in its ``answered``/``required`` completeness, so the two always
    agree on N.

    Parameters
    ----------
    dim : Dimension or None
        The cell's dimension; None for a batch's start or end time (always required).
    part : str
        ``value``, ``q1``.. (checklist questions) or ``confidence``, as in
        :func:`sheetflow.workbook.layout.iter_answer_cells`.

    Returns
    -------
    bool
        False for optional dimensions and for a binary whose blank stands for an
        answer (``blank_means``: a blank cell *is* an answer); a confidence cell is
        required when its dimension is required.
    """
    if dim is None:
        return True
    if not dim.required or (dim.kind == "binary" and dim.blank_means):
        return False
    return part != "confidence" or dim.confidence


@dataclass(frozen=True)
class Total:
    """A sum or mean of scoring dimensions, recomputed by sheetflow (never read)."""

    id: str
    label: str
    of: tuple[str, ...]
    method: str = "sum"
    minimum: float | None = None
    maximum: float | None = None
    level: str = "interval"


@dataclass(frozen=True)
class Rubric:
    """The dimensions and totals of a study, in the order raters see them."""

    dimensions: tuple[Dimension, ...]
    totals: tuple[Total, ...] = ()

    def by_scope(self, scope: str) -> tuple[Dimension, ...]:
        """The dimensions answered once per ``scope``."""
        return tuple(d for d in self.dimensions if d.scope == scope)

    def dimension(self, dim_id: str) -> Dimension:
        """The dimension with this id (KeyError if none)."""
        for d in self.dimensions:
            if d.id == dim_id:
                return d
        raise KeyError(dim_id)

    @property
    def ids(self) -> tuple[str, ...]:
        """Dimension ids in order."""
        return tuple(d.id for d in self.dimensions)

    def names(self) -> dict[str, str]:
        """Each dimension's and total's id -> the name a report gives it: its label with
        the id the spec and the data use, ``"Accuracy (accuracy)"`` (the label alone
        when it is the id, the id alone when there is no label)."""
        return {item.id: item.id if item.label in ("", item.id) else
                f"{item.label} ({item.id})" for item in (*self.dimensions, *self.totals)}

    def named(self, key: str) -> str:
        """:meth:`names` of a dimension or total; any other ``key`` as it is."""
        return self.names().get(key, key)


def optional_in_totals(rubric: Rubric, where: str = "") -> list[str]:
    """A warning per total that sums an optional dimension: a response where it is left
    blank has no total, and every figure on the total leaves that response out."""
    out = []
    for total in rubric.totals:
        optional = [d for d in total.of if not rubric.dimension(d).required]
        if optional:
            out.append(f"{where}total {total.id!r} includes {', '.join(map(repr, optional))}, "
                       "which raters may leave blank (required = false): a response left "
                       "without it has no total, and the figures on the total leave it "
                       "out; make it required or leave it out of the total")
    return out


def total_bounds(total: Total, rubric: Rubric) -> tuple[float, float]:
    """The range a total can take given its dimensions' point ranges."""
    lows, highs = [], []
    for dim_id in total.of:
        lo, hi = rubric.dimension(dim_id).points_range  # type: ignore[misc]
        lows.append(lo)
        highs.append(hi)
    if total.method == "mean":
        return (sum(lows) / len(lows), sum(highs) / len(highs))
    return (sum(lows), sum(highs))


def total_range(total: Total, rubric: Rubric) -> tuple[float, float]:
    """The range a total is read against: its declared ``min``/``max`` where given, else
    :func:`total_bounds` (the checks that scale by the range use this one rule)."""
    lo, hi = total_bounds(total, rubric)
    return (total.minimum if total.minimum is not None else lo,
            total.maximum if total.maximum is not None else hi)


def _fmt_number(x: float) -> str:
    """A number without a trailing ``.0`` when it is whole."""
    if isinstance(x, float) and math.isfinite(x) and x.is_integer():
        return str(int(x))
    return str(x)
