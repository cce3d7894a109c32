"""Simulated raters who fill generated packs (for the demo and for tests).

Each response has a latent true quality per dimension (a shared value on a z scale,
from ``quality`` or drawn from a seed and the response's locked-text digest, so every
rater sees the same response as equally good); each rater adds a personal bias and
per-answer noise, so agreement is realistic rather than perfect. A rater's direction
follows their own totals most of the time; confidence is mostly Medium or High; notes
appear now and then; the methodology note has 50-100 words.

:func:`fill_packs` opens every pack named in ``packs/manifest.json`` with openpyxl,
writes an answer into every answer cell the manifest lists and saves a copy in the
returns folder. The packs themselves are never modified. :func:`arms_from_key` reads
which arm each label of each pack shows from the sealed key (the tests that plant
chosen answers use it too).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import math
import random
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import openpyxl

from ..packs.manifest import open_manifest
from ..spec.rubric import Dimension
from ..spec.study import Study, load_study
from ..workbook import layout as L

_NOTES = (
    "Borderline on the count of distinct factors; I counted closely related points once.",
    "The recommendations are strategic rather than operational; counted them anyway.",
    "Evidence is named but its credibility is not assessed.",
    "Close call between the two responses; the rubric does not capture tone.",
)
_METHOD_TEXT = (
    "I counted a factor only when it named a substantively distinct consideration, so "
    "restatements and sub-points of one idea counted once. Evidence counted as cited when "
    "a specific precedent, study or data point was named that a reader could verify; "
    "credibility needed explicit assessment language. Recommendations counted when they "
    "were actionable, strategic or operational, without requiring implementation detail. "
    "I scored depth before evidence to limit halo effects, re-checked the rubric every six "
    "cases to avoid drift, and scored each response against the absolute scale rather than "
    "against its pair."
)
_METHOD_WORDS = _METHOD_TEXT.split()


def _z_to_unit(z: float) -> float:
    """Standard normal CDF: a latent z score to a share in (0, 1)."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2.0)))


class _Rater:
    """One simulated rater: a bias, a noise level and a random stream."""

    def __init__(self, rater_id: str, seed: int, noise: float):
        self.rng = random.Random(_seed_from(seed, "rater", rater_id))
        self.bias = self.rng.gauss(0.0, 0.25)
        self.noise = noise

    def share(self, latent: float) -> float:
        # centred a little above the middle: most responses score in the upper-middle
        # range and extremes are rare (protocol 000 appendix A)
        return _z_to_unit(0.45 + 0.75 * (latent + self.bias + self.rng.gauss(0.0, self.noise)))

    def confidence(self) -> str:
        return self.rng.choices(L.CONFIDENCE_CHOICES, weights=(1, 4, 5))[0]


def _seed_from(seed: int, *words: str) -> int:
    text = ":".join([str(seed), *words]).encode("utf-8")
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "big")


def _latent(seed: int, digest: str, dim_id: str, base: float | None) -> float:
    """Latent quality of one response on one dimension (shared by all raters)."""
    rng = random.Random(_seed_from(seed, "latent", digest, dim_id))
    centre = base if base is not None else random.Random(
        _seed_from(seed, "response", digest)).gauss(0.0, 0.8)
    return centre + rng.gauss(0.0, 0.45)


def _answer(dim: Dimension, share: float, rater: _Rater) -> Any:
    """The value a rater enters for ``dim`` given a quality share in (0, 1)."""
    if dim.kind == "count":
        top = max(b.low for b in dim.bins) + 1
        return round(share * top)
    if dim.kind in ("scale", "number"):
        lo, hi = dim.minimum or 0, dim.maximum or 0
        if dim.kind == "number":  # counts of errors: fewer when quality is high
            count = round(max(0.0, (1.0 - share) * 3.0 - 0.6))
            return count if dim.maximum is None else min(hi, count)
        return lo + round(share * (hi - lo))
    if dim.kind == "binary":
        return "Yes" if share > 0.5 else "No"
    if dim.kind == "categorical":
        options = [c for c in dim.choices if c not in dim.na_choices]
        if dim.na_choices and rater.rng.random() < 0.05:
            return dim.na_choices[0]
        # choices are listed best first (Correct ... Incorrect)
        return options[min(int((1.0 - share) * len(options)), len(options) - 1)]
    if dim.kind == "flag":
        return dim.choices[0] if rater.rng.random() < 0.06 else None
    return None


def _study_answer(dim: Dimension, rater: _Rater) -> Any:
    """A Submission answer: hours near the protocol's estimate, a choice, or a note."""
    if dim.kind == "number":
        hours = min(dim.maximum, max(dim.minimum, 6 + 2 * rater.rng.random()))
        return round(hours, dim.decimals) if dim.decimals else round(hours)
    if dim.kind in ("categorical", "binary"):
        if dim.id == "consent":  # keep-known's owner record: simulated owners consent
            return "Yes"
        # "No" for a recognised arm: a simulated rater keeps the blinding
        return "No" if "No" in dim.choices else rater.rng.choice(dim.choices)
    if dim.kind == "text" and not dim.required and rater.rng.random() < 0.5:
        return None
    if dim.id in _OWNER_TEXT:
        return None if not dim.required else _OWNER_TEXT[dim.id]
    return _text(dim, rater)


# keep-known's rater description: simulated owners follow the protocol (no deviation)
_OWNER_TEXT = {"relationship": "my own notes, written over the last five years",
               "breaks": "ten minutes after each batch", "deviations": "",
               "compensation": ""}


def _text(dim: Dimension, rater: _Rater) -> str | None:
    if dim.min_words or dim.scope == "study":
        lo = dim.min_words or 50
        hi = dim.max_words or max(lo, 100)
        n = rater.rng.randint(lo, hi)
        return " ".join(_METHOD_WORDS[i % len(_METHOD_WORDS)] for i in range(n))
    if dim.required:
        return rater.rng.choice(_NOTES)
    return rater.rng.choice(_NOTES) if rater.rng.random() < 0.2 else None


def _points(dim: Dimension, value: Any) -> float:
    if dim.kind == "count":
        return dim.points_for_count(int(value))
    if dim.kind == "checklist":
        return float(sum(v == "Yes" for v in value))
    return float(value) if isinstance(value, (int, float)) else 0.0


def fill_packs(study_dir: str | Path, returns_dir: str | Path | None = None, *, seed: int,
               quality: Mapping[tuple[str, str], float] | None = None,
               noise: float = 0.35) -> list[Path]:
    """Fill every generated pack as a simulated rater and save the copies.

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``sheetflow generate`` (``packs/manifest.json``).
    returns_dir : str or Path, optional
        Where to save the filled copies (default ``study_dir/returns``).
    seed : int
        Seed of every random choice; the same seed gives the same answers.
    quality : mapping of (item id, arm id) to float, optional
        Latent quality (z scale) of each response. Needs the sealed key to know which
        arm each label shows; when None a quality is drawn per response.
    noise : float, default 0.35
        Per-answer rater noise on the z scale (larger: less agreement).

    Returns
    -------
    list of Path
        The saved workbooks, in manifest order.
    """
    root = Path(study_dir)
    study = load_study(root)
    out_dir = Path(returns_dir) if returns_dir is not None else root / "returns"
    out_dir.mkdir(parents=True, exist_ok=True)
    arms = arms_from_key(root) if quality else {}
    saved = []
    manifest = open_manifest(root)
    try:
        for pack in manifest.packs():  # one pack's entry in memory at a time
            rater = _Rater(pack["rater_id"], seed + int(pack.get("sitting", 1)), noise)
            wb = openpyxl.load_workbook(root / L.PACKS_DIR / pack["file"])
            filler = _PackFiller(study, wb, rater, seed, quality or {},
                                 arms.get((pack["rater_id"], int(pack.get("sitting", 1))), {}))
            filler.fill(pack)
            target = out_dir / pack["file"]
            wb.save(target)
            saved.append(target)
    finally:
        manifest.close()
    return saved


def arms_from_key(root: Path) -> dict[tuple[str, int], dict[tuple[str, str], str]]:
    """The arm behind each label of each pack, from the study's sealed key.

    Parameters
    ----------
    root : Path
        A study folder after ``sheetflow generate`` (``sealed/key.json``).

    Returns
    -------
    dict
        (rater id, sitting) -> (item id, label) -> arm id. A case that shows one
        response (no sides) has the label "".
    """
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    out: dict[tuple[str, int], dict[tuple[str, str], str]] = {}
    for pack in key.get("packs", []):
        table = out.setdefault((pack["rater_id"], int(pack.get("sitting", 1))), {})
        for case in pack.get("cases", []):
            for label, arm in (case.get("sides") or {"": case.get("arm", "")}).items():
                table[(case["item_id"], label)] = arm
    return out


_FLAG_NOTE = "The reference answer disagrees with the cited evidence."


class _PackFiller:
    """Writes one rater's answers into one open workbook."""

    def __init__(self, study: Study, wb: Any, rater: _Rater, seed: int,
                 quality: Mapping[tuple[str, str], float], arms: dict[tuple[str, str], str]):
        self.study, self.wb, self.rater, self.seed = study, wb, rater, seed
        self.quality, self.arms = quality, arms

    def put(self, ref: dict[str, Any], value: Any) -> None:
        if value is not None:
            self.wb[ref["sheet"]][ref["cell"]] = value

    def fill(self, pack: dict[str, Any]) -> None:
        day = _sitting_day(self.study, pack)
        for batch in pack.get("batches", []):
            start = day.replace(hour=9 + batch["batch"] % 8)
            self.put(batch["start"], start)
            self.put(batch["end"], start.replace(minute=40))
        for card in pack.get("cards", []):
            totals = {row["label"]: self.fill_row(card["item_id"], row) for row in card["rows"]}
            for dim_id, answer in card["case_answers"].items():
                self.put(answer, self.case_answer(self.study.rubric.dimension(dim_id), totals))
        for dim_id, answer in pack.get("study_answers", {}).items():
            self.put(answer, _study_answer(self.study.rubric.dimension(dim_id), self.rater))

    def fill_row(self, item_id: str, row: dict[str, Any]) -> float:
        """Fill one response's answers; return this rater's total for it."""
        label = row.get("label") or ""
        arm = self.arms.get((item_id, label), "")
        base = self.quality.get((item_id, arm))
        total = 0.0
        given: dict[str, Any] = {}
        for dim_id, answer in row["answers"].items():
            dim = self.study.rubric.dimension(dim_id)
            if dim.kind == "text":
                given[dim_id] = _text(dim, self.rater)
                self.put(answer, given[dim_id])
                continue
            latent = _latent(self.seed, row["locked_sha256"], dim_id, base)
            if dim.kind == "checklist":
                value = [("Yes" if self.rater.share(latent + 0.4 - 0.4 * i) > 0.5 else "No")
                         for i in range(len(answer["questions"]))]
                for q, v in zip(answer["questions"], value, strict=True):
                    self.put(q, v)
            else:
                value = _answer(dim, self.rater.share(latent), self.rater)
                self.put(answer, value)
            given[dim_id] = value
            total += _points(dim, value) if dim.scores and value is not None else 0.0
            if "confidence" in answer:
                self.put(answer["confidence"], self.rater.confidence())
        self.explain_flags(row["answers"], given)
        return total

    def explain_flags(self, answers: dict[str, Any], given: dict[str, Any]) -> None:
        """A marked flag gets the note its dimension asks for, as a careful rater writes."""
        for dim_id, value in given.items():
            dim = self.study.rubric.dimension(dim_id)
            if dim.kind == "flag" and value is not None and dim.note in answers \
                    and not given.get(dim.note):
                self.put(answers[dim.note], _FLAG_NOTE)

    def case_answer(self, dim: Dimension, totals: dict[str, float]) -> Any:
        if dim.kind == "text":
            return _text(dim, self.rater)
        if dim.kind != "preference":
            return _answer(dim, self.rater.share(0.0), self.rater)
        (la, ta), (lb, tb) = list(totals.items())[:2]
        if self.rater.rng.random() < 0.1:  # an occasional judgement against the totals
            return self.rater.rng.choice(dim.choices)
        if abs(ta - tb) <= 1:
            return "Tied" if "Tied" in dim.choices else dim.choices[-1]
        return f"{la}>{lb}" if ta > tb else f"{lb}>{la}"


def _sitting_day(study: Study, pack: dict[str, Any]) -> dt.datetime:
    """The day a simulated rater scores: the study's date, sitting 2 two days later."""
    try:
        day = dt.datetime.fromisoformat(study.date)
    except ValueError:
        day = dt.datetime(2026, 1, 1)
    return day.replace(hour=0, minute=0, second=0) + dt.timedelta(
        days=1 + 2 * (int(pack.get("sitting", 1)) - 1))
