"""Loading and checking a study: the spec, its items and raters, and its frozen hash.

A study is a folder holding ``study.toml`` (rubric, design, analysis plan, file naming,
instructions), an items file (``items.csv`` or ``items.xlsx``) and a raters file
(``raters.csv``). :func:`load_study` reads all three into typed objects and reports
every problem it finds, each as one line naming the file, the key or row, and what is
allowed. :func:`spec_hash` is the sha256 of a canonical JSON of everything that shapes
the rater workbooks and the analysis, so it can be published before anyone scores.
"""

from __future__ import annotations

import csv
import hashlib
import io
import itertools
import json
import re
import tomllib
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .errors import SpecError
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
)

SPEC_FILE = "study.toml"
SPEC_FORMAT = 1
DESIGNS = ("paired", "single")
ANALYSES = (
    "alpha",
    "cohen_kappa",
    "fleiss_kappa",
    "icc",
    "gwet",
    "percent_agreement",
    "direction_agreement",
    "spearman_internal",
    "arm_comparison",
    "wilcoxon_totals",
    "yield_fisher",
    "permutation",
    "trend",
    "intra_rater_kappa",
    "acceptance",
    "second_rater_selection",
    "refusal_counts",
    "gold_disputes",
    "judge_trio",
    "hypothesis_deltas",
)
ICC_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
_ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
_PLACEHOLDERS = ("rater_id", "name", "last_name", "date", "study_id")


@dataclass(frozen=True)
class Arm:
    """A system or condition whose outputs are rated blind.

    In a paired design ``column`` is the items-file column holding this arm's
    response; in a single design rows name their arm in the design's arm column.
    """

    id: str
    column: str | None = None


@dataclass(frozen=True)
class ShownField:
    """An items-file column shown (locked) on each card, under ``label``."""

    column: str
    label: str


@dataclass(frozen=True)
class Repeats:
    """A second sitting that re-scores ``count`` items drawn with ``seed`` (001)."""

    count: int
    seed: int


@dataclass(frozen=True)
class SecondRater:
    """A second-rater subset chosen by sha256 rank within strata (002).

    ``fraction`` of the items of each stratum (rounded up) go to raters whose role is
    ``second``, ranked by sha256(spec-hash + item id).
    """

    fraction: float
    strata: tuple[str, ...]
    method: str = "sha256_rank"


@dataclass(frozen=True)
class Design:
    """How items reach raters: paired or single, order, batches, repeats, subsets."""

    kind: str
    seed: int
    arms: tuple[Arm, ...]
    labels: tuple[str, ...] = ("A", "B")
    response_column: str | None = None
    arm_column: str | None = None
    shuffle: bool = True
    batch_size: int | None = None
    repeats: Repeats | None = None
    second_rater: SecondRater | None = None

    @property
    def paired(self) -> bool:
        """Whether each case shows two responses under neutral labels."""
        return self.kind == "paired"


@dataclass(frozen=True)
class Band:
    """An interpretation band: values >= ``minimum`` read as ``label``."""

    minimum: float
    label: str


@dataclass(frozen=True)
class Plan:
    """The analysis plan: what to run, thresholds, seeds (frozen with the spec)."""

    run: tuple[str, ...]
    seed: int
    n_boot: int = 1000
    bands: tuple[Band, ...] = ()
    targets: dict[str, float] = field(default_factory=dict)
    icc_form: str = "ICC2"
    params: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Item:
    """One row of the items file: a case (paired) or one response (single)."""

    id: str
    fields: dict[str, str]
    row: int


@dataclass(frozen=True)
class Rater:
    """One row of the raters file."""

    id: str
    name: str = ""
    email: str = ""
    last_name: str = ""
    role: str = "primary"
    row: int = 0


@dataclass(frozen=True)
class Study:
    """A loaded, checked study.

    Attributes
    ----------
    root : Path
        The study folder.
    id, title, version, date : str
        Identity and the date used in file names (fixed, so output is reproducible).
    instructions : str
        The study's own rater instructions, shown verbatim.
    rubric : Rubric
    design : Design
    plan : Plan
    items : tuple of Item
    raters : tuple of Rater
    shown : tuple of ShownField
        Locked item content shown on each card.
    pack_name : str
        File name pattern of a rater's workbook.
    email_subject, email_body : str
        For the coordinator's mail drafts.
    items_file, raters_file : str
        The file names, relative to ``root``.
    """

    root: Path
    id: str
    title: str
    version: str
    date: str
    instructions: str
    rubric: Rubric
    design: Design
    plan: Plan
    items: tuple[Item, ...]
    raters: tuple[Rater, ...]
    shown: tuple[ShownField, ...]
    pack_name: str
    email_subject: str = ""
    email_body: str = ""
    items_file: str = "items.csv"
    raters_file: str = "raters.csv"
    protocol: str = ""

    @property
    def hash(self) -> str:
        """The spec hash (see :func:`spec_hash`)."""
        return spec_hash(self)

    def rater(self, rater_id: str) -> Rater:
        """The rater with this id (KeyError if none)."""
        for r in self.raters:
            if r.id == rater_id:
                return r
        raise KeyError(rater_id)

    def pack_file_name(self, rater: Rater) -> str:
        """The file name of ``rater``'s workbook, from the study's pattern."""
        values = {
            "rater_id": rater.id,
            "name": rater.name or rater.id,
            "last_name": rater.last_name or rater.name or rater.id,
            "date": self.date,
            "study_id": self.id,
        }
        name = self.pack_name.format(**values)
        return re.sub(r"[^\w.\-]+", "-", name, flags=re.UNICODE)


# --------------------------------------------------------------------------- hash


def canonical_spec(study: Study) -> dict[str, Any]:
    """Everything that shapes the workbooks and the analysis, as plain JSON data.

    Item texts are included whole, with line endings normalised to LF; rater ids
    and roles are included (names and e-mail addresses are not: fixing a typo in an
    address does not unfreeze a study).
    """
    return {
        "spec_format": SPEC_FORMAT,
        "study": {
            "id": study.id,
            "title": study.title,
            "version": study.version,
            "date": study.date,
            "protocol": study.protocol,
            "instructions": study.instructions,
            "pack_name": study.pack_name,
        },
        "rubric": _plain(asdict(study.rubric)),
        "design": _plain(asdict(study.design)),
        "plan": _plain(asdict(study.plan)),
        "shown": [asdict(s) for s in study.shown],
        "items": [{"id": it.id, "fields": dict(sorted(it.fields.items()))} for it in study.items],
        "raters": [{"id": r.id, "role": r.role} for r in study.raters],
    }


def spec_hash(study: Study) -> str:
    """The sha256 (hex) of the canonical JSON of :func:`canonical_spec`.

    The JSON has sorted keys, no insignificant whitespace and UTF-8 text, so the hash
    does not depend on key order, whitespace or line endings in the spec, nor on
    whether items came from CSV or XLSX.
    """
    data = json.dumps(
        canonical_spec(study), sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


def _plain(obj: Any) -> Any:
    """Dataclass dicts to JSON-safe data (int keys become strings, tuples lists)."""
    if isinstance(obj, dict):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


# --------------------------------------------------------------------------- loading


class SpecProblems(SpecError):
    """Several problems in one study; ``problems`` holds each as a :class:`SpecError`."""

    def __init__(self, problems: list[SpecError]):
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


def load_study(path: str | Path) -> Study:
    """Load and check the study in folder ``path`` (or a ``study.toml`` path).

    Parameters
    ----------
    path : str or Path
        The study folder, or its ``study.toml``.

    Returns
    -------
    Study

    Raises
    ------
    SpecError
        A :class:`SpecProblems` listing every problem found, each one line naming the
        file, the key or row, and what is allowed.
    """
    path = Path(path)
    spec_path = path if path.is_file() else path / SPEC_FILE
    if not spec_path.exists():
        raise SpecError(
            f"no {SPEC_FILE} here; make a study with 'sheetflow init DIR'", file=str(path)
        )
    loader = _Loader(spec_path)
    study = loader.load()
    if loader.problems:
        raise SpecProblems(loader.problems)
    assert study is not None
    return study


def check_study(path: str | Path) -> list[SpecError]:
    """Every problem in the study at ``path`` (empty when it loads cleanly)."""
    try:
        load_study(path)
    except SpecProblems as exc:
        return exc.problems
    except SpecError as exc:
        return [exc]
    return []


def read_text_file(path: Path) -> str:
    """A UTF-8 text file with CRLF/CR turned into LF; clear errors for BOM or encoding."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        raise SpecError(
            "starts with a UTF-8 byte-order mark (BOM); save it as UTF-8 without BOM",
            file=path.name,
        )
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SpecError("is UTF-16; save it as UTF-8 (without BOM)", file=path.name)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save it as UTF-8",
            file=path.name,
        ) from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


class _Loader:
    """Reads one study, collecting problems instead of stopping at the first."""

    def __init__(self, spec_path: Path):
        self.spec_path = spec_path
        self.root = spec_path.parent
        self.file = spec_path.name
        self.problems: list[SpecError] = []
        # ids of dimensions that failed to load: not reported again where referenced
        self.broken: set[str] = set()

    def fail(self, message: str, where: str | None = None, file: str | None = None) -> None:
        self.problems.append(SpecError(message, file=file or self.file, where=where))

    # -- top level ---------------------------------------------------------------------

    def load(self) -> Study | None:
        try:
            text = read_text_file(self.spec_path)
        except SpecError as exc:
            self.problems.append(exc)
            return None
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            self.fail(f"is not valid TOML ({exc}); check quotes, brackets and '=' signs")
            return None
        self._unknown_keys(
            doc,
            {
                "spec_format",
                "study",
                "design",
                "dimensions",
                "totals",
                "items",
                "raters",
                "files",
                "email",
                "analysis",
            },
            "top level",
        )
        fmt = doc.get("spec_format", SPEC_FORMAT)
        if fmt != SPEC_FORMAT:
            self.fail(f"spec_format {fmt!r} is not supported; this sheetflow reads {SPEC_FORMAT}",
                      "spec_format")
        meta = self._table(doc, "study")
        self._unknown_keys(meta, {
            "id", "title", "version", "date", "protocol", "instructions", "instructions_file",
        }, "[study]")
        rubric = self._rubric(doc)
        design = self._design(self._table(doc, "design"))
        plan = self._plan(self._table(doc, "analysis"))
        items_t = self._table(doc, "items")
        shown = self._shown(items_t)
        items, items_file = self._items(items_t, design, shown)
        raters, raters_file = self._raters(self._table(doc, "raters", required=False))
        files = self._table(doc, "files", required=False)
        email = self._table(doc, "email", required=False)
        self._unknown_keys(files, {"pack_name"}, "[files]")
        self._unknown_keys(email, {"subject", "body"}, "[email]")
        pack_name = self._pack_name(files)
        instructions = self._instructions(meta)
        self._cross_checks(rubric, design, plan, items, raters)
        if self.problems:
            return None
        return Study(
            root=self.root,
            id=self._str(meta, "id", "[study]", required=True, ident=True),
            title=self._str(meta, "title", "[study]", required=True),
            version=str(meta.get("version", "1")),
            date=str(meta.get("date", "")),
            protocol=str(meta.get("protocol", "")),
            instructions=instructions,
            rubric=rubric,
            design=design,
            plan=plan,
            items=items,
            raters=raters,
            shown=shown,
            pack_name=pack_name,
            email_subject=str(email.get("subject", "")),
            email_body=str(email.get("body", "")),
            items_file=items_file,
            raters_file=raters_file,
        )

    # -- helpers -----------------------------------------------------------------------

    def _table(self, doc: dict, key: str, required: bool = True) -> dict:
        value = doc.get(key)
        if value is None:
            if required:
                self.fail(f"the [{key}] table is missing; every study needs one", f"[{key}]")
            return {}
        if not isinstance(value, dict):
            self.fail(f"must be a table ([{key}]), not {type(value).__name__}", key)
            return {}
        return value

    def _unknown_keys(self, table: dict, allowed: Iterable[str], where: str) -> None:
        allowed = set(allowed)
        for key in table:
            if key not in allowed:
                self.fail(f"unknown key {key!r}; allowed: {', '.join(sorted(allowed))}", where)

    def _str(self, t: dict, key: str, where: str, required: bool = False,
             ident: bool = False, default: str = "") -> str:
        value = t.get(key, default)
        if value == "" and required:
            self.fail(f"'{key}' is required", where)
            return ""
        if not isinstance(value, str):
            self.fail(f"'{key}' must be text, not {value!r}", where)
            return ""
        if ident and value and not _ID_RE.match(value):
            self.fail(f"'{key}' = {value!r} must start with a letter and use only letters, "
                      "digits, '_' and '-'", where)
        return value

    def _int(self, t: dict, key: str, where: str, default: int | None = None,
             minimum: int | None = None) -> int | None:
        value = t.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"'{key}' must be a whole number, not {value!r}", where)
            return default
        if minimum is not None and value < minimum:
            self.fail(f"'{key}' = {value} must be at least {minimum}", where)
        return value

    def _bool(self, t: dict, key: str, where: str, default: bool) -> bool:
        value = t.get(key, default)
        if not isinstance(value, bool):
            self.fail(f"'{key}' must be true or false, not {value!r}", where)
            return default
        return value

    def _str_list(self, t: dict, key: str, where: str) -> tuple[str, ...]:
        value = t.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(f"'{key}' must be a list of texts", where)
            return ()
        return tuple(value)

    # -- rubric ------------------------------------------------------------------------

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
            dim = self._dimension(entry, where)
            if dim is None:
                self.broken.add(str(entry.get("id", "")))
                continue
            if dim.id in seen:
                self.fail(f"duplicate dimension id {dim.id!r}; each id must be unique",
                          f"[[dimensions]] id={dim.id}")
            seen.add(dim.id)
            dims.append(dim)
        rubric = Rubric(tuple(dims))
        totals = self._totals(doc.get("totals", []), rubric)
        return Rubric(tuple(dims), totals)

    _DIM_KEYS = frozenset({
        "id", "label", "kind", "scope", "help", "required", "confidence", "level",
        "choices", "na", "ordered", "min", "max", "labels", "anchors", "bins",
        "questions", "min_words", "max_words", "blank_means", "mark",
    })

    def _dimension(self, e: dict, where: str) -> Dimension | None:
        dim_id = self._str(e, "id", where, required=True, ident=True)
        if dim_id:
            where = f"[[dimensions]] id={dim_id}"
        self._unknown_keys(e, self._DIM_KEYS, where)
        kind = e.get("kind")
        if kind not in KINDS:
            self.fail(f"unknown dimension kind {kind!r}; allowed: {', '.join(KINDS)}", where)
            return None
        scope = e.get("scope", "case" if kind == "preference" else "response")
        if scope not in SCOPES:
            self.fail(f"unknown scope {scope!r}; allowed: {', '.join(SCOPES)}", where)
        builder = getattr(self, f"_dim_{kind}")
        extra = builder(e, where)
        level = e.get("level", extra.pop("_level", "nominal"))
        if kind != "text" and level not in LEVELS:
            self.fail(f"unknown level {level!r}; allowed: {', '.join(LEVELS)}", where)
        default_required = kind not in ("flag", "text") and extra.get("blank_means") is None
        return Dimension(
            id=dim_id,
            label=self._str(e, "label", where, default=dim_id),
            kind=kind,
            scope=scope,
            help=self._str(e, "help", where),
            required=self._bool(e, "required", where, default_required),
            confidence=self._bool(e, "confidence", where, False),
            level=level,
            **extra,
        )

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
        if len(",".join(choices)) > 255:
            self.fail("the choices add up to more than 255 characters, Excel's limit for a "
                      "dropdown list; shorten the labels", where)
        return choices

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
            text = str(v).strip()
            if not text:
                self.fail("an N/A label is empty", where)
                continue
            if lo is not None and hi is not None and _as_int(text) is not None \
                    and lo <= _as_int(text) <= hi:  # type: ignore[operator]
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
        return {"choices": (mark,)}

    def _dim_number(self, e: dict, where: str) -> dict:
        lo = self._int(e, "min", where, default=0)
        hi = self._int(e, "max", where)
        if hi is None:
            self.fail("a number needs a whole-number 'max' (and 'min', default 0)", where)
            return {"minimum": lo, "maximum": lo, "_level": "ratio"}
        if lo is not None and lo > hi:
            self.fail(f"number min {lo} is above max {hi}", where)
        return {"minimum": lo, "maximum": hi, "_level": "ratio"}

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

    def _totals(self, raw: Any, rubric: Rubric) -> tuple[Total, ...]:
        if not isinstance(raw, list):
            self.fail("'totals' must be an array of tables ([[totals]])", "[[totals]]")
            return ()
        out = []
        for i, t in enumerate(raw, 1):
            where = f"[[totals]] #{i}"
            self._unknown_keys(t, {"id", "label", "of", "method", "min", "max", "level"}, where)
            tid = self._str(t, "id", where, required=True, ident=True)
            of = self._str_list(t, "of", where)
            method = t.get("method", "sum")
            if method not in ("sum", "mean"):
                self.fail(f"unknown total method {method!r}; allowed: sum, mean", where)
            for dim_id in of:
                if dim_id in self.broken:
                    continue
                if dim_id not in rubric.ids:
                    self.fail(f"total {tid!r} names unknown dimension {dim_id!r}", where)
                elif not rubric.dimension(dim_id).scores:
                    self.fail(f"total {tid!r} includes {dim_id!r}, which gives no points", where)
            if tid in rubric.ids:
                self.fail(f"total id {tid!r} is also a dimension id", where)
            level = t.get("level", "interval")
            if level not in LEVELS:
                self.fail(f"unknown level {level!r}; allowed: {', '.join(LEVELS)}", where)
            out.append(Total(tid, str(t.get("label", tid)), of, method,
                             t.get("min"), t.get("max"), level))
        return tuple(out)

    # -- design and plan ---------------------------------------------------------------

    _DESIGN_KEYS = frozenset({
        "kind", "seed", "arms", "labels", "response_column", "arm_column", "shuffle",
        "batch_size", "repeats", "second_rater",
    })

    def _design(self, t: dict) -> Design:
        where = "[design]"
        self._unknown_keys(t, self._DESIGN_KEYS, where)
        kind = t.get("kind")
        if kind not in DESIGNS:
            self.fail(f"unknown design {kind!r}; allowed: {', '.join(DESIGNS)}", where)
            kind = "unknown"  # checks that depend on the design kind are skipped
        seed = self._int(t, "seed", where)
        if seed is None:
            self.fail("'seed' is required: every random choice comes from a recorded seed",
                      where)
            seed = 0
        arms = self._arms(t, kind)
        labels = self._str_list(t, "labels", where) if "labels" in t else ("A", "B")
        if kind == "paired" and (len(labels) != 2 or labels[0] == labels[1]):
            self.fail("a paired design needs two different labels, e.g. [\"A\", \"B\"]", where)
        response_column = t.get("response_column")
        arm_column = t.get("arm_column")
        if kind == "single" and not (response_column and arm_column):
            self.fail("a single design needs 'response_column' and 'arm_column' (items-file "
                      "columns holding each row's response and its arm)", where)
        return Design(
            kind=kind,
            seed=seed,
            arms=arms,
            labels=labels,
            response_column=response_column,
            arm_column=arm_column,
            shuffle=self._bool(t, "shuffle", where, True),
            batch_size=self._int(t, "batch_size", where, minimum=1),
            repeats=self._repeats(t.get("repeats")),
            second_rater=self._second_rater(t.get("second_rater")),
        )

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
            arms.append(Arm(str(a["id"]), a.get("column")))
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
        if raw is None:
            return None
        where = "[design.repeats]"
        if not isinstance(raw, dict):
            self.fail("must be a table with 'count' and 'seed'", where)
            return None
        self._unknown_keys(raw, {"count", "seed"}, where)
        count = self._int(raw, "count", where, minimum=1)
        seed = self._int(raw, "seed", where)
        if count is None or seed is None:
            self.fail("needs whole-number 'count' and 'seed'", where)
            return None
        return Repeats(count, seed)

    def _second_rater(self, raw: Any) -> SecondRater | None:
        if raw is None:
            return None
        where = "[design.second_rater]"
        if not isinstance(raw, dict):
            self.fail("must be a table with 'fraction' and 'strata'", where)
            return None
        self._unknown_keys(raw, {"fraction", "strata", "method"}, where)
        fraction = raw.get("fraction")
        if not isinstance(fraction, (int, float)) or not 0 < fraction <= 1:
            self.fail(f"'fraction' must be a number in (0, 1], not {fraction!r}", where)
            fraction = 1.0
        method = raw.get("method", "sha256_rank")
        if method != "sha256_rank":
            self.fail(f"unknown method {method!r}; allowed: sha256_rank", where)
        return SecondRater(float(fraction), self._str_list(raw, "strata", where), method)

    _PLAN_KEYS = frozenset({"run", "seed", "n_boot", "bands", "targets", "icc_form", "params"})

    def _plan(self, t: dict) -> Plan:
        where = "[analysis]"
        self._unknown_keys(t, self._PLAN_KEYS, where)
        run = self._str_list(t, "run", where)
        for name in run:
            if name not in ANALYSES:
                self.fail(f"unknown analysis {name!r}; allowed: {', '.join(ANALYSES)}", where)
        seed = self._int(t, "seed", where)
        if seed is None:
            self.fail("'seed' is required (bootstrap and permutation tests use it)", where)
            seed = 0
        bands = []
        for b in t.get("bands", []):
            if not isinstance(b, dict) or "min" not in b or "label" not in b:
                self.fail("each band is a table {min = 0.8, label = \"...\"}", where)
                continue
            bands.append(Band(float(b["min"]), str(b["label"])))
        bands.sort(key=lambda b: -b.minimum)
        targets = t.get("targets", {})
        if not isinstance(targets, dict) or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in targets.values()
        ):
            self.fail("'targets' must be a table of numbers", where)
            targets = {}
        icc_form = t.get("icc_form", "ICC2")
        if icc_form not in ICC_FORMS:
            self.fail(f"unknown icc_form {icc_form!r}; allowed: {', '.join(ICC_FORMS)}", where)
        params = t.get("params", {})
        if not isinstance(params, dict):
            self.fail("'params' must be a table", where)
            params = {}
        return Plan(run, seed, self._int(t, "n_boot", where, 1000, minimum=0) or 0,
                    tuple(bands), dict(targets), icc_form, params)

    # -- items and raters --------------------------------------------------------------

    def _shown(self, t: dict) -> tuple[ShownField, ...]:
        out = []
        for s in t.get("show", []):
            if not isinstance(s, dict) or not s.get("column"):
                self.fail("each shown field is a table {column = \"...\", label = \"...\"}",
                          "[items] show")
                continue
            out.append(ShownField(str(s["column"]), str(s.get("label", s["column"]))))
        return tuple(out)

    def _items(self, t: dict, design: Design,
               shown: tuple[ShownField, ...]) -> tuple[tuple[Item, ...], str]:
        where = "[items]"
        self._unknown_keys(t, {"file", "id_column", "show"}, where)
        name = t.get("file", "items.csv")
        id_col = t.get("id_column", "id")
        path = self.root / name
        if not path.exists():
            self.fail(f"items file {name!r} not found next to {self.file}", where)
            return (), name
        try:
            header, rows = read_table(path)
        except SpecError as exc:
            self.problems.append(exc)
            return (), name
        needed = [id_col, *(s.column for s in shown)]
        if design.paired:
            needed += [a.column for a in design.arms if a.column]
        else:
            needed += [c for c in (design.response_column, design.arm_column) if c]
        if design.second_rater:
            needed += list(design.second_rater.strata)
        for col in dict.fromkeys(needed):
            if col not in header:
                self.fail(f"column {col!r} named in {self.file} is missing; the file has: "
                          f"{', '.join(header)}", file=name, where="header")
        if any(col not in header for col in needed):
            return (), name
        items = self._item_rows(rows, id_col, name, design)
        return items, name

    def _item_rows(self, rows: list[tuple[int, dict[str, str]]], id_col: str, name: str,
                   design: Design) -> tuple[Item, ...]:
        items: list[Item] = []
        seen: dict[str, int] = {}
        arm_ids = {a.id for a in design.arms}
        for row_no, row in rows:
            item_id = row.get(id_col, "").strip()
            where = f"row {row_no}"
            if not item_id:
                self.fail(f"'{id_col}' is empty; every item needs an id", file=name, where=where)
                continue
            if item_id in seen:
                self.fail(f"duplicate id {item_id!r} (first at row {seen[item_id]})",
                          file=name, where=where)
                continue
            seen[item_id] = row_no
            for col, value in row.items():
                bad = _control_char(value)
                if bad:
                    self.fail(f"column {col!r} contains control character {bad}; remove it",
                              file=name, where=where)
            if not design.paired and design.arm_column and \
                    row.get(design.arm_column, "") not in arm_ids:
                self.fail(f"arm {row.get(design.arm_column)!r} is not one of the design's arms "
                          f"{sorted(arm_ids)}", file=name, where=where)
            items.append(Item(item_id, row, row_no))
        if not items and not self.problems:
            self.fail("has no items", file=name)
        return tuple(items)

    def _raters(self, t: dict) -> tuple[tuple[Rater, ...], str]:
        self._unknown_keys(t, {"file"}, "[raters]")
        name = t.get("file", "raters.csv")
        path = self.root / name
        if not path.exists():
            self.fail(f"raters file {name!r} not found next to {self.file}", "[raters]")
            return (), name
        try:
            header, rows = read_table(path)
        except SpecError as exc:
            self.problems.append(exc)
            return (), name
        if "rater_id" not in header:
            self.fail(f"has no 'rater_id' column; the file has: {', '.join(header) or 'nothing'}",
                      file=name, where="header")
            return (), name
        raters: list[Rater] = []
        seen: dict[str, int] = {}
        for row_no, row in rows:
            rid = row.get("rater_id", "").strip()
            where = f"row {row_no}"
            if not rid:
                self.fail("'rater_id' is empty; every rater needs a pseudonymous id",
                          file=name, where=where)
                continue
            if not _ID_RE.match(rid):
                self.fail(f"rater_id {rid!r} must start with a letter and use only letters, "
                          "digits, '_' and '-'", file=name, where=where)
            if rid in seen:
                self.fail(f"duplicate rater_id {rid!r} (first at row {seen[rid]})",
                          file=name, where=where)
                continue
            seen[rid] = row_no
            role = row.get("role", "").strip() or "primary"
            if role not in ("primary", "second"):
                self.fail(f"role {role!r} is not allowed; use primary or second",
                          file=name, where=where)
            raters.append(Rater(rid, row.get("name", "").strip(), row.get("email", "").strip(),
                                row.get("last_name", "").strip(), role, row_no))
        if not raters and not any(p.file == name for p in self.problems):
            self.fail("lists no raters", file=name)
        return tuple(raters), name

    # -- the rest ----------------------------------------------------------------------

    def _pack_name(self, files: dict) -> str:
        pattern = files.get("pack_name", "{study_id}-{rater_id}.xlsx")
        try:
            pattern.format(**{k: "x" for k in _PLACEHOLDERS})
        except (KeyError, IndexError, ValueError) as exc:
            self.fail(f"pack_name {pattern!r} uses an unknown placeholder {exc}; allowed: "
                      + ", ".join("{" + p + "}" for p in _PLACEHOLDERS), "[files]")
            return pattern
        if not pattern.endswith(".xlsx"):
            self.fail(f"pack_name {pattern!r} must end in .xlsx", "[files]")
        if "{rater_id}" not in pattern and "{last_name}" not in pattern \
                and "{name}" not in pattern:
            self.fail("pack_name must contain {rater_id}, {name} or {last_name}, so each "
                      "rater's file has its own name", "[files]")
        return pattern

    def _instructions(self, meta: dict) -> str:
        if "instructions_file" in meta:
            path = self.root / str(meta["instructions_file"])
            if not path.exists():
                self.fail(f"instructions_file {meta['instructions_file']!r} not found",
                          "[study]")
                return ""
            try:
                return read_text_file(path)
            except SpecError as exc:
                self.problems.append(exc)
                return ""
        value = meta.get("instructions", "")
        return value.replace("\r\n", "\n") if isinstance(value, str) else ""

    def _cross_checks(self, rubric: Rubric, design: Design, plan: Plan,
                      items: tuple[Item, ...], raters: tuple[Rater, ...]) -> None:
        if design.kind == "single":
            for d in rubric.dimensions:
                if d.kind == "preference":
                    self.fail(f"dimension {d.id!r} is a preference, which needs a paired design",
                              f"[[dimensions]] id={d.id}")
        if design.repeats and items and design.repeats.count > len(items):
            self.fail(f"repeats count {design.repeats.count} exceeds the {len(items)} items",
                      "[design.repeats]")
        if design.second_rater and raters and not any(r.role == "second" for r in raters):
            self.fail("a second-rater subset is planned but no rater has role 'second'",
                      "[design.second_rater]")
        for name in plan.targets:
            if not isinstance(name, str):
                self.fail("target names must be text", "[analysis] targets")


# --------------------------------------------------------------------------- tables


def read_table(path: Path) -> tuple[list[str], list[tuple[int, dict[str, str]]]]:
    """Read a CSV (UTF-8, BOM allowed) or XLSX table as text.

    Returns the header and ``(row number, {column: text})`` pairs, the row number
    counting the header as row 1. Cells are stripped of surrounding white space and
    line endings are normalised to LF; numbers from XLSX become their shortest text
    (``1`` not ``1.0``), so the same table gives the same values from either format.
    """
    suffix = path.suffix.lower()
    if suffix == ".csv":
        header, raw_rows = _read_csv(path)
    elif suffix == ".xlsx":
        header, raw_rows = _read_xlsx(path)
    else:
        raise SpecError(f"is a {suffix or 'file without extension'}; use .csv or .xlsx",
                        file=path.name)
    if not header or not any(h.strip() for h in header):
        raise SpecError("has no header row", file=path.name)
    header = [h.strip() for h in header]
    dupes = sorted({h for h in header if h and header.count(h) > 1})
    if dupes:
        raise SpecError(f"repeats column names {dupes}", file=path.name, where="header")
    rows = []
    for i, raw in enumerate(raw_rows, start=2):
        if not any(_cell_text(v) for v in raw):
            continue
        if len(raw) > len(header) and any(_cell_text(v) for v in raw[len(header):]):
            raise SpecError(f"has {len(raw)} cells but the header has {len(header)} columns",
                            file=path.name, where=f"row {i}")
        values = {h: _cell_text(raw[j]) if j < len(raw) else "" for j, h in enumerate(header)
                  if h}
        rows.append((i, values))
    return header, rows


def _read_csv(path: Path) -> tuple[list[str], list[list[str]]]:
    data = path.read_bytes()
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise SpecError("is UTF-16; save it as CSV UTF-8", file=path.name)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise SpecError(
            f"is not UTF-8 (byte 0x{data[exc.start]:02x} at offset {exc.start}); "
            "save it as CSV UTF-8",
            file=path.name,
        ) from None
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        rows = list(reader)
    except csv.Error as exc:
        raise SpecError(f"is not valid CSV ({exc})", file=path.name) from None
    if not rows:
        return [], []
    return rows[0], rows[1:]


def _read_xlsx(path: Path) -> tuple[list[str], list[list[Any]]]:
    import openpyxl  # items files are small and trusted (the coordinator's own)

    try:
        wb = openpyxl.load_workbook(path, read_only=True, data_only=True)
    except Exception as exc:  # openpyxl raises many types for a broken file
        raise SpecError(f"cannot be read as an Excel workbook ({type(exc).__name__}); "
                        "save it again as .xlsx or use CSV", file=path.name) from None
    try:
        ws = wb.worksheets[0]
        rows = [list(r) for r in ws.iter_rows(values_only=True, max_col=200)]
    finally:
        wb.close()
    if not rows:
        return [], []
    return [_cell_text(h) for h in rows[0]], rows[1:]


def _cell_text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value)
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def _control_char(text: str) -> str:
    for ch in text:
        if ord(ch) < 32 and ch not in "\t\n":
            return f"U+{ord(ch):04X}"
    return ""


def _as_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None

