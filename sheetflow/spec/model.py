"""The study's data model: arms, design, plan, items, raters and the study itself."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from .hashing import SPEC_FORMAT, plain_data
from .mail import MailSettings
from .rubric import Rubric

SPEC_FILE = "study.toml"
SIZING_FILE = "sizing.json"  # written by sheetflow plan --record; covered by the spec hash
SITTING2_SUFFIX = "-sitting2"
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
    "mixed_effects",
    "acceptance",
    "second_rater_selection",
    "refusal_counts",
    "gold_disputes",
    "judge_trio",
    "hypothesis_deltas",
)
ICC_FORMS = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
# the fewest bootstrap resamples that give a 95% percentile interval: the range of n
# draws covers (n - 1) / (n + 1) of a distribution on average, 95% from n = 39 on;
# with fewer the interval is narrow by construction (one resample gives width 0)
MIN_RESAMPLES = 40
# beyond this an interval's ends move in the fourth digit only, and the resamples of a
# large study no longer fit in memory
MAX_RESAMPLES = 100_000
ID_RE = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]*$")
PLACEHOLDERS = ("rater_id", "name", "last_name", "date", "study_id")


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
    """An items-file column shown (locked) on each card, under ``label``.

    ``optional``: the column may be blank on some items (see :mod:`sheetflow.spec.blanks`);
    it changes what ``check`` accepts, not what a card shows, so it is not hashed.
    """

    column: str
    label: str
    optional: bool = False


@dataclass(frozen=True)
class Repeats:
    """A second sitting that re-scores ``count`` items drawn with ``seed`` (001)."""

    count: int
    seed: int


@dataclass(frozen=True)
class SecondRater:
    """A second-rater subset chosen by sha256 rank within strata (002).

    ``fraction`` of the items of each stratum (rounded up) go to raters whose role is
    ``second``, ranked by sha256(spec-hash + item id). ``select_at`` is ``"generate"``
    (all items, at generate) or ``"lock"`` (completed items, at data lock:
    :mod:`sheetflow.packs.second_rater`).
    """

    fraction: float
    strata: tuple[str, ...]
    method: str = "sha256_rank"
    select_at: str = "generate"


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
    scatter_column: str | None = None
    """Items sharing this column's value (two answers to one question) never sit on
    adjacent cards of a pack, where the counts allow it."""

    @property
    def paired(self) -> bool:
        """Whether each case shows two responses under neutral labels."""
        return self.kind == "paired"


@dataclass(frozen=True)
class Band:
    """An interpretation band: values >= ``minimum`` read as ``label``.

    The plan keeps its bands highest first, so a value reads as the first band it
    reaches.
    """

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
    show_id : bool
        Whether cards show the item's own id (``[items] show_id``); by default they show
        "Case k of n" and a neutral code drawn per rater (see :mod:`sheetflow.packs.assign`).
        Locked item content shown on each card.
    sizing : dict or None
        The design chosen by ``sheetflow plan --record`` (``sizing.json``), if any.
    pack_name : str
        File name pattern of a rater's workbook.
    email_subject, email_body : str
        For the coordinator's mail drafts.
    mail : MailSettings
        The ``[mail]`` table (servers, sender, deadline); not part of the spec hash.
    items_file, raters_file : str
        The file names, relative to ``root``.
    generate_problems : tuple of SpecError
        Problems that ``check`` and ``generate`` refuse but that do not stop a study
        already generated from being collected and analysed (rules added after studies
        were sealed: a blank shown field, a total's declared range other than its
        dimensions'); :func:`~sheetflow.spec.study.require_generatable` raises them.
    file_warnings : tuple of str
        True statements about the study's files that stop nothing, each naming the file
        (a raters column that is not read); ``check`` and ``generate`` print them.
    input_sha256 : dict of str to str
        The sha256 of each input file ``generate`` seals besides the spec (the internal
        scores), keyed by its name in the spec: of the very bytes the checks read, so
        what is sealed is what was checked.
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
    show_id: bool = False
    sizing: dict[str, Any] | None = None
    mail: MailSettings = field(default_factory=MailSettings)
    generate_problems: tuple[Any, ...] = ()
    file_warnings: tuple[str, ...] = ()
    input_sha256: dict[str, str] = field(default_factory=dict)

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

    def pack_file_name(self, rater: Rater, sitting: int = 1) -> str:
        """The file name of ``rater``'s workbook for ``sitting``, from the study's pattern."""
        return pack_file_name(self.pack_name, self.id, self.date, rater, sitting)


def pack_file_name(pattern: str, study_id: str, date: str, rater: Rater, sitting: int = 1) -> str:
    """A workbook name: ``pattern`` filled in and sanitised, ``-sitting2`` for sitting 2.

    Every run of characters other than letters, digits, ``.``, ``_`` and ``-`` becomes
    one ``-``, so a name is safe on every file system.
    """
    values = {
        "rater_id": rater.id,
        "name": rater.name or rater.id,
        "last_name": rater.last_name or rater.name or rater.id,
        "date": date,
        "study_id": study_id,
    }
    name = re.sub(r"[^\w.\-]+", "-", pattern.format(**values), flags=re.UNICODE)
    if sitting == 1:
        return name
    stem = name[: -len(".xlsx")] if name.lower().endswith(".xlsx") else name
    return f"{stem}{SITTING2_SUFFIX}.xlsx"


def canonical_spec(study: Study) -> dict[str, Any]:
    """Everything that shapes the workbooks and the analysis, as plain JSON data.

    Item texts are included whole, with line endings normalised to LF; rater ids
    and roles are included (names and e-mail addresses are not: fixing a typo in an
    address does not unfreeze a study). ``show_id`` and ``sizing`` (the design recorded
    by ``sheetflow plan --record``) are included only when set, so specs written before
    they existed keep their hash.
    A number dimension's level is hashed as written, or as ``ratio`` when the spec
    writes none (its default before a ``min`` below 0 made it interval), so a study
    sealed then keeps its hash.
    """
    out = {
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
        "rubric": _without_unset(plain_data(asdict(study.rubric))),
        "design": _design(study),
        "plan": plain_data(asdict(study.plan)),
        "shown": [{"column": s.column, "label": s.label} for s in study.shown],
        "items": [{"id": it.id, "fields": dict(sorted(it.fields.items()))} for it in study.items],
        "raters": [{"id": r.id, "role": r.role} for r in study.raters],
    }
    if study.show_id:
        out["show_id"] = True
    if study.sizing is not None:  # the planned design and its rationale (sizing.json)
        out["sizing"] = study.sizing
    return out


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


_OPTIONAL_DIMENSION_KEYS = ("note", "consent")
"""Dimension keys added after studies were sealed: left out of the hash when unset, so
an existing study keeps its hash."""


def _design(study: Study) -> dict[str, Any]:
    """The design; ``second_rater.select_at`` only when not the default (older studies
    keep their hash)."""
    design = plain_data(asdict(study.design))
    second = design.get("second_rater")
    if isinstance(second, dict) and second.get("select_at") == "generate":
        second.pop("select_at")
    if design.get("scatter_column") is None:  # added later: unset keeps old hashes
        design.pop("scatter_column", None)
    return design


_SEALED_NUMBER_LEVEL = "ratio"
"""The level a number with no ``level`` written was hashed at when studies were first
sealed. Its default is now interval when its ``min`` is below 0; hashing the default
taken would change the hash of a study sealed before, though its spec did not change."""


def _without_unset(rubric: dict[str, Any]) -> dict[str, Any]:
    """The rubric as hashed: optional keys left out when unset, and a number's level as
    the spec wrote it, or :data:`_SEALED_NUMBER_LEVEL` when it wrote none."""
    for dim in rubric.get("dimensions", []):
        for key in _OPTIONAL_DIMENSION_KEYS:
            if dim.get(key) is None:
                dim.pop(key, None)
        if not dim.pop("level_written", True) and dim.get("kind") == "number":
            dim["level"] = _SEALED_NUMBER_LEVEL
    return rubric
