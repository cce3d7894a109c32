"""Outputs written whole or not at all, as one set, one run at a time per study.

* :class:`OutputSet` stages each output as a temporary file in its own folder and
  moves them all into place with :func:`os.replace` only when every one was written;
  a run that fails or is killed leaves the previous outputs untouched (a killed run
  can leave hidden ``.*.partial`` files, which the next run removes).
* :func:`~sheetflow.collect.run_lock.study_lock` holds ``out/.lock`` (an exclusive
  :func:`fcntl.flock`) while a collect, analyze, plan, lock, send or import-judges
  runs, so a second one waits a bounded time, then refuses; a run that fails removes
  the lock file (and ``out/``) it made.
* ``out/collection.json`` records ``ratings.csv``'s sha256, row count and sources;
  :func:`verify_ratings` refuses a ratings table that does not match it. The record is
  moved into place last, so a table from a run that stopped half-way never matches.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple

from ..errors import SealError, SheetflowError
from ..hints import command_line
from ..packs.seal import SEALED_DIR
from ..packs.secret import SECRET_FILE, read_secret, record_mac
from ..workbook import layout as L
from .mailbox import is_mail_file, member_digests
from .orphans import stray_feedback
from .returns import NotAFile, file_digest, find_entries

OUT_DIR = L.OUT_DIR
LOCK_FILE = ".lock"
COLLECTION_FILE = "collection.json"
RATINGS_NAME = "ratings.csv"
INCOMPLETE_RATINGS_NAME = "ratings-incomplete.csv"
"""The rows of returns left out only for blank required answers (``answer-missing``):
never part of ``ratings.csv``; ``analyze --allow-partial`` uses the cases they rated."""
LOCK_WAIT = 30.0  # seconds a second run waits for the study lock


class OutputError(SheetflowError):
    """An output set is incomplete, changed since it was written, or busy.

    ``problems``: the lines the CLI prints, one per file (default: the message).
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or [message]


RUN_FILE = "run.json"  # written by analyze, last (sheetflow.report.outputs)
VALIDATION_NAME = "validation.xlsx"
COLLECT_NAMES = frozenset({RATINGS_NAME, INCOMPLETE_RATINGS_NAME, COLLECTION_FILE,
                           VALIDATION_NAME, LOCK_FILE, RUN_FILE})
"""Files in ``out/`` an analysis never owns: collect's, the lock and the run record."""
SHARED_NAMES = frozenset({"pilot-summary.json"})
"""Outputs another step writes too (the judges import's pilot summary): an earlier
analysis's copy is removed only while it is still the file that analysis wrote."""
ALWAYS_WRITTEN = ("analysis.xlsx", "summary.json", "ratings-unblinded.csv")
"""What every analyze writes: the earlier set when ``out/`` holds no run record."""


class RunRecord(NamedTuple):
    """``out/run.json``: one analyze run's outputs and the tables it was made from."""

    run_id: str
    files: dict[str, str]
    """Output path under ``out/`` -> its sha256 as written."""
    made_from: dict[str, str] | None
    """Table name under ``out/`` -> the sha256 analysed (None: not known)."""


def read_run(root: str | Path) -> RunRecord | None:
    """The run record in ``root``'s ``out/`` (None when there is none).

    Raises
    ------
    OutputError
        The record is unreadable.
    """
    return _read_run(Path(root) / OUT_DIR, root)


def again(step: str, study_dir: str | Path | None) -> str:
    """``"run 'sheetflow <step> <folder>' again"``: the whole command to run once more,
    on the study folder as the user gave it (``"run <step> again"`` when it is not
    known here)."""
    if study_dir is None:
        return f"run {step} again"
    return f"run '{command_line(step, study_dir)}' again"


def unreadable_why(exc: Exception) -> str:
    """Why a JSON record sheetflow wrote could not be read, in words for the reader.

    Parameters
    ----------
    exc : Exception
        What reading or parsing the record raised.

    Returns
    -------
    str
        The system's reason for a file that cannot be opened, the parser's for text that
        is no JSON, else that the JSON is not laid out as sheetflow writes it (a Python
        message such as "list indices must be integers" would say nothing to the reader).
    """
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    if isinstance(exc, json.JSONDecodeError):
        return f"not JSON: {exc}"
    if isinstance(exc, UnicodeDecodeError):
        return "not UTF-8 text"
    if isinstance(exc, KeyError):
        return f"no {exc.args[0]!r} entry"
    return "not laid out as sheetflow writes it"


def _read_run(out: Path, root: str | Path | None) -> RunRecord | None:
    if out.exists() and not out.is_dir():  # running analyze again would stop on it too
        raise OutputError(f"{out} is a file where sheetflow needs a folder: move or "
                          "rename it")
    try:
        record = json.loads((out / RUN_FILE).read_text(encoding="utf-8"))
        run, files = str(record["run_id"]), {str(k): str(v) for k, v in record["files"].items()}
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise OutputError(f"{out / RUN_FILE} is unreadable ({unreadable_why(exc)}); "
                          f"{again('analyze', root)}") from None
    made = record.get("made_from")
    made_from = {str(k): str(v) for k, v in made.items()} if isinstance(made, dict) \
        else _summary_made_from(out)  # a record from before made_from
    return RunRecord(run, files, made_from)


def _summary_made_from(out: Path) -> dict[str, str] | None:
    """The tables an analysis was made from, as its ``summary.json`` audit gives them."""
    try:
        audit = json.loads((out / "summary.json").read_text(encoding="utf-8"))["audit"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return audited_tables(audit)


def audited_tables(audit: Any) -> dict[str, str] | None:
    """Table name under ``out/`` -> the sha256 an analysis read, from its summary's
    ``audit`` (None when it records no ratings table)."""
    if not isinstance(audit, dict) or not audit.get("ratings_sha256"):
        return None
    tables = {RATINGS_NAME: str(audit["ratings_sha256"])}
    if audit.get("incomplete_ratings_sha256"):
        tables[INCOMPLETE_RATINGS_NAME] = str(audit["incomplete_ratings_sha256"])
    return tables


def check_run(root: str | Path) -> list[str]:
    """Whether ``out/`` holds the outputs of one analysis of the tables collected: one
    line per file that is not what the last run recorded, and one when a table it was
    made from has been replaced (empty when whole, or before any analysis)."""
    out = Path(root) / OUT_DIR
    try:
        record = read_run(root)
    except OutputError as exc:
        return [str(exc)]
    strays = stray_feedback(out, record.files if record is not None else ())
    problems = [f"{OUT_DIR}/{path.name} is a feedback workbook of an analyze that did not "
                f"finish (no {OUT_DIR}/{RUN_FILE} lists it): {again('analyze', root)}, which "
                "removes it, or writes it again" for path in strays]
    if record is None:
        if (out / "summary.json").exists():
            problems.insert(0, f"{OUT_DIR}/{RUN_FILE} is missing: {OUT_DIR}/ cannot be shown "
                               f"to hold one analysis; {again('analyze', root)}")
        return problems
    for name, digest in sorted(record.files.items()):
        now = _digest_or_missing(out / name)
        if now != digest:
            problems.append(f"{OUT_DIR}/{name} is not the file analyze run {record.run_id} "
                            f"wrote ({'it is missing' if now == 'missing' else 'it changed'}): "
                            f"{OUT_DIR}/ mixes runs; {again('analyze', root)}")
    for name, digest in sorted((record.made_from or {}).items()):
        if _digest_or_missing(out / name) != digest:
            problems.append(f"analyze run {record.run_id} was made from another {OUT_DIR}/"
                            f"{name} than the one collected now: its outputs are stale; "
                            f"{again('analyze', root)}")
    return problems


def _digest_or_missing(path: Path) -> str:
    return file_digest(path) if path.is_file() else "missing"


# --------------------------------------------------------------------------- retiring


def earlier_outputs(out: str | Path) -> list[Path]:
    """The files of the last analysis in the folder ``out``: those its run record lists
    (only paths inside ``out``, never collect's, nor a shared file another step has
    rewritten since), or, with no readable record, the files every analyze writes; and
    the feedback workbooks sheetflow wrote that no record lists (left by an analyze
    that did not finish: :func:`~.orphans.stray_feedback`)."""
    out = Path(out)
    try:
        record = _read_run(out, None)  # its message is never shown
    except OutputError:
        record = None
    if record is None:
        return [out / name for name in ALWAYS_WRITTEN if (out / name).is_file()] + \
            stray_feedback(out)
    return [out / name for name, digest in sorted(record.files.items())
            if _owned(out, name) and (name not in SHARED_NAMES
                                      or _digest_or_missing(out / name) == digest)] + \
        stray_feedback(out, record.files)


def _owned(out: Path, name: str) -> bool:
    """Whether ``name`` (from the record) is an analysis output inside ``out``."""
    parts = Path(name).parts
    if not parts or Path(name).is_absolute() or ".." in parts or name in COLLECT_NAMES \
            or parts[0] == "feedback":  # collect's reply drafts
        return False
    path = out / name
    return path.is_file() and path.parent.resolve().is_relative_to(out.resolve())


def retire_analysis(root: str | Path) -> list[Path]:
    """Remove the last analysis's outputs from ``out/``; the paths removed.

    Analysis outputs are derived files: analyze writes them again from the study's
    inputs, which are never touched (nor collect's own files). They are removed rather
    than moved aside because a workbook that still reads "4 of 4 raters" in another
    folder can still be opened, sent and taken for the result (to keep one, copy
    ``out/`` away first). The record goes last, so a run stopped half-way leaves one
    that no longer matches (:func:`check_run`).
    """
    out = Path(root) / OUT_DIR
    removed = [path for path in earlier_outputs(out) if _unlink(path)]
    if (out / RUN_FILE).is_file() and _unlink(out / RUN_FILE):
        removed.append(out / RUN_FILE)
    return removed


def retire_stale_analysis(root: str | Path, written: dict[str, str] | None = None
                          ) -> list[Path]:
    """:func:`retire_analysis` when the last analysis was made from other tables than the
    ones now in ``out/`` (collect just replaced them); the paths removed (none when the
    analysis still stands for the tables, or there is none).

    ``written``: table name -> the sha256 collect just recorded for it, so a table it
    hashed while writing is not read and hashed again (others are hashed from disk).
    """
    out = Path(root) / OUT_DIR
    known = written or {}
    try:
        record = read_run(root)
    except OutputError:
        return retire_analysis(root)  # an unreadable record vouches for nothing
    if record is None and not any((out / name).is_file() for name in ALWAYS_WRITTEN):
        return []  # no analysis yet (a stopped one's feedback workbooks go at the next)
    made_from = record.made_from if record else _summary_made_from(out)
    if made_from is not None and all((known.get(name) or _digest_or_missing(out / name))
                                     == digest for name, digest in made_from.items()):
        return []
    return retire_analysis(root)


def _unlink(path: Path) -> bool:
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def table_replaced(study_dir: str | Path) -> str:
    """Why collect removed the earlier analysis outputs (:func:`retired_line`'s ``why``)."""
    return ("they were made from another ratings table than the one collect has just "
            f"written (the returns or their checks changed); {again('analyze', study_dir)}")


def retired_line(root: str | Path, removed: list[Path], why: str) -> str:
    """The one line that names the removed outputs and says why."""
    names = ", ".join(_shown(path, Path(root)) for path in removed)
    return f"removed the earlier analysis outputs ({names}): {why}"


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


# --------------------------------------------------------------------------- the record


def collection_record(study_id: str, ratings: Path, rows: int,
                      files: list[dict[str, Any]], secret: bytes | None = None, *,
                      incomplete: tuple[Path, int] | None = None,
                      manifest_sha256: str = "",
                      journal_damaged: list[int] | None = None,
                      replies: dict[str, dict[str, str]] | None = None,
                      came_back: dict[str, str] | None = None) -> bytes:
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
        ``used``, and why it was left out; see
        :func:`~sheetflow.collect.file_verdicts.file_verdicts`).
    secret : bytes, optional
        The study secret: the record then carries ``mac``, HMAC-SHA256 of its canonical
        form, so the table and the record cannot be edited together to match.
    incomplete : (Path, int), optional
        The staged :data:`INCOMPLETE_RATINGS_NAME` and its row count, recorded (and
        marked) the same way.
    manifest_sha256 : str, optional
        The sha256 of the manifest the ratings were placed by (recorded, and marked,
        when given): ``analyze`` holds it to the sealed one.
    journal_damaged : list of int, optional
        The lines of ``mail.jsonl`` that held no record when collect read it: the
        sender checks and received times behind the table went without them. Always
        recorded (empty when none), so ``analyze`` can say so; a record from before
        this field means none.
    replies : dict, optional
        Each reply draft written with the record (:func:`.drafts.reply_keys`): what
        ``status`` needs to tell whether ``send replies`` holds it back, without reading
        the draft. Recorded when given.
    came_back : dict, optional
        Pack id -> when its first file was received (``returned``;
        :attr:`.run.Collection.came_back`): what ``fetch`` needs to tell whether a
        rater's reply not saved is over, without reading the returns. Recorded when
        given.
    """
    record: dict[str, Any] = {
        "collection_format": 1, "study_id": study_id,
        "ratings": {"file": RATINGS_NAME, "sha256": file_digest(ratings), "rows": rows},
        "files": files, "journal_damaged": list(journal_damaged or [])}
    if manifest_sha256:
        record["manifest_sha256"] = manifest_sha256
    if replies is not None:
        record["replies"] = replies
    if came_back is not None:
        record["returned"] = came_back
    if incomplete is not None:
        record["incomplete"] = {"file": INCOMPLETE_RATINGS_NAME,
                                "sha256": file_digest(incomplete[0]), "rows": incomplete[1]}
    if secret is not None:
        record["mac"] = record_mac(secret, "collection", _canonical(record))
    return (json.dumps(record, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def recorded_tables(record: bytes) -> dict[str, str]:
    """Table name -> sha256, as a :func:`collection_record` records them."""
    doc = json.loads(record)
    return {part["file"]: part["sha256"] for part in
            (doc.get("ratings"), doc.get("incomplete")) if part}


def _canonical(record: dict[str, Any]) -> bytes:
    body = {k: v for k, v in record.items() if k != "mac"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def collection_secret(root: Path) -> bytes | None:
    """The study secret collect marks its record with (None for a study sealed before
    secrets existed, or not generated here)."""
    path = Path(root) / SEALED_DIR / SECRET_FILE
    return read_secret(path) if path.is_file() else None


class Collected(NamedTuple):
    """``out/ratings.csv`` and ``out/collection.json`` as read once and checked."""

    data: bytes
    """The table's bytes."""
    rows: int
    """The row count the record gives (checked once the table is parsed)."""
    files: list[dict[str, Any]]
    """The record's files: one verdict per returned file."""
    record: dict[str, Any]
    """The whole record, for :func:`check_mark` once the secret is at hand."""
    incomplete: bytes = b""
    """The bytes of :data:`INCOMPLETE_RATINGS_NAME` (read, and checked against the
    record, only when asked for: ``analyze --allow-partial``)."""
    incomplete_rows: int = 0


def verify_ratings(root: str | Path, secret: bytes | None = None, *,
                   incomplete: bool = False) -> Collected:
    """Read ``out/ratings.csv`` and check it against ``out/collection.json``.

    The table and the record are each read once, and the bytes checked are the bytes
    returned, so a collect replacing them meanwhile cannot slip another table in. With
    the study secret, the record's ``mac`` must verify: a table edited together with
    the hash the record gives it is refused.

    Parameters
    ----------
    root : str or Path
        The study folder.
    secret : bytes, optional
        The study secret, as the seal check read it.
    incomplete : bool
        Also read :data:`INCOMPLETE_RATINGS_NAME`, checked the same way.

    Returns
    -------
    Collected
        The table's bytes, the row count recorded for it (the caller checks it once
        the table is parsed, :func:`check_row_count`), the record's files and the record.

    Raises
    ------
    OutputError
        The record is missing or unreadable, or the table's sha256 differs from it.
    SealError
        The record's mark does not verify under the study secret.
    """
    out = Path(root) / OUT_DIR
    record_path = out / COLLECTION_FILE
    rerun = f"; {again('collect', root)}"
    try:
        record = json.loads(record_path.read_bytes().decode("utf-8"))
        entry = record["ratings"]
        wanted, rows = str(entry["sha256"]), int(entry["rows"])
        files = list(record.get("files", []))
    except FileNotFoundError:
        raise OutputError(f"{record_path} is missing, so {OUT_DIR}/"
                          f"{RATINGS_NAME} cannot be shown to be whole{rerun}") from None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise OutputError(f"{record_path} is unreadable ({unreadable_why(exc)}){rerun}") \
            from None
    if secret is not None:
        check_mark(record, secret, study_dir=root)
    data = _read_recorded(out, RATINGS_NAME, wanted, root)
    if not incomplete or not isinstance(record.get("incomplete"), dict):
        return Collected(data, rows, files, record)
    entry = record["incomplete"]
    left = _read_recorded(out, INCOMPLETE_RATINGS_NAME, str(entry.get("sha256", "")), root)
    return Collected(data, rows, files, record, left, int(entry.get("rows", 0)))


def _read_recorded(out: Path, name: str, wanted: str, root: str | Path) -> bytes:
    """A table's bytes, read once and checked against the sha256 the record gives."""
    rerun = f"; {again('collect', root)}"
    try:
        data = (out / name).read_bytes()
    except OSError as exc:
        raise OutputError(f"{out / name} cannot be read ({exc.strerror}){rerun}") from None
    found = hashlib.sha256(data).hexdigest()
    if found != wanted:
        raise OutputError(f"{out / name} does not match {OUT_DIR}/{COLLECTION_FILE} "
                          f"(sha256 {found[:12]}..., recorded {wanted[:12]}...): it was cut off "
                          f"or changed after collect{rerun}")
    return data


def check_mark(record: dict[str, Any], secret: bytes, *,
               study_dir: str | Path | None = None) -> None:
    """The record must carry the study secret's mark over its canonical form.

    ``study_dir``: the study folder as the user gave it, for the command the message
    names.

    Raises
    ------
    SealError
        No mark, or one that does not verify (the record was rewritten).
    """
    mark = record.get("mac")
    if not isinstance(mark, str):
        raise SealError(f"{_in_out(study_dir, COLLECTION_FILE)} carries no mark of this "
                        "study's secret (written by hand, or by a collect without access "
                        "to sealed/); "
                        f"{again('collect', study_dir)}")
    if not hmac.compare_digest(mark, record_mac(secret, "collection", _canonical(record))):
        raise SealError(f"{_in_out(study_dir, COLLECTION_FILE)} was changed after collect "
                        "(its mark "
                        "does not verify under the study secret); the ratings cannot be "
                        f"trusted: {again('collect', study_dir)}")


def verify_returns(root: str | Path, files: list[dict[str, Any]]) -> dict[str, str]:
    """Each used return on disk must be the file collect read; their sha256 by name.

    Raises
    ------
    SealError
        A used return is gone or its bytes differ from those collected.
    """
    used = {}
    for entry in files:
        if not entry.get("used"):
            continue
        name, wanted = str(entry.get("file", "")), str(entry.get("sha256", ""))
        where = str(entry.get("path") or f"{L.RETURNS_DIR}/{name}")
        if where.startswith("hex:"):  # a name that is not text (see collect's record)
            where = os.fsdecode(bytes.fromhex(where[4:]))
        path = Path(where) if Path(where).is_absolute() else Path(root) / where
        where = where.encode("utf-8", "backslashreplace").decode("utf-8")  # for messages
        now = file_digest(path) if path.is_file() else "nothing (the file is gone)"
        if now != wanted and is_mail_file(path.name) and wanted in member_digests(path):
            now = wanted  # an attachment of a saved message, still in it unchanged
        if now != wanted:
            raise SealError(f"{where} changed after collect: sha256 {wanted} was collected, "
                            f"it is now {now}; put the file back as it was, or "
                            f"{again('collect', root)}")
        used[where] = wanted
    return used


def returns_since_collect(root: str | Path, *, all_before_first: bool = False,
                          digests: Mapping[str, str] | None = None) -> list[str]:
    """Files of ``returns/`` whose content the last collect did not read (new, or
    changed since), by name; empty before any collect, unless ``all_before_first``
    (then every file: none has been collected yet).

    A saved message counts as read when every attachment in it was. ``digests``: file
    name -> sha256 of files just hashed (status has read every return once already).
    """
    record = Path(root) / OUT_DIR / COLLECTION_FILE
    try:
        files = json.loads(record.read_bytes().decode("utf-8"))["files"]
        read = {str(f.get("sha256", "")) for f in files}
    except FileNotFoundError:
        if not all_before_first:
            return []
        read = set()
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return []
    out = []
    for entry in find_entries(Path(root), None):
        if entry.code or not entry.path.is_file():
            continue  # a folder, a link outside, a lock file: never read as a return
        try:
            digest = (digests or {}).get(entry.name) or file_digest(entry.path)
        except (OSError, NotAFile):
            continue
        if digest in read or (is_mail_file(entry.path.name)
                              and set(member_digests(entry.path)) <= read):
            continue
        out.append(entry.name)
    return out


def _in_out(study_dir: str | Path | None, name: str) -> str:
    """The file ``name`` of ``out/`` as messages name it, with the study folder as given
    (``my-study/out/ratings.csv``; ``out/ratings.csv`` when none is)."""
    return str(Path(study_dir or ".") / OUT_DIR / name)


def check_row_count(recorded: int, rows: int, *,
                    study_dir: str | Path | None = None) -> None:
    """Refuse a parsed ratings table whose row count differs from the record
    (``study_dir``: the study folder as given, for the command the message names)."""
    if rows != recorded:
        raise OutputError(f"{_in_out(study_dir, RATINGS_NAME)} has {rows} rating rows, but "
                          f"{OUT_DIR}/{COLLECTION_FILE} records {recorded}; "
                          f"{again('collect', study_dir)}")
