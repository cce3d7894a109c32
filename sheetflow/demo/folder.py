"""Which files of a folder an earlier demo wrote, so ``demo --force`` clears only those.

The demo writes a fixed set: the sample study's files (copied unchanged), the packs,
the seal, the returns its simulated raters plant and the outputs of collect and
analyze. Anything else in the folder (a note, a real return, a sample file edited
since) is the user's, and ``--force`` refuses rather than delete it.
"""

from __future__ import annotations

from pathlib import Path

from ..collect.outputs import COLLECTION_FILE, INCOMPLETE_RATINGS_NAME, LOCK_FILE, RATINGS_NAME
from ..packs.generate import MAILING_LIST
from ..packs.seal_files import KEY_FILE, KEY_HASH_FILE, PLAN_LOCK_FILE, SEALED_DIR
from ..packs.secret import SECRET_FILE
from ..report.feedback import feedback_name
from ..report.outputs import RUN_FILE, UNBLINDED_FILE
from ..spec.study import load_study
from ..spec.templates import data_dir
from ..staging import JOURNAL, PARTIAL, PREVIOUS
from ..workbook import layout as L

SHOWN = 3  # unexpected files named in the refusal; the rest are counted


def sample_folder(sample: str) -> Path:
    """The bundled sample study the demo copies."""
    return data_dir("samples") / sample


def foreign_files(root: Path, sample: str) -> list[str]:
    """The files under ``root`` (relative, sorted) that a demo of ``sample`` did not
    write, or that differ from the copy it made of the sample's own files."""
    copied = _copied(sample)
    written = _written(sample)
    foreign = []
    for path in sorted(p for p in root.rglob("*") if not p.is_dir() or p.is_symlink()):
        rel = path.relative_to(root).as_posix()
        if rel in copied:
            if path.is_symlink() or path.read_bytes() != copied[rel].read_bytes():
                foreign.append(f"{rel} (changed since the demo wrote it)")
        elif rel not in written and not _staged(path, root):
            foreign.append(rel)
    return foreign


def foreign_line(root: Path, foreign: list[str]) -> str:
    """The refusal: the first few files the demo did not write, and what to do."""
    shown = ", ".join(foreign[:SHOWN])
    more = f" and {len(foreign) - SHOWN} more" if len(foreign) > SHOWN else ""
    return (f"{root}: holds files the demo did not write ({shown}{more}), so --force "
            "leaves the folder alone; move them elsewhere or choose a new folder")


def _copied(sample: str) -> dict[str, Path]:
    """The sample's files the demo copies, by their path in the demo folder."""
    folder = sample_folder(sample)
    copied = {p.relative_to(folder).as_posix(): p for p in folder.rglob("*") if p.is_file()}
    copied["README.md"] = data_dir("samples") / "README.md"
    return copied


def _written(sample: str) -> set[str]:
    """What generate, the simulated raters, collect and analyze write in a demo."""
    study = load_study(sample_folder(sample))
    packs = {study.pack_file_name(r, sitting) for r in study.raters for sitting in (1, 2)}
    out = {RATINGS_NAME, INCOMPLETE_RATINGS_NAME, COLLECTION_FILE, LOCK_FILE,
           "validation.xlsx", "analysis.xlsx", "summary.json", UNBLINDED_FILE, RUN_FILE,
           *(feedback_name(r.id) for r in study.raters)}
    return ({f"{L.PACKS_DIR}/{name}" for name in {*packs, L.MANIFEST_FILE, MAILING_LIST}}
            | {f"{L.RETURNS_DIR}/{name}" for name in packs}
            | {f"{SEALED_DIR}/{name}" for name in
               (KEY_FILE, KEY_HASH_FILE, PLAN_LOCK_FILE, SECRET_FILE)}
            | {f"{L.OUT_DIR}/{name}" for name in out})


def _staged(path: Path, root: Path) -> bool:
    """A file a demo step stopped half way left: staged (``.NAME.PID.partial``), kept
    aside (``.NAME.PID.previous``) or the record of its commit
    (:mod:`sheetflow.staging`)."""
    folder = path.parent.relative_to(root).as_posix()
    if folder not in {".", L.PACKS_DIR, L.RETURNS_DIR, SEALED_DIR, L.OUT_DIR}:
        return False
    return path.name == JOURNAL or (path.name.startswith(".") and (
        path.name.endswith(PARTIAL) or path.name.endswith(PREVIOUS)))
