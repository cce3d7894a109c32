"""Loading the design (arms, order, repeats, second-rater subset) and the analysis plan."""

from __future__ import annotations

import math
from typing import Any

from .base import LoaderBase
from .model import (
    ANALYSES,
    DESIGNS,
    ICC_FORMS,
    MAX_RESAMPLES,
    MIN_RESAMPLES,
    Arm,
    Band,
    Design,
    Plan,
    Repeats,
    SecondRater,
)
from .raters import protocol_number, unsafe_char
from .spelling import unknown_value

SCATTERING_PROTOCOLS = {
    "003": "protocol 003 tells raters that the two assistants' answers to a question "
           "\"are deliberately scattered\"",
}
"""Protocols whose text requires answers sharing a question to be scattered."""


class DesignLoader(LoaderBase):
    """The ``[design]`` and ``[analysis]`` tables of a spec."""

    _DESIGN_KEYS = frozenset({
        "kind", "seed", "arms", "labels", "response_column", "arm_column", "shuffle",
        "batch_size", "repeats", "second_rater", "scatter_column",
    })

    def _design(self, t: dict) -> Design:
        where = "[design]"
        self._unknown_keys(t, self._DESIGN_KEYS, where)
        kind = t.get("kind")
        if "kind" not in t:
            self.fail("'kind' is required; give kind = \"paired\" or kind = \"single\"",
                      where)
            kind = "unknown"
        elif kind not in DESIGNS:
            self.fail(unknown_value(kind, DESIGNS, "design"), where)
            kind = "unknown"  # checks that depend on the design kind are skipped
        # numpy's generators (the blinding checks, the bootstrap) refuse a seed below 0
        seed = self._required_int(t, "seed", where,
                                  "every random choice comes from a recorded seed", minimum=0)
        arms = self._arms(t, kind)
        labels = self._labels(t, kind, where)
        response_column = self._str(t, "response_column", where) or None
        arm_column = self._str(t, "arm_column", where) or None
        if kind == "single" and not (response_column and arm_column):
            self.fail("a single design needs 'response_column' and 'arm_column' (items-file "
                      "columns holding each row's response and its arm)", where)
        return Design(kind, seed, arms, labels, response_column, arm_column,
                      shuffle=self._bool(t, "shuffle", where, True),
                      batch_size=self._int(t, "batch_size", where, minimum=1),
                      repeats=self._repeats(t.get("repeats")),
                      second_rater=self._second_rater(t.get("second_rater")),
                      scatter_column=self._str(t, "scatter_column", where) or None)

    def _scatter_unshuffled(self, protocol: object, design: Design) -> None:
        """``scatter_column`` scatters a shuffled order only: with ``shuffle = false``
        the cards keep the items file's order and the column does nothing, which the
        spec would not show. Refused, so that a spec never asks for what its packs do
        not do; a protocol whose text promises scattering
        (:data:`SCATTERING_PROTOCOLS`) is named, as its raters would be told something
        untrue."""
        column = design.scatter_column
        if not column or design.shuffle:
            return
        why = SCATTERING_PROTOCOLS.get(protocol_number(protocol))
        self.fail_to_generate(
            f"scatter_column {column!r} reorders only a shuffled pack, and shuffle = false "
            "keeps the items file's order, so nothing would be scattered"
            + (f", but {why}; set shuffle = true" if why else
               "; set shuffle = true, or remove scatter_column"), "[design] scatter_column")

    def _labels(self, t: dict, kind: str, where: str) -> tuple[str, ...]:
        """The two neutral labels of a paired design (``A``, ``B`` by default).

        A preference answer is read as ``<label> > <label>`` (the winner is the text
        before ``>``), so a label holding ``>`` is read wrongly, and labels that are
        blank or differ only in case cannot be told apart by a rater.
        """
        labels = self._str_list(t, "labels", where) if "labels" in t else ("A", "B")
        if kind == "paired" and (len(labels) != 2 or labels[0] == labels[1]):
            self.fail("a paired design needs two different labels, e.g. [\"A\", \"B\"]", where)
            return labels
        for label in labels:
            problem = label_problem(label)
            if problem:
                self.fail_to_generate(f"label {label!r} {problem}; a label is short visible "
                                      "text without '>' or ',', e.g. \"A\"", where)
        if len(labels) == 2 and labels[0].strip().casefold() == labels[1].strip().casefold() \
                and labels[0] != labels[1]:
            self.fail_to_generate(f"labels {list(labels)} differ only in case or spaces; a "
                                  "rater must tell them apart", where)
        return labels

    def _arms(self, t: dict, kind: str) -> tuple[Arm, ...]:
        raw = t.get("arms", [])
        where = "[design] arms"
        if not isinstance(raw, list) or not raw:
            self.fail("'arms' must list the systems or conditions being compared", where)
            return ()
        arms = []
        for a in raw:
            if not isinstance(a, dict) or not a.get("id"):
                self.fail("each arm is a table with an 'id' (and 'column' in a paired design)",
                          where)
                continue
            column = a.get("column")
            if column is not None and not isinstance(column, str):
                self.fail(f"arm {a['id']!r}: 'column' must be text, not {column!r}", where)
                column = None
            arms.append(Arm(str(a["id"]), column))
        ids = [a.id for a in arms]
        dupes = sorted({i for i in ids if ids.count(i) > 1})
        if dupes:
            self.fail(f"duplicate arm ids {dupes}", where)
        if kind == "paired":
            if len(arms) != 2:
                self.fail(f"a paired design compares exactly two arms, not {len(arms)}", where)
            for a in arms:
                if not a.column:
                    self.fail(f"arm {a.id!r} needs 'column': the items column with its response",
                              where)
        return tuple(arms)

    def _repeats(self, raw: Any) -> Repeats | None:
        where = "[design.repeats]"
        if self._subtable(raw, {"count", "seed"}, where, "'count' and 'seed'") is None:
            return None
        count = self._int(raw, "count", where, minimum=1)
        seed = self._int(raw, "seed", where)
        if count is None or seed is None:
            self.fail("needs whole-number 'count' and 'seed'", where)
            return None
        return Repeats(count, seed)

    def _second_rater(self, raw: Any) -> SecondRater | None:
        where = "[design.second_rater]"
        if self._subtable(raw, {"fraction", "strata", "method", "select_at"}, where,
                          "'fraction' and 'strata'") is None:
            return None
        fraction = raw.get("fraction")
        if not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
            self.fail(f"'fraction' must be a number in (0, 1], not {fraction!r}", where)
            fraction = 1.0
        method = raw.get("method", "sha256_rank")
        if method != "sha256_rank":
            self.fail(unknown_value(method, ("sha256_rank",), "method"), where)
        select_at = raw.get("select_at", "generate")
        if select_at not in ("generate", "lock"):
            self.fail(f"select_at {select_at!r}: 'lock' draws the subset from completed items "
                      "at data lock (sheetflow lock), 'generate' from all items", where)
        return SecondRater(float(fraction), self._str_list(raw, "strata", where), method,
                           select_at if select_at in ("generate", "lock") else "generate")

    _PLAN_KEYS = frozenset({"run", "seed", "n_boot", "bands", "targets", "icc_form", "params"})

    def _plan(self, t: dict) -> Plan:
        where = "[analysis]"
        self._unknown_keys(t, self._PLAN_KEYS, where)
        run = self._str_list(t, "run", where)
        for name in run:
            if name not in ANALYSES:
                self.fail(unknown_value(name, ANALYSES, "analysis"), where)
        seed = self._required_int(t, "seed", where,
                                  "bootstrap and permutation tests use it", minimum=0)
        bands = []
        raw_bands = t.get("bands", [])
        for b in raw_bands if isinstance(raw_bands, list) else [None]:
            if not isinstance(b, dict) or "min" not in b or "label" not in b \
                    or isinstance(b["min"], bool) or not isinstance(b["min"], (int, float)):
                self.fail("each band is a table {min = 0.8, label = \"...\"}", where)
                continue
            bands.append(Band(float(b["min"]), str(b["label"])))
        self._band_problems(raw_bands if isinstance(raw_bands, list) else [], where)
        bands.sort(key=lambda b: -b.minimum)
        targets = t.get("targets", {})
        if not isinstance(targets, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in targets.values()
        ):
            self.fail("'targets' must be a table of numbers", where)
            targets = {}
        odd = [k for k, v in targets.items() if not math.isfinite(v)]
        if odd:  # nan or inf: "alpha >= nan" is no rule, and never met
            self.fail(f"'targets' must be finite numbers; {', '.join(map(str, odd))} is "
                      f"{targets[odd[0]]}", where)
            targets = {}
        icc_form = t.get("icc_form", "ICC2")
        if icc_form not in ICC_FORMS:
            self.fail(unknown_value(icc_form, ICC_FORMS, "icc_form"), where)
        params = t.get("params", {})
        if not isinstance(params, dict):
            self.fail("'params' must be a table", where)
            params = {}
        return Plan(run, seed, self._resamples(t, where), tuple(bands), dict(targets),
                    icc_form, params)

    def _band_problems(self, raw: list, where: str) -> None:
        """Bands read alpha, which lies in [-1, 1]: a band starting above 1 is never
        reached, two bands from one value hide one of them, and a label must say
        something (each was accepted in silence before)."""
        tables = [b for b in raw if isinstance(b, dict) and isinstance(b.get("min"), (int, float))
                  and not isinstance(b.get("min"), bool)]
        for b in tables:
            if not -1 <= b["min"] <= 1:
                self.fail_to_generate(f"band {b.get('label')!r} starts at {b['min']:g}, "
                                      "outside alpha's range -1 to 1", where)
            if not isinstance(b.get("label"), str) or not b["label"].strip():
                self.fail_to_generate(f"the band from {b['min']:g} needs a label (text)", where)
        starts = [float(b["min"]) for b in tables]
        twice = sorted({m for m in starts if starts.count(m) > 1})
        if twice:
            self.fail_to_generate(f"two bands start at {twice[0]:g}; each band needs its "
                                  "own 'min'", where)

    def _resamples(self, t: dict, where: str) -> int:
        """``n_boot``: 0 (no bootstrap intervals) or enough for a 95% interval."""
        n_boot = self._int(t, "n_boot", where, 1000, minimum=0) or 0
        if 0 < n_boot < MIN_RESAMPLES:
            self.fail(f"'n_boot' = {n_boot} is too few for a 95% interval (it comes out "
                      f"narrow by construction); give 0 (no intervals) or at least "
                      f"{MIN_RESAMPLES}, 1000 for a final analysis", where)
        elif n_boot > MAX_RESAMPLES:  # analyze would run out of memory, or run for days
            self.fail(f"'n_boot' = {n_boot:,} is more than the {MAX_RESAMPLES:,} resamples an "
                      "interval can use; give 1000 for a final analysis", where)
        return n_boot


def label_problem(label: str) -> str:
    """Why ``label`` cannot be a paired design's label (empty when it can)."""
    if not label.strip():
        return "is blank"
    bad = unsafe_char(label) or next((repr(c) for c in ">," if c in label), "")
    return f"holds {bad}" if bad else ""
