"""``generate_packs``: one locked workbook per rater, the blinded manifest, and the seal.

Output, inside the study folder (or ``out``):

* ``packs/<pattern>.xlsx`` per rater (and ``<stem>-sitting2.xlsx`` when the design has
  repeats), laid out as :mod:`sheetflow.workbook.layout` describes;
* ``packs/manifest.json``, the blinded manifest ``collect`` reads (no arm, no seed);
* ``packs/mailing-list.csv`` and, with ``emails=True``, ``packs/eml/<stem>.eml`` drafts;
* ``sealed/key.json``, ``sealed/key.sha256``, ``sealed/plan.lock.json`` (see
  :mod:`sheetflow.seal`).

The same spec and seeds give byte-identical packs, manifest and key: assignment comes
from :mod:`sheetflow.assign`, the workbook creation time is the study's date, and
nothing else carries a timestamp.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import html
import json
import re
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .assign import Assignment, assign, response_text
from .errors import UsageError
from .mail import build_eml, mailing_list_csv
from .seal import PLAN_LOCK_FILE, SEALED_DIR, dump_json, write_seal
from .study import Rater, Study, load_study
from .workbook import layout as L
from .workbook.writer import CardSpec, PackSpec, write_pack

MAILING_LIST = "mailing-list.csv"
EML_DIR = "eml"
SITTING2_SUFFIX = "-sitting2"


@dataclass(frozen=True)
class PackInfo:
    """One written workbook."""

    rater_id: str
    sitting: int
    path: Path
    cards: int


@dataclass
class GenerateResult:
    """What :func:`generate_packs` wrote, with the hashes to publish."""

    study_id: str
    spec_hash: str
    key_sha256: str
    packs: list[PackInfo]
    manifest_path: Path
    key_path: Path
    key_hash_path: Path
    plan_lock_path: Path
    mailing_list_path: Path
    eml_paths: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    def hash_lines(self) -> list[str]:
        """The lines the coordinator publishes (sha256sum-style)."""
        return [f"{self.spec_hash}  spec ({self.study_id})",
                f"{self.key_sha256}  {SEALED_DIR}/key.json"]


def generate_packs(study_dir: str | Path, out: str | Path | None = None, *,
                   emails: bool = False, force: bool = False) -> GenerateResult:
    """Generate every rater's workbook, the blinded manifest and the sealed key.

    Parameters
    ----------
    study_dir : str or Path
        The study folder (``study.toml``, items, raters).
    out : str or Path, optional
        Where ``packs/`` and ``sealed/`` go; the study folder by default.
    emails : bool
        Also write one ``.eml`` draft per pack in ``packs/eml/``.
    force : bool
        Replace an existing seal made for a different spec hash.

    Returns
    -------
    GenerateResult

    Raises
    ------
    SpecError
        The study does not load.
    UsageError
        ``sealed/`` already holds a plan for another spec (without ``force``).
    SheetflowError
        A workbook could not be written (the message names the item).
    """
    study = load_study(study_dir)
    root = Path(out) if out is not None else study.root
    spec_hash = study.hash
    _refuse_other_seal(root, spec_hash, force)
    packs_dir = root / L.PACKS_DIR
    packs_dir.mkdir(parents=True, exist_ok=True)
    created = _created(study)
    assignments = [a for r in study.raters for a in _sittings(study, r)]
    infos, entries = [], []
    for a in assignments:
        path = packs_dir / pack_file_name(study, a.rater, a.sitting)
        identity = pack_identity(study, spec_hash, a.rater, a.sitting)
        layout = write_pack(path, _pack_spec(study, a, identity, created))
        entries.append({"file": path.name, "rater_id": a.rater.id, "role": a.rater.role,
                        "sitting": a.sitting, "identity": identity, **layout})
        infos.append(PackInfo(a.rater.id, a.sitting, path, len(a.slots)))
    manifest_bytes = dump_json(_manifest(study, spec_hash, entries), compact=True)
    manifest_path = packs_dir / L.MANIFEST_FILE
    manifest_path.write_bytes(manifest_bytes)
    seal = write_seal(root, _key(study, spec_hash, assignments),
                      spec_hash=spec_hash,
                      manifest_sha256=hashlib.sha256(manifest_bytes).hexdigest(),
                      version=__version__)
    mailing = packs_dir / MAILING_LIST
    mailing.write_bytes(mailing_list_csv([(a.rater, a.sitting, i.path.name)
                                          for a, i in zip(assignments, infos, strict=True)]))
    result = GenerateResult(study.id, spec_hash, seal.key_sha256, infos, manifest_path,
                            seal.key_path, seal.key_hash_path, seal.plan_lock_path, mailing)
    if emails:
        _write_drafts(study, assignments, infos, packs_dir / EML_DIR, result)
    result.warnings += blinding_leaks(study, [i.path for i in infos] + [manifest_path])
    return result


def pack_file_name(study: Study, rater: Rater, sitting: int) -> str:
    """The workbook name: the study's pattern, with ``-sitting2`` before ``.xlsx``."""
    name = study.pack_file_name(rater)
    if sitting == 1:
        return name
    stem = name[: -len(".xlsx")] if name.lower().endswith(".xlsx") else name
    return f"{stem}{SITTING2_SUFFIX}.xlsx"


def pack_identity(study: Study, spec_hash: str, rater: Rater, sitting: int) -> dict[str, str]:
    """The identity embedded in a pack (all text), keyed as in ``layout.IDENTITY_KEYS``."""
    return {"schema_version": L.SCHEMA_VERSION, "study_id": study.id, "spec_hash": spec_hash,
            "rater_id": rater.id, "sitting": str(sitting), "pack_id": f"{rater.id}-s{sitting}"}


def blinding_leaks(study: Study, paths: list[Path]) -> list[str]:
    """Where an arm id appears in a pack (any zip part) or the manifest.

    A shared string that is part of the study's own instructions (shown verbatim) is
    not a leak: protocols may use an arm's name as an ordinary word ("baseline").

    Parameters
    ----------
    study : Study
    paths : list of Path
        Workbooks and JSON files to search.

    Returns
    -------
    list of str
        One warning per file, part and arm id found (empty when blind).
    """
    arm_ids = [a.id for a in study.design.arms]
    found = []
    for path in paths:
        for part, data in _parts(path):
            if part == "xl/sharedStrings.xml":
                data = _without_instruction_strings(data, study.instructions)
            for arm in arm_ids:
                if arm.encode("utf-8") in data:
                    found.append(f"{path.name}: {part} contains arm id {arm!r}; check the "
                                 "spec's texts")
    return found


_SHARED_STRING = re.compile(rb"<si>(.*?)</si>", re.DOTALL)
_TAG = re.compile(r"<[^>]+>")


def _without_instruction_strings(data: bytes, instructions: str) -> bytes:
    """Shared strings XML without the strings that are verbatim pieces of the instructions."""
    def keep(match: re.Match[bytes]) -> bytes:
        text = html.unescape(_TAG.sub("", match.group(1).decode("utf-8")))
        return b"" if text and text in instructions else match.group(0)
    return _SHARED_STRING.sub(keep, data)


def _parts(path: Path) -> list[tuple[str, bytes]]:
    if path.suffix != ".xlsx":
        return [(path.name, path.read_bytes())]
    with zipfile.ZipFile(path) as zf:
        return [(n, zf.read(n)) for n in zf.namelist()]


def _refuse_other_seal(root: Path, spec_hash: str, force: bool) -> None:
    lock_path = root / SEALED_DIR / PLAN_LOCK_FILE
    if force or not lock_path.exists():
        return
    try:
        frozen = json.loads(lock_path.read_text(encoding="utf-8")).get("spec_hash")
    except (ValueError, UnicodeDecodeError, AttributeError):
        frozen = None
    if frozen != spec_hash:
        raise UsageError(f"{SEALED_DIR}/{PLAN_LOCK_FILE} was sealed for spec hash {frozen}, "
                         f"but the spec now hashes to {spec_hash}; packs already sent out would "
                         "no longer match. Use --force to replace the seal")


def _created(study: Study) -> dt.datetime:
    """The fixed creation time written into every pack (the study's date)."""
    try:
        return dt.datetime.fromisoformat(study.date).replace(tzinfo=None)
    except ValueError:
        return dt.datetime(2000, 1, 1)


def _sittings(study: Study, rater: Rater) -> list[Assignment]:
    sittings = [assign(study, rater, 1)]
    if study.design.repeats is not None:
        sittings.append(assign(study, rater, 2))
    return sittings


def _pack_spec(study: Study, a: Assignment, identity: dict[str, str],
               created: dt.datetime) -> PackSpec:
    labels = study.design.labels if study.design.paired else ()
    cards = []
    for slot in a.slots:
        shown = tuple((s.column, s.label, slot.item.fields.get(s.column, ""))
                      for s in study.shown)
        keys: tuple[str | None, ...] = labels or (None,)
        responses = tuple((label, response_text(study, slot, label)) for label in keys)
        cards.append(CardSpec(slot.item.id, shown, responses))
    sitting_note = " (second sitting)" if a.sitting == 2 else ""
    return PackSpec(
        title=study.title + sitting_note,
        instructions=study.instructions,
        identity=identity,
        labels=tuple(labels),
        dimensions=study.rubric.dimensions,
        totals=study.rubric.totals,
        cards=tuple(cards),
        batch_size=study.design.batch_size,
        include_study_answers=a.sitting == 1,
        created=created,
        rater_label=f"Workbook for rater {a.rater.id}{sitting_note}",
    )


def _manifest(study: Study, spec_hash: str, entries: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "manifest_format": L.MANIFEST_FORMAT,
        "schema_version": L.SCHEMA_VERSION,
        "study_id": study.id,
        "spec_hash": spec_hash,
        "sheetflow_version": __version__,
        "design": study.design.kind,
        "labels": list(study.design.labels) if study.design.paired else [],
        "scoring_sheet": L.SCORING_SHEET,
        "identity_sheet": L.IDENTITY_SHEET,
        "packs": entries,
    }


def _key(study: Study, spec_hash: str, assignments: list[Assignment]) -> dict[str, Any]:
    d = study.design
    packs = []
    for a in assignments:
        packs.append({
            "rater_id": a.rater.id, "role": a.rater.role, "sitting": a.sitting,
            "file": pack_file_name(study, a.rater, a.sitting),
            "seeds": a.seeds,
            "order": [s.item.id for s in a.slots],
            "cases": [_key_case(study, k, s) for k, s in enumerate(a.slots, 1)],
        })
    return {
        "key_format": 1,
        "study_id": study.id,
        "spec_hash": spec_hash,
        "design": {"kind": d.kind, "labels": list(d.labels) if d.paired else [],
                   "arms": [a.id for a in d.arms], "seed": d.seed,
                   "repeats_seed": d.repeats.seed if d.repeats else None,
                   "shuffle": d.shuffle,
                   "rng": "random.Random(int.from_bytes(sha256(derivation).digest()[:8], "
                          "'big'))"},
        "packs": packs,
    }


def _key_case(study: Study, position: int, slot: Any) -> dict[str, Any]:
    if slot.sides:
        return {"position": position, "item_id": slot.item.id, "sides": dict(slot.sides)}
    arm = slot.item.fields.get(study.design.arm_column or "", "")
    return {"position": position, "item_id": slot.item.id, "arm": arm}


def _write_drafts(study: Study, assignments: list[Assignment], infos: list[PackInfo],
                  eml_dir: Path, result: GenerateResult) -> None:
    eml_dir.mkdir(parents=True, exist_ok=True)
    for a, info in zip(assignments, infos, strict=True):
        if not a.rater.email:
            result.warnings.append(f"rater {a.rater.id} has no email address in "
                                   f"{study.raters_file}; no draft written for {info.path.name}")
            continue
        path = eml_dir / (info.path.stem + ".eml")
        path.write_bytes(build_eml(study, a.rater, info.path))
        result.eml_paths.append(path)
