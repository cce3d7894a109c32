"""The sealed key, its published hash, the plan lock, and checking them.

``generate`` writes, in ``sealed/``:

* ``key.json``: per rater and sitting the card order, label -> arm per case, and the
  seed derivations (kept private by the coordinator until analysis);
* ``key.sha256``: ``<hex>  key.json`` (``sha256sum`` format, so ``sha256sum -c`` works);
* ``plan.lock.json``: the spec hash, the key hash, the manifest hash and the sheetflow
  version, frozen at generation.

:func:`verify_seal` recomputes the key's sha256, compares it with ``key.sha256`` and the
plan lock, and compares the frozen spec hash with the study as it is now.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .study import load_study

SEALED_DIR = "sealed"
KEY_FILE = "key.json"
KEY_HASH_FILE = "key.sha256"
PLAN_LOCK_FILE = "plan.lock.json"
KEY_FORMAT = 1


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


@dataclass(frozen=True)
class Seal:
    """Where the seal was written and its hashes."""

    key_path: Path
    key_hash_path: Path
    plan_lock_path: Path
    key_sha256: str
    spec_hash: str


def write_seal(root: Path, key: dict[str, Any], *, spec_hash: str, manifest_sha256: str,
               version: str) -> Seal:
    """Write ``key.json``, ``key.sha256`` and ``plan.lock.json`` under ``root/sealed``.

    Parameters
    ----------
    root : Path
        The output folder (normally the study folder).
    key : dict
        The unblinding key (see :mod:`sheetflow.generate`).
    spec_hash : str
        The spec hash frozen by this generation.
    manifest_sha256 : str
        The sha256 of ``packs/manifest.json``.
    version : str
        The sheetflow version that generated the packs.

    Returns
    -------
    Seal
    """
    sealed = root / SEALED_DIR
    sealed.mkdir(parents=True, exist_ok=True)
    key_bytes = dump_json(key)
    key_sha = hashlib.sha256(key_bytes).hexdigest()
    key_path = sealed / KEY_FILE
    key_path.write_bytes(key_bytes)
    hash_path = sealed / KEY_HASH_FILE
    hash_path.write_bytes(f"{key_sha}  {KEY_FILE}\n".encode())
    lock = {"spec_hash": spec_hash, "key_sha256": key_sha, "manifest_sha256": manifest_sha256,
            "sheetflow_version": version, "study_id": key["study_id"]}
    lock_path = sealed / PLAN_LOCK_FILE
    lock_path.write_bytes(dump_json(lock))
    return Seal(key_path, hash_path, lock_path, key_sha, spec_hash)


@dataclass
class SealCheck:
    """The outcome of :func:`verify_seal`: ``ok`` when ``problems`` is empty."""

    key_sha256: str = ""
    spec_hash: str = ""
    current_spec_hash: str = ""
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether the seal holds and the spec is unchanged."""
        return not self.problems


def verify_seal(study_dir: str | Path, out: str | Path | None = None) -> SealCheck:
    """Check the seal of the study in ``study_dir``.

    Parameters
    ----------
    study_dir : str or Path
        The study folder.
    out : str or Path, optional
        The folder holding ``sealed/`` when it is not the study folder.

    Returns
    -------
    SealCheck
        Each problem is one line naming the file and what differs.

    Raises
    ------
    SpecError
        When the study itself no longer loads.
    """
    study_dir = Path(study_dir)
    sealed = Path(out or study_dir) / SEALED_DIR
    check = SealCheck()
    paths = {name: sealed / name for name in (KEY_FILE, KEY_HASH_FILE, PLAN_LOCK_FILE)}
    missing = [n for n, p in paths.items() if not p.exists()]
    if missing:
        check.problems.append(f"{sealed}: {', '.join(missing)} missing; run 'sheetflow "
                              f"generate {study_dir}' first")
        return check
    check.key_sha256 = sha256_file(paths[KEY_FILE])
    published = _published_hash(paths[KEY_HASH_FILE])
    if published != check.key_sha256:
        check.problems.append(f"{SEALED_DIR}/{KEY_FILE} has sha256 {check.key_sha256} but "
                              f"{KEY_HASH_FILE} says {published or 'nothing readable'}: the key "
                              "was changed after sealing")
    lock = _read_lock(paths[PLAN_LOCK_FILE], check)
    if lock is None:
        return check
    if lock.get("key_sha256") != check.key_sha256 and published == check.key_sha256:
        check.problems.append(f"{SEALED_DIR}/{PLAN_LOCK_FILE} records key sha256 "
                              f"{lock.get('key_sha256')} but the key has {check.key_sha256}")
    check.spec_hash = str(lock.get("spec_hash", ""))
    check.current_spec_hash = load_study(study_dir).hash
    if check.spec_hash != check.current_spec_hash:
        check.problems.append(f"the study spec changed after generate: frozen spec hash "
                              f"{check.spec_hash}, current {check.current_spec_hash}")
    return check


def _published_hash(path: Path) -> str:
    parts = path.read_text(encoding="utf-8", errors="replace").split()
    return parts[0].lower() if len(parts) == 2 and parts[1] == KEY_FILE else ""


def _read_lock(path: Path, check: SealCheck) -> dict[str, Any] | None:
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        check.problems.append(f"{SEALED_DIR}/{PLAN_LOCK_FILE} is not valid JSON ({exc})")
        return None
    if not isinstance(lock, dict):
        check.problems.append(f"{SEALED_DIR}/{PLAN_LOCK_FILE} is not a JSON object")
        return None
    return lock
