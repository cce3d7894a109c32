"""Loading the rubric: dimensions of each kind and their totals."""

from __future__ import annotations

import itertools
import math
import unicodedata
from typing import Any

from .base import LoaderBase
from .rubric import (
    KINDS,
    LEVELS,
    PREFERENCE_CHOICES,
    SCOPES,
    YES_NO,
    Bin,
    Dimension,
    Rubric,
    Total,
    total_bounds,
)
from .spelling import unknown_value
from .tables import as_int, control_char

LABEL_KINDS = ("categorical", "binary", "flag", "preference")
"""Kinds whose answers are labels, not numbers."""


class RubricLoader(LoaderBase):
    """The ``[[dimensions]]`` and ``[[totals]]`` of a spec."""

    def _rubric(self, doc: dict) -> Rubric:
        raw = doc.get("dimensions")
        if not isinstance(raw, list) or not raw:
            self.fail("no [[dimensions]]; a rubric needs at least one dimension", "[[dimensions]]")
            return Rubric(())
        dims: list[Dimension] = []
        seen: set[str] = set()
        for i, entry in enumerate(raw, 1):
            where = f"[[dimensions]] #{i}"
            if not isinstance(entry, dict):
                self.fail("each dimension must be a table", where)
                continue
            reported = len(self.problems)
            dim = self._dimension(entry, where)
            if dim is None:
                self.broken.add(str(entry.get("id", "")))
                continue
            if len(self.problems) > reported:
                self.doubtful.add(dim.id)
            if dim.id in seen:
                self.fail(f"duplicate dimension id {dim.id!r}; each id must be unique",
                          f"[[dimensions]] id={dim.id}")
            seen.add(dim.id)
            dims.append(dim)
        rubric = Rubric(tuple(dims))
        self._flag_notes(rubric)
        totals = self._totals(doc.get("totals", []), rubric)
        return Rubric(tuple(dims), totals)

    _DIM_KEYS = frozenset({
        "id", "label", "kind", "scope", "help", "required", "confidence", "level",
        "choices", "na", "ordered", "min", "max", "labels", "anchors", "bins",
        "questions", "min_words", "max_words", "blank_means", "mark", "note", "decimals",
        "consent",
    })

    def _dimension(self, e: dict, where: str) -> Dimension | None:
        dim_id = self._str(e, "id", where, required=True, ident=True)
        if dim_id:
            where = f"[[dimensions]] id={dim_id}"
        self._unknown_keys(e, self._DIM_KEYS, where)
        kind = e.get("kind")
        if kind not in KINDS:
            self.fail(unknown_value(kind, KINDS, "dimension kind"), where)
            return None
        scope = e.get("scope", "case" if kind == "preference" else "response")
        if scope not in SCOPES:
            self.fail(unknown_value(scope, SCOPES, "scope"), where)
        builder = getattr(self, f"_dim_{kind}")
        extra = builder(e, where)
        if "decimals" in e and kind != "number":
            self.fail("'decimals' applies to a number dimension only", where)
        if "consent" in e:
            self._consent(e, kind, scope, extra, where)
        level = e.get("level", extra.pop("_level", "nominal"))
        if kind != "text" and level not in LEVELS:
            self.fail(unknown_value(level, LEVELS, "level"), where)
        elif kind in LABEL_KINDS and level in ("interval", "ratio"):
            # alpha at these levels computes with differences of numbers: on labels
            # it was "could not be computed" at analyze, after the spec was frozen
            self.fail_to_generate(f"level {level!r} needs numbers, and a {kind} answer is a "
                                  "label; use 'nominal', or 'ordinal' for labels in order",
                                  where)
        elif level == "ratio" and (extra.get("minimum") or 0) < 0:
            self._negative_ratio(f"'min' is {extra['minimum']}", where)
        default_required = kind not in ("flag", "text") and extra.get("blank_means") is None
        if isinstance(e.get("label"), str) and not e["label"].strip():
            self.fail_to_generate("'label' is blank, so the card shows no question; give "
                                  "the text raters see, or leave 'label' out to show the id",
                                  where)
        dim = Dimension(
            id=dim_id,
            label=self._str(e, "label", where, default=dim_id),
            kind=kind,
            scope=scope,
            help=self._str(e, "help", where),
            required=self._bool(e, "required", where, default_required),
            confidence=self._bool(e, "confidence", where, False),
            level=level,
            level_written="level" in e,
            **extra,
        )
        self._no_control_chars(dim, where)
        return dim

    def _no_control_chars(self, dim: Dimension, where: str) -> None:
        """The texts raters see hold no control character (a tab or line break aside),
        as the title may hold none: it reached the packs unseen."""
        texts = [("label", dim.label), ("help", dim.help),
                 *(("choices", c) for c in dim.choices),
                 *(("labels", t) for t in dim.labels.values()),
                 *(("questions", q) for q in dim.questions)]
        for key, text in texts:
            bad = control_char(text, "\t\n\r")  # a help of several lines may be CRLF
            if bad:
                self.fail_to_generate(f"'{key}' holds {bad}, a control character: take it "
                                      f"out of {text[:40]!r}", where)

    def _negative_ratio(self, lowest: str, where: str) -> None:
        """Refuse the ratio level on answers that may be negative.

        Alpha's ratio metric ((c - k)/(c + k))^2 measures distance from a true zero:
        on values of both signs it calls -3 and 3 no disagreement at all.
        """
        self.fail_to_generate(f"level 'ratio' needs values of 0 or more (a true zero), but "
                              f"{lowest}; use level = \"interval\" for values that can be "
                              "negative", where)

    def _choices(self, e: dict, where: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        choices = self._str_list(e, "choices", where) if "choices" in e else default
        if not choices:
            self.fail("'choices' must list at least one label", where)
        for c in choices:
            if not c.strip():
                self.fail("a choice label is empty; every choice needs visible text", where)
        dupes = {c for c in choices if choices.count(c) > 1}
        if dupes:
            self.fail(f"choice labels repeat: {sorted(dupes)}", where)
        else:
            self._alike(choices, "choice labels", where)
        formulas = [c for c in choices if c.lstrip().startswith("=")]
        if formulas:  # a spreadsheet takes a typed '=...' for a formula, never a label
            self.fail_to_generate(f"choice label {formulas[0]!r} starts with '='; a "
                                  "spreadsheet reads it as a formula: reword it", where)
        if len(",".join(choices)) > 255:
            self.fail("the choices add up to more than 255 characters, Excel's limit for a "
                      "dropdown list; shorten the labels", where)
        return choices

    def _alike(self, texts: tuple[str, ...], what: str, where: str) -> None:
        """Texts that differ only in case, width or spacing: collect matches an answer
        to a label that loosely (``correct`` for ``Correct``), so it could match both
        and took neither; a rater cannot tell them apart either."""
        seen: dict[str, str] = {}
        for text in texts:
            key = _loose(text)
            if key not in seen:
                seen[key] = text
                continue
            other = seen[key]
            how = f"repeat {text!r}; give each once" if other == text else \
                f"{other!r} and {text!r} differ only in case or spacing; make them differ " \
                "in words"
            self.fail_to_generate(f"{what} {how}", where)
            return

    def _dim_count(self, e: dict, where: str) -> dict:
        raw = e.get("bins")
        if not isinstance(raw, list) or not raw:
            self.fail("a count needs 'bins' such as [{min=0, max=1, points=0}, {min=2, points=2}]",
                      where)
            return {"_level": "ordinal"}
        bins = []
        for b in raw:
            if not isinstance(b, dict) or "min" not in b or "points" not in b:
                self.fail("each bin needs 'min' and 'points' (and 'max' except the last)", where)
                return {"_level": "ordinal"}
            if not _whole(b["min"]) or not (b.get("max") is None or _whole(b["max"])) \
                    or not _number(b["points"]):
                self.fail("a bin's 'min' and 'max' are whole numbers and its 'points' a "
                          f"number, not {b!r}", where)
                return {"_level": "ordinal"}
            bins.append(Bin(int(b["min"]), None if b.get("max") is None else int(b["max"]),
                            float(b["points"])))
        bins.sort(key=lambda b: b.low)
        self._check_bins(bins, where)
        maximum = bins[-1].high
        return {"bins": tuple(bins), "minimum": 0, "maximum": maximum, "_level": "ordinal"}

    def _check_bins(self, bins: list[Bin], where: str) -> None:
        if bins[0].low != 0:
            self.fail(f"bins start at {bins[0].low}; the first must start at 0", where)
        for prev, cur in itertools.pairwise(bins):
            if prev.high is None:
                self.fail(f"bin {prev.describe()} is open-ended but another bin follows it",
                          where)
                return
            if cur.low <= prev.high:
                self.fail(f"bins {prev.describe()} and {cur.describe()} overlap; each count "
                          "must fall in exactly one bin", where)
            elif cur.low > prev.high + 1:
                self.fail(f"bins leave a gap between {prev.high} and {cur.low}; each count "
                          "must fall in exactly one bin", where)
        for b in bins:
            if b.high is not None and b.high < b.low:
                self.fail(f"bin {b.describe()} has max below min", where)

    def _dim_checklist(self, e: dict, where: str) -> dict:
        questions = self._str_list(e, "questions", where)
        if not questions:
            self.fail("a checklist needs 'questions' (a list of yes/no questions)", where)
        for q in questions:
            if not q.strip():
                self.fail("a checklist question is empty", where)
        self._alike(questions, "questions", where)  # a repeat would count its point twice
        return {"questions": questions, "choices": YES_NO, "_level": "ordinal"}

    def _dim_scale(self, e: dict, where: str) -> dict:
        lo = self._int(e, "min", where)
        hi = self._int(e, "max", where)
        if lo is None or hi is None:
            self.fail("a scale needs whole-number 'min' and 'max'", where)
            return {}
        if lo > hi:
            self.fail(f"scale min {lo} is above max {hi}", where)
            return {"minimum": lo, "maximum": hi}
        labels = self._scale_labels(e, where, lo, hi)
        na = self._na_choices(e, where, lo, hi)
        return {"minimum": lo, "maximum": hi, "labels": labels, "na_choices": na,
                "choices": na, "_level": "ordinal"}

    def _scale_labels(self, e: dict, where: str, lo: int, hi: int) -> dict[int, str]:
        raw = e.get("labels", e.get("anchors", {}))
        if not isinstance(raw, dict):
            self.fail("'labels' must be a table such as {1 = \"Poor\", 5 = \"Excellent\"}", where)
            return {}
        out: dict[int, str] = {}
        for k, v in raw.items():
            try:
                value = int(k)
            except ValueError:
                self.fail(f"label key {k!r} is not a whole number on the scale", where)
                continue
            if not lo <= value <= hi:
                self.fail(f"label for {value} is outside the scale {lo}-{hi}", where)
            if not isinstance(v, str) or not v.strip():
                self.fail(f"the label for {value} is empty", where)
                continue
            out[value] = v
        return dict(sorted(out.items()))

    def _na_choices(self, e: dict, where: str, lo: int | None, hi: int | None) -> tuple[str, ...]:
        raw = e.get("na", [])
        if not isinstance(raw, list):
            raw = [raw]
        out = []
        for v in raw:
            if isinstance(v, bool) or not isinstance(v, (str, int)):
                # true became the label "True", a table its Python text, in silence
                self.fail_to_generate(f"'na' holds {v!r}; give a label or a list of "
                                      "labels, e.g. na = [\"N/A\"]", where)
                continue
            text = str(v).strip()
            if not text:
                self.fail("an N/A label is empty", where)
                continue
            if lo is not None and hi is not None and as_int(text) is not None \
                    and lo <= as_int(text) <= hi:  # type: ignore[operator]
                self.fail(f"N/A value {text!r} is also a value of the scale {lo}-{hi}; "
                          "use a label such as \"N/A\"", where)
            out.append(text)
        return tuple(out)

    def _dim_categorical(self, e: dict, where: str) -> dict:
        choices = self._choices(e, where)
        na = self._na_choices(e, where, None, None)
        for v in na:
            if v not in choices:
                self.fail(f"N/A label {v!r} is not one of the choices {list(choices)}", where)
        ordered = self._bool(e, "ordered", where, False)
        return {"choices": choices, "na_choices": na,
                "_level": "ordinal" if ordered else "nominal"}

    def _dim_binary(self, e: dict, where: str) -> dict:
        choices = self._choices(e, where, YES_NO)
        if len(choices) != 2:
            self.fail(f"a binary dimension has exactly two choices, not {len(choices)}", where)
        blank = e.get("blank_means")
        if blank is not None and blank not in choices:
            self.fail(f"blank_means {blank!r} must be one of {list(choices)}", where)
        return {"choices": choices, "blank_means": blank}

    def _dim_flag(self, e: dict, where: str) -> dict:
        mark = e.get("mark", "Y")
        if not isinstance(mark, str) or not mark.strip():
            self.fail("a flag needs a non-empty 'mark' such as \"Y\"", where)
            mark = "Y"
        note = e.get("note")
        if note is not None and (not isinstance(note, str) or not note.strip()):
            self.fail("'note' names the text dimension that must hold a note when the flag "
                      "is marked, e.g. note = \"rater_note\"", where)
            note = None
        return {"choices": (mark,), "note": note}

    def _consent(self, e: dict, kind: str, scope: str, extra: dict, where: str) -> None:
        """``consent`` names the choice of a binary study question that gives consent;
        the question is then required (a blank is no consent)."""
        given = e["consent"]
        choices = extra.get("choices", ())
        if kind != "binary" or scope != "study":
            self.fail("'consent' applies to a binary question of scope \"study\" only",
                      where)
        elif not isinstance(given, str) or given not in choices:
            self.fail(f"consent {given!r} must be the choice that gives consent, one of "
                      f"{list(choices)}", where)
        elif extra.get("blank_means") is not None or e.get("required") is False:
            self.fail("a consent question must be answered: leave out 'blank_means' and "
                      "'required = false' (a blank is no consent)", where)
        else:
            extra["consent"] = given

    def _dim_number(self, e: dict, where: str) -> dict:
        lo = self._int(e, "min", where, default=0)
        hi = self._int(e, "max", where)
        decimals = self._int(e, "decimals", where, default=0, minimum=0)
        if hi is None and ("max" in e or decimals):
            # no 'max' is a whole number without a cap (a count of errors the protocol
            # does not bound); a decimal number keeps its bounds
            self.fail("a number needs a whole-number 'max' (and 'min', default 0); leave "
                      "'max' out only for a whole number with no upper limit", where)
            return {"minimum": lo, "maximum": lo, "_level": _number_level(lo)}
        if lo is not None and hi is not None and lo > hi:
            self.fail(f"number min {lo} is above max {hi}", where)
        if decimals is not None and decimals > 4:
            self.fail(f"decimals {decimals} is more than 4; allow at most 4 digits after the "
                      "point", where)
        return {"minimum": lo, "maximum": hi, "decimals": decimals or 0,
                "_level": _number_level(lo)}

    def _dim_text(self, e: dict, where: str) -> dict:
        lo = self._int(e, "min_words", where, minimum=0)
        hi = self._int(e, "max_words", where, minimum=1)
        if lo is not None and hi is not None and lo > hi:
            self.fail(f"min_words {lo} is above max_words {hi}", where)
        return {"min_words": lo, "max_words": hi, "_level": "nominal"}

    def _dim_preference(self, e: dict, where: str) -> dict:
        choices = self._choices(e, where, PREFERENCE_CHOICES)
        if len(choices) != 3:
            self.fail("a preference has three choices: A wins, B wins, tied (in that order)",
                      where)
        if e.get("scope", "case") != "case":
            self.fail("a preference is judged once per case: scope must be \"case\"", where)
        return {"choices": choices}

    def _flag_notes(self, rubric: Rubric) -> None:
        """A flag's ``note`` must name a text dimension of the same scope."""
        for dim in rubric.dimensions:
            if dim.kind != "flag" or dim.note is None or dim.note in self.broken:
                continue
            where = f"[[dimensions]] id={dim.id}"
            target = next((d for d in rubric.dimensions if d.id == dim.note), None)
            if target is None or target.kind != "text":
                self.fail(f"note {dim.note!r} must name a text dimension of this rubric",
                          where)
            elif target.scope != dim.scope:
                self.fail(f"note {dim.note!r} is asked per {target.scope}, the flag per "
                          f"{dim.scope}; give them the same scope", where)

    def _totals(self, raw: Any, rubric: Rubric) -> tuple[Total, ...]:
        if not isinstance(raw, list):
            self.fail("'totals' must be an array of tables ([[totals]])", "[[totals]]")
            return ()
        out = []
        for i, t in enumerate(raw, 1):
            if not isinstance(t, dict):
                self.fail("each total must be a table ([[totals]] with id, of, method)",
                          f"[[totals]] #{i}")
                continue
            total = self._total(t, f"[[totals]] #{i}", rubric)
            if total.id and any(o.id == total.id for o in out):
                # ratings, summaries and the analysis key totals by id: one hid the other
                self.fail_to_generate(f"duplicate total id {total.id!r}; each total needs "
                                      "its own id", f"[[totals]] id={total.id}")
            out.append(total)
        return tuple(out)

    def _total(self, t: dict, where: str, rubric: Rubric) -> Total:
        self._unknown_keys(t, {"id", "label", "of", "method", "min", "max", "level"}, where)
        tid = self._str(t, "id", where, required=True, ident=True)
        if tid:
            where = f"[[totals]] id={tid}"
        of = self._str_list(t, "of", where)
        method = t.get("method", "sum")
        if method not in ("sum", "mean"):
            self.fail(unknown_value(method, ("sum", "mean"), "total method"), where)
        twice = sorted({d for d in of if of.count(d) > 1})
        if twice:
            self.fail_to_generate(f"total {tid!r} names {twice[0]!r} twice in 'of', which "
                                  "would count its points twice; name each dimension once",
                                  where)
        for dim_id in of:
            if dim_id in self.broken:
                continue
            if dim_id not in rubric.ids:
                self.fail(f"total {tid!r} names unknown dimension {dim_id!r}", where)
            elif rubric.dimension(dim_id).kind == "number" and \
                    rubric.dimension(dim_id).maximum is None:
                # it scores its value, but a total is read against the range of its parts
                self.fail(f"total {tid!r} includes {dim_id!r}, a number without a 'max': a "
                          "total needs the range of each part; give it a 'max' or leave it "
                          "out of the total", where)
            elif not rubric.dimension(dim_id).scores:
                self.fail(f"total {tid!r} includes {dim_id!r}, which gives no points", where)
        if tid in rubric.ids:
            self.fail(f"total id {tid!r} is also a dimension id", where)
        level = t.get("level", "interval")
        if level not in LEVELS:
            self.fail(unknown_value(level, LEVELS, "level"), where)
        total = Total(tid, str(t.get("label", tid)), of, method,
                      self._bound(t, "min", where), self._bound(t, "max", where), level)
        if not of:
            self.fail(f"total {tid!r} needs 'of', the dimensions it adds up", where)
        elif method in ("sum", "mean") and not self.doubtful.intersection(of) and \
                all(d in rubric.ids and rubric.dimension(d).scores for d in of):
            self._declared_range(total, rubric, where)
        return total

    def _bound(self, t: dict, key: str, where: str) -> float | None:
        """A total's declared ``min`` or ``max``: a number, or None when not given."""
        value = t.get(key)
        if value is not None and not _number(value):
            self.fail(f"'{key}' must be a number, not {value!r}", where)
            return None
        return value

    def _declared_range(self, total: Total, rubric: Rubric, where: str) -> None:
        """A declared ``min``/``max`` must be the range the dimensions allow.

        Rule: each bound given must equal the bound :func:`total_bounds` computes from
        the dimensions (the sum, or mean, of their lowest and highest points). sheetflow
        recomputes a total from the answers and never caps or rescales it, and the
        declared range is the scale of the rater self-checks (a direction counts as
        checked when the totals differ by a share of max - min). So a wider range makes
        those checks blind to real differences, and a narrower one is not a cap but a
        range real totals fall outside: neither can be meant, and both are errors. A
        bound left out is taken from the dimensions.
        """
        lo, hi = total_bounds(total, rubric)
        if total.level == "ratio" and lo < 0:
            self._negative_ratio(f"the total can be as low as {_show(lo)}", where)
        declared = (total.minimum, total.maximum)
        if all(v is None or math.isclose(v, want, rel_tol=1e-6, abs_tol=1e-6)
               for v, want in zip(declared, (lo, hi), strict=True)):
            return
        said = ", ".join(f"{key} = {_show(v)}" for key, v in zip(("min", "max"), declared,
                                                                   strict=True) if v is not None)
        self.fail_to_generate(
            f"total {total.id!r} declares {said}, but its dimensions give totals from "
            f"{_show(lo)} to {_show(hi)} ({total.method} of {', '.join(total.of)}); a total "
            f"is never capped, so declare min = {_show(lo)}, max = {_show(hi)}", where)



def _show(value: float) -> str:
    """A bound as a spec would write it: ``20``, ``3.333333``."""
    return f"{round(value, 6):f}".rstrip("0").rstrip(".")


def _number_level(minimum: int | None) -> str:
    """A number's default level: ratio (counts, hours: a true zero), interval when it
    may be negative, where the ratio metric has no meaning."""
    return "interval" if minimum is not None and minimum < 0 else "ratio"


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _loose(text: str) -> str:
    """``text`` as collect compares answers with labels: case, width and spacing aside."""
    normal = unicodedata.normalize("NFKC", text)
    return " ".join(normal.split()).casefold()
