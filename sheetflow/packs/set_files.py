"""The files of a ``generate`` set besides the packs and the seal.

* :func:`stage_drafts`: the ``.eml`` drafts (``--eml``), staged in the same set as the
  packs they attach, so that they go in whole or not at all, with the seal;
* :func:`previous_files`: the packs and drafts the previous ``generate`` wrote, as its
  manifest records them, and :func:`stale_files`: those the new set leaves behind (a
  rater since removed, a draft attaching a pack that changed), which the set removes as
  it goes in. Only files sheetflow wrote are named: nothing else in ``packs/`` is
  touched.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import SheetflowError
from ..spec.study import Study
from ..staging import write_file
from ..workbook import layout as L
from .assign import Assignment
from .mail import build_eml
from .manifest import open_manifest

EML_DIR = "eml"


@dataclass
class StagedDrafts:
    """The drafts staged for the packs of one run."""

    paths: list[Path] = field(default_factory=list)
    """The final path of each draft staged."""
    warnings: list[str] = field(default_factory=list)
    """One per pack of a person without an address (no draft written for it)."""


@dataclass(frozen=True)
class PreviousFile:
    """A pack, or a draft of one, that the previous ``generate`` wrote."""

    path: Path
    rater_id: str
    pack: Path
    """The pack itself, or the pack a draft attaches."""
    pack_sha256: str
    """The sha256 the manifest records for :attr:`pack`."""

    @property
    def draft(self) -> bool:
        """Whether this is a draft (else a pack)."""
        return self.path != self.pack


def draft_path(eml_dir: Path, pack_file: str, sitting: int) -> Path:
    """Where the draft of a pack goes: sitting 2 apart, to be sent only 24 h after
    sitting 1 is back."""
    folder = eml_dir if sitting == 1 else eml_dir / f"sitting-{sitting}"
    return folder / (Path(pack_file).stem + ".eml")


def stage_drafts(study: Study, drafted: list[tuple[Assignment, Path, Path]],
                 judges: frozenset[str], eml_dir: Path,
                 stage: Callable[[Path], Path]) -> StagedDrafts:
    """Stage a draft per pack to send, attaching the pack's staged bytes.

    ``drafted`` holds, per pack, its assignment, final path and staged path. A person's
    pack without an address is warned of; a judge's is not sent at all
    (``import-judges`` fills it), so it gets no draft and no warning.
    """
    drafts = StagedDrafts()
    for a, final, staged in drafted:
        if a.rater.id in judges:
            continue
        if not a.rater.email:
            drafts.warnings.append(f"rater {a.rater.id} has no email address in "
                                   f"{study.raters_file}; no draft written for {final.name}")
            continue
        path = draft_path(eml_dir, final.name, a.sitting)
        write_file(stage(path), build_eml(study, a.rater, final, a.sitting,
                                          cases=len(a.slots), staged=staged))
        drafts.paths.append(path)
    return drafts


def previous_files(root: Path) -> list[PreviousFile]:
    """The packs the manifest in ``root/packs`` lists, and their drafts, that exist.

    A manifest sheetflow cannot read names none: nothing is removed on its word.
    """
    if not (root / L.PACKS_DIR / L.MANIFEST_FILE).is_file():
        return []
    try:
        manifest = open_manifest(root)
    except SheetflowError:
        return []
    try:
        heads = list(manifest.heads)
    finally:
        manifest.close()
    packs_dir = root / L.PACKS_DIR
    found = []
    for head in heads:
        if Path(head.file).name != head.file:  # a name with a folder is none generate wrote
            continue
        pack = packs_dir / head.file
        found.append(PreviousFile(pack, head.rater_id, pack, head.sha256))
        found.append(PreviousFile(draft_path(packs_dir / EML_DIR, head.file, head.sitting),
                                  head.rater_id, pack, head.sha256))
    return [f for f in found if f.path.is_file()]


def stale_files(previous: list[PreviousFile], packs: dict[Path, str],
                redrafted: frozenset[str]) -> list[PreviousFile]:
    """The previous files the new set does not vouch for, to remove as it goes in.

    Parameters
    ----------
    previous : list of PreviousFile
    packs : dict
        Final path -> sha256 of each pack the new set writes.
    redrafted : frozenset of str
        The raters whose drafts the new set writes: it writes every draft of theirs it
        keeps, and their previous ones it does not write again go. Any other previous
        draft stays only while it attaches the very bytes of a pack the new set writes.
    """
    stale = []
    for old in previous:
        if not old.draft:
            stale += [] if old.path in packs else [old]
            continue
        same = bool(old.pack_sha256) and packs.get(old.pack) == old.pack_sha256
        stale += [old] if old.rater_id in redrafted or not same else []
    return stale
