"""Writing the sealed key, its published hash and the plan lock; reading what they froze.

``generate`` writes, in ``sealed/``:

* ``secret``: the study secret every draw is keyed with (:mod:`.secret`);
* ``key.json``: per rater and sitting the card order, label -> arm per case, the seed
  derivations, the spec hash, the sha256 of the secret and of each input file the
  analysis reads (the internal scores) (kept private by the coordinator until analysis);
* ``key.sha256``: ``<hex>  key.json`` (``sha256sum`` format, so ``sha256sum -c`` works);
* ``plan.lock.json``: the spec hash, the key hash, the manifest hash, the input hashes
  and the sheetflow version, frozen at generation.

:func:`write_lock_record` seals the packs a data lock adds (protocol 002);
:func:`sealed_manifest_sha256` and :func:`spec_drift` read what the seal froze without
checking it. Checking the seal (:func:`verify_seal`, :func:`unseal`) is
:mod:`.seal_check`; the seal's file names and byte form are :mod:`.seal_files`. Both are
imported from here too, the one place the rest of sheetflow reads the seal from.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import SealError
from ..spec.study import SPEC_FILE, Study, load_study
from ..staging import write_file
from .seal_check import (
    SealCheck,
    check_collected_manifest,
    check_published,
    unseal,
    verify_seal,
)
from .seal_files import (
    KEY_FILE,
    KEY_FORMAT,
    KEY_HASH_FILE,
    LOCK_RECORD_FILE,
    LOCK_RECORD_HASH_FILE,
    PLAN_LOCK_FILE,
    SEALED_DIR,
    SELECTION_FILE,
    dump_json,
    input_hashes,
    require_seal,
    sealed_input_names,
    sha256_file,
)
from .secret import SECRET_FILE, secret_sha256, write_private, write_secret

__all__ = [
    "KEY_FILE",
    "KEY_FORMAT",
    "KEY_HASH_FILE",
    "LOCK_RECORD_FILE",
    "LOCK_RECORD_HASH_FILE",
    "PLAN_LOCK_FILE",
    "SEALED_DIR",
    "SELECTION_FILE",
    "Seal",
    "SealCheck",
    "check_collected_manifest",
    "check_published",
    "dump_json",
    "input_hashes",
    "load_generated_study",
    "require_seal",
    "sealed_input_names",
    "sealed_inputs",
    "sealed_manifest_sha256",
    "sha256_file",
    "spec_drift",
    "unseal",
    "verify_seal",
    "write_lock_record",
    "write_seal",
]


@dataclass(frozen=True)
class Seal:
    """Where the seal was written and its hashes."""

    key_path: Path
    key_hash_path: Path
    plan_lock_path: Path
    key_sha256: str
    spec_hash: str


def write_seal(root: Path, key: dict[str, Any], *, spec_hash: str, manifest_sha256: str,
               version: str, secret: bytes, inputs: dict[str, str] | None = None,
               stage: Callable[[Path], Path] | None = None) -> Seal:
    """Write ``secret``, ``key.json``, ``key.sha256`` and ``plan.lock.json`` under
    ``root/sealed``.

    Parameters
    ----------
    root : Path
        The output folder (normally the study folder).
    key : dict
        The unblinding key (see :mod:`sheetflow.packs.generate`).
    spec_hash : str
        The spec hash frozen by this generation.
    manifest_sha256 : str
        The sha256 of ``packs/manifest.json``.
    version : str
        The sheetflow version that generated the packs.
    secret : bytes
        The study secret the packs were drawn with (see :mod:`.secret`); the key
        records its sha256, so the published key hash commits to it.
    inputs : dict, optional
        sha256 of each input file the analysis reads (see :func:`input_hashes`),
        recorded in the key and the plan lock.
    stage : callable, optional
        Final path -> where to write it now (:meth:`sheetflow.staging.OutputSet.stage`),
        so the seal is replaced with the packs it seals; written in place by default.

    Returns
    -------
    Seal
    """
    sealed = root / SEALED_DIR
    sealed.mkdir(parents=True, exist_ok=True)
    sealed.chmod(0o700)  # the key and the secret: their owner's alone
    at = stage or (lambda path: path)
    write_secret(at(sealed / SECRET_FILE), secret)
    # the manifest maps each card to its item: the key (and so the published hash)
    # commits to it, so an edited manifest and plan lock cannot move ratings unseen
    key = {**key, "spec_hash": spec_hash, "inputs": dict(inputs or {}),
           "secret_sha256": secret_sha256(secret), "manifest_sha256": manifest_sha256}
    key_bytes = dump_json(key)
    key_sha = hashlib.sha256(key_bytes).hexdigest()
    key_path = sealed / KEY_FILE
    write_private(at(key_path), key_bytes)
    hash_path = sealed / KEY_HASH_FILE
    write_file(at(hash_path), f"{key_sha}  {KEY_FILE}\n".encode())
    lock = {"spec_hash": spec_hash, "key_sha256": key_sha, "manifest_sha256": manifest_sha256,
            "sheetflow_version": version, "study_id": key["study_id"], "inputs": key["inputs"]}
    lock_path = sealed / PLAN_LOCK_FILE
    write_file(at(lock_path), dump_json(lock))
    return Seal(key_path, hash_path, lock_path, key_sha, spec_hash)


def write_lock_record(root: Path, key: dict[str, Any], *, manifest_sha256: str,
                      selection_sha256: str,
                      stage: Callable[[Path], Path] | None = None) -> Seal:
    """Seal the packs a data lock adds, chained to the key sealed at generate.

    The key sealed at generate is never rewritten (its hash was published before
    scoring): its packs must come out of the lock unchanged, and the new ones (the
    second raters') go into ``sealed/lock-record.json`` with the sha256 of the key they
    extend, of the selection they were drawn by and of the manifest that now holds
    them; ``lock-record.sha256`` is its own hash, to publish beside the first.

    Raises
    ------
    SealError
        A pack sealed at generate would change, or the seal is unreadable.
    """
    sealed = root / SEALED_DIR
    key_bytes = (sealed / KEY_FILE).read_bytes()
    sealed_key = json.loads(key_bytes.decode("utf-8"))
    before = {(p["rater_id"], p["sitting"]): p for p in sealed_key.get("packs", [])}
    added = []
    for pack in key["packs"]:
        old = before.get((pack["rater_id"], pack["sitting"]))
        if old is None:
            added.append(pack)
        elif old != pack:
            raise SealError(f"{SEALED_DIR}/{KEY_FILE}: the lock would change the pack of "
                            f"{pack['rater_id']} (sitting {pack['sitting']}) sealed at "
                            "generate; the spec or the secret changed since")
    record = {"record_format": 1, "kind": "second-rater lock",
              "chained_to": hashlib.sha256(key_bytes).hexdigest(),
              "selection_sha256": selection_sha256, "manifest_sha256": manifest_sha256,
              "packs": added}
    data = dump_json(record)
    digest = hashlib.sha256(data).hexdigest()
    at = stage or (lambda path: path)
    path = sealed / LOCK_RECORD_FILE
    write_file(at(path), data)
    hash_path = sealed / LOCK_RECORD_HASH_FILE
    write_file(at(hash_path), f"{digest}  {LOCK_RECORD_FILE}\n".encode())
    return Seal(path, hash_path, sealed / PLAN_LOCK_FILE, digest, str(key.get("spec_hash", "")))


def sealed_manifest_sha256(root: Path) -> str | None:
    """The sha256 the manifest was sealed with: the data lock's record's when there is
    one (the lock adds packs), else the plan lock's; None for no seal.

    Read by ``collect`` (which never opens the key): :func:`verify_seal` ties the plan
    lock's value to the key's.
    """
    sealed = root / SEALED_DIR
    for name in (LOCK_RECORD_FILE, PLAN_LOCK_FILE):
        path = sealed / name
        if path.is_file():
            try:
                doc = json.loads(path.read_bytes().decode("utf-8"))
            except (OSError, UnicodeDecodeError, json.JSONDecodeError):
                raise SealError(f"{SEALED_DIR}/{name} is not valid JSON: the seal is "
                                "damaged; restore it from the generate run") from None
            value = doc.get("manifest_sha256") if isinstance(doc, dict) else None
            return value if isinstance(value, str) else None
    return None


def sealed_inputs(study_dir: str | Path) -> dict[str, str]:
    """The sha256 generate sealed of each input file (``sealed/plan.lock.json``'s
    ``inputs``); none when the study was not generated or the lock is unreadable (a
    broken lock is named by verify and analyze)."""
    lock_path = Path(study_dir) / SEALED_DIR / PLAN_LOCK_FILE
    try:
        inputs = json.loads(lock_path.read_text(encoding="utf-8")).get("inputs")
    except (OSError, ValueError, AttributeError):
        return {}
    if not isinstance(inputs, dict):
        return {}
    return {str(k): v for k, v in inputs.items() if isinstance(v, str)}


def load_generated_study(study_dir: str | Path) -> Study:
    """:func:`~sheetflow.spec.study.load_study`, refusing an input file that changed
    after generate (the plan lock's ``inputs``) before checking what it holds: an edit
    to a sealed file is told as one, whether or not the new content is valid.

    Raises
    ------
    SealError
        A sealed input file has other bytes than generate sealed.
    SpecError
        The study does not load.
    """
    return load_study(study_dir, sealed_inputs(study_dir))


def spec_drift(study_dir: str | Path, study: Study) -> str:
    """One line when the study was generated and its spec changed since; ``""`` if not.

    ``check``, ``status``, ``collect``, ``remind`` and ``send`` call this so an edited
    spec is named at once, not only when ``analyze`` refuses the seal. The line says how to recover.

    Parameters
    ----------
    study_dir : str or Path
        The study folder (its ``sealed/plan.lock.json`` is read when present).
    study : Study
        The study as loaded now.
    """
    lock_path = Path(study_dir) / SEALED_DIR / PLAN_LOCK_FILE
    try:
        frozen = json.loads(lock_path.read_text(encoding="utf-8")).get("spec_hash")
    except (OSError, ValueError, AttributeError):
        return ""  # not generated, or a broken lock that verify and analyze name
    if not isinstance(frozen, str) or not frozen or frozen == study.hash:
        return ""
    return (f"{Path(study_dir) / SPEC_FILE}: the study spec (this file, its items or "
            f"raters) changed after generate: sealed spec hash {frozen[:12]}..., now "
            f"{study.hash[:12]}...; undo the edit so the hash matches again, or, if no "
            f"rater has scored yet, run 'sheetflow generate --force {study_dir}' and send "
            "the new packs")
