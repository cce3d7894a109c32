"""The seal's files: their names under ``sealed/``, the bytes they are written as, and
the input files the seal covers besides the spec.

Both sides of the seal read these: :mod:`.seal`, which writes it, and
:mod:`.seal_check`, which checks it.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from ..errors import MissingStepError, SheetflowError
from ..spec.study import Study

SEALED_DIR = "sealed"
KEY_FILE = "key.json"
KEY_HASH_FILE = "key.sha256"
PLAN_LOCK_FILE = "plan.lock.json"
SELECTION_FILE = "second-rater-selection.json"  # protocol 002: the draw at data lock
LOCK_RECORD_FILE = "lock-record.json"  # protocol 002: the packs the lock added
LOCK_RECORD_HASH_FILE = "lock-record.sha256"
KEY_FORMAT = 2  # 2: draws keyed with the study secret (key records secret_sha256)


def dump_json(data: Any, *, compact: bool = False) -> bytes:
    """Stable JSON bytes: sorted keys, UTF-8, final newline.

    Two-space indent for files people read (key, plan lock); ``compact`` (one line, the
    fast C encoder) for the manifest, which can hold hundreds of thousands of cells.
    """
    if compact:
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    else:
        text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False)
    return (text + "\n").encode()


def sha256_file(path: Path) -> str:
    """The sha256 (hex) of a file's bytes."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def require_seal(study_dir: Path, root: Path | None = None) -> dict[str, Path]:
    """The seal's files, by name; without opening any.

    Raises
    ------
    MissingStepError
        A file is missing (``generate`` has not run), naming the command to run.
    """
    sealed = (root or study_dir) / SEALED_DIR
    paths = {name: sealed / name for name in (KEY_FILE, KEY_HASH_FILE, PLAN_LOCK_FILE)}
    missing = [n for n, p in paths.items() if not p.exists()]
    if missing:
        raise MissingStepError(f"{sealed}: {', '.join(missing)} missing",
                               f"sheetflow generate {study_dir}")
    return paths


def input_hashes(study: Study) -> dict[str, str]:
    """The sha256 of each input file the analysis reads besides the spec.

    Today that is the internal scores (``[analysis.params] internal_scores_file``),
    which the direction and Spearman checks compare with: sealed at generate so they
    cannot be edited once the ratings are seen. Keys are paths relative to the study.
    The hashes are those :func:`~sheetflow.spec.study.load_study` took of the bytes it
    checked (:attr:`~sheetflow.spec.model.Study.input_sha256`): the file is not read
    again, so bytes written after the check are never sealed as checked.

    Raises
    ------
    SheetflowError
        ``study`` was not loaded with the file checked (no hash was taken of it).
    """
    hashes = {}
    for name in sealed_input_names(study):
        if name not in study.input_sha256:
            raise SheetflowError(f"{study.root / name}: not read when the study was "
                                 "checked, so it cannot be sealed; load the study with "
                                 "load_study and generate again")
        hashes[name] = study.input_sha256[name]
    return hashes


def sealed_input_names(study: Study) -> list[str]:
    """The input files :func:`input_hashes` seals, without reading them."""
    name = study.plan.params.get("internal_scores_file")
    return [name] if isinstance(name, str) and name else []
