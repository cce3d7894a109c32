"""Outputs written whole or not at all, as one set, one run at a time per study.

* :class:`OutputSet` stages each output as a temporary file in its own folder and
  moves them all into place with :func:`os.replace` only when every one was written;
  a run that fails or is killed leaves the previous outputs untouched (a killed run
  can leave hidden ``.*.partial`` files, which the next run removes).
* :func:`study_lock` holds ``out/.lock`` (an exclusive :func:`fcntl.flock`) while a
  collect or analyze runs, so a second one waits a bounded time, then refuses.
* ``out/collection.json`` records ``ratings.csv``'s sha256, row count and sources;
  :func:`verify_ratings` refuses a ratings table that does not match it. The record is
  moved into place last, so a table from a run that stopped half-way never matches.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import SheetflowError
from .returns import file_digest

OUT_DIR = "out"
LOCK_FILE = ".lock"
COLLECTION_FILE = "collection.json"
RATINGS_NAME = "ratings.csv"
LOCK_WAIT = 30.0  # seconds a second run waits for the study lock
PARTIAL = ".partial"  # the end of every staged file's name


class OutputError(SheetflowError):
    """An output set is incomplete, changed since it was written, or busy."""


class OutputSet:
    """Outputs of one run, staged beside their final paths and replaced together.

    Use as a context manager: :meth:`stage` gives the temporary path to write each
    output to; leaving the block without an exception moves every staged file into
    place (in the order staged, so stage the record that vouches for the others last);
    an exception removes them and leaves the old outputs as they were.
    """

    def __init__(self) -> None:
        self._staged: list[tuple[Path, Path]] = []

    def stage(self, path: str | Path) -> Path:
        """The temporary path to write ``path``'s new content to (same folder)."""
        final = Path(path)
        final.parent.mkdir(parents=True, exist_ok=True)
        temp = final.with_name(f".{final.name}.{os.getpid()}{PARTIAL}")
        self._staged.append((temp, final))
        return temp

    def __enter__(self) -> OutputSet:
        return self

    def __exit__(self, kind: Any, error: Any, trace: Any) -> None:
        if kind is not None:
            for temp, _ in self._staged:
                temp.unlink(missing_ok=True)
            return
        for temp, _ in self._staged:
            _fsync(temp)
        for temp, final in self._staged:
            os.replace(temp, final)


def _fsync(path: Path) -> None:
    """Flush a staged file to disk before it replaces the old one."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def remove_partials(folder: Path) -> None:
    """Remove staged files a killed run left behind (only sheetflow's own names)."""
    if folder.is_dir():
        for path in folder.glob(f".*{PARTIAL}"):
            path.unlink(missing_ok=True)


@contextlib.contextmanager
def study_lock(root: str | Path, command: str, wait: float = LOCK_WAIT) -> Iterator[None]:
    """Hold the study's ``out/.lock`` while ``command`` runs.

    Parameters
    ----------
    root : str or Path
        The study folder.
    command : str
        What is asking (``collect``, ``analyze``), for the message.
    wait : float
        Seconds to wait for another run to finish before refusing.

    Raises
    ------
    OutputError
        Another run still held the lock after ``wait`` seconds.
    """
    out = Path(root) / OUT_DIR
    out.mkdir(parents=True, exist_ok=True)
    path = out / LOCK_FILE
    fd = os.open(path, os.O_RDONLY | os.O_CREAT, 0o644)  # the file stays empty
    try:
        _acquire(fd, command, wait)
        yield
    finally:
        os.close(fd)  # closing releases the lock


def _acquire(fd: int, command: str, wait: float) -> None:
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise OutputError(
                    f"{OUT_DIR}/{LOCK_FILE}: another sheetflow collect or analyze is using "
                    f"this study; {command} waited {wait:g} s. Run it again when the other "
                    "has finished") from None
            time.sleep(0.1)


# --------------------------------------------------------------------------- the record


def collection_record(study_id: str, ratings: Path, rows: int,
                      files: list[dict[str, Any]]) -> bytes:
    """The bytes of ``out/collection.json`` for a staged ``ratings.csv``.

    Parameters
    ----------
    study_id : str
    ratings : Path
        The written (staged) ratings table.
    rows : int
        Its number of rating rows (without the header).
    files : list of dict
        The sources: one entry per returned file (``file``, ``sha256``, ``rater``,
        ``used``, and why it was left out; see :func:`sheetflow.collect.run.file_verdicts`).
    """
    record = {"collection_format": 1, "study_id": study_id,
              "ratings": {"file": RATINGS_NAME, "sha256": file_digest(ratings), "rows": rows},
              "files": files}
    return (json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def verify_ratings(root: str | Path) -> tuple[bytes, int]:
    """Read ``out/ratings.csv`` and check it against ``out/collection.json``.

    The table is read once and the bytes checked are the bytes returned, so a collect
    replacing it meanwhile cannot slip another table in.

    Parameters
    ----------
    root : str or Path
        The study folder.

    Returns
    -------
    bytes, int
        The table's bytes, and the row count recorded for it (the caller checks it
        once the table is parsed, :func:`check_row_count`).

    Raises
    ------
    OutputError
        The record is missing or unreadable, or the table's sha256 differs from it.
    """
    out = Path(root) / OUT_DIR
    record_path = out / COLLECTION_FILE
    again = "; run sheetflow collect again"
    try:
        entry = json.loads(record_path.read_text(encoding="utf-8"))["ratings"]
        wanted, rows = str(entry["sha256"]), int(entry["rows"])
    except FileNotFoundError:
        raise OutputError(f"{OUT_DIR}/{COLLECTION_FILE} is missing, so {OUT_DIR}/"
                          f"{RATINGS_NAME} cannot be shown to be whole{again}") from None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise OutputError(f"{OUT_DIR}/{COLLECTION_FILE} is unreadable ({exc}){again}") from None
    data = (out / RATINGS_NAME).read_bytes()
    found = hashlib.sha256(data).hexdigest()
    if found != wanted:
        raise OutputError(f"{OUT_DIR}/{RATINGS_NAME} does not match {OUT_DIR}/{COLLECTION_FILE} "
                          f"(sha256 {found[:12]}..., recorded {wanted[:12]}...): it was cut off "
                          f"or changed after collect{again}")
    return data, rows


def check_row_count(recorded: int, rows: int) -> None:
    """Refuse a parsed ratings table whose row count differs from the record."""
    if rows != recorded:
        raise OutputError(f"{OUT_DIR}/{RATINGS_NAME} has {rows} rating rows, but "
                          f"{OUT_DIR}/{COLLECTION_FILE} records {recorded}; run "
                          "sheetflow collect again")
