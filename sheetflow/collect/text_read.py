"""The coordinator's word that a return's unread text was read: ``text-read.json``.

A return used that holds text sheetflow does not read (:data:`~.validate.UNREAD_TEXT`:
text outside the answer cells or the scoring area, a sheet added, a cell comment, a
text box, a document property, a header or footer, a ``customXml/`` part)
makes ``collect`` and ``status`` exit 1, until the coordinator has read it in the file
and says so: ``sheetflow collect DIR --mark-read FILE`` records the file's name and
the sha256 of its bytes in ``text-read.json`` at the study's top (beside ``mail.jsonl``;
not in ``returns/``, which holds only what came back, nor in ``out/``, which collect
replaces). The file is the coordinator's own record, kept across collects and never
sealed::

    {"read": [{"file": "R1.xlsx", "sha256": "<64 hex digits>",
               "read_at": "2026-11-02T14:05:00+00:00"}]}

A return used that came in a message from another rater's address or from no rater's
(:data:`~.validate.SENDER_CHECK`: ``sender-not-rater``, ``sender-unknown``) makes
``collect`` and ``status`` exit 1 the same way, until the coordinator has checked who
sent it and marks it read with the same option, in the same record: one
acknowledgement covers every issue of the file it applies to.

An acknowledgement covers exactly those bytes: a new version of the file (another
sha256) or a copy under another name is unread again. The acknowledged file's issues
stay where they are (Issues sheet, terminal, ``--json``), each marked read
(:attr:`~.validate.Issue.read`), and no longer change the exit code.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from ..errors import UsageError
from ..packs.journal import parse_time
from ..staging import write_alone
from ..workbook import layout as L
from .mail_state import short_time
from .validate import MARKED_READ, SENDER_CHECK, UNREAD_TEXT, FileStatus, ValidationReport

TEXT_READ_FILE = "text-read.json"
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class TextRead:
    """One acknowledgement: the return ``file`` with bytes ``sha256`` was read at
    ``read_at`` (an ISO time)."""

    file: str
    sha256: str
    read_at: str

    def words(self) -> str:
        """How an issue of the file says it was read."""
        return f"marked read {short_time(self.read_at)} UTC, recorded in {TEXT_READ_FILE}"


def read_text_read(root: Path) -> list[TextRead]:
    """The acknowledgements recorded in the study (none when there is no file).

    Raises
    ------
    UsageError
        The file is no record as :mod:`this module <.text_read>` describes: it names
        the file and what to do, as a guess at which text was read would be untrue.
    """
    path = Path(root) / TEXT_READ_FILE
    try:
        data = json.loads(path.read_bytes())
    except FileNotFoundError:
        return []
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(_damaged(path, f"it is not JSON ({exc})")) from None
    entries = data.get("read") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        raise UsageError(_damaged(path, 'it holds no list "read"'))
    found = []
    for n, entry in enumerate(entries, 1):
        fields = [entry.get(k) if isinstance(entry, dict) else None
                  for k in ("file", "sha256", "read_at")]
        if not all(isinstance(v, str) and v for v in fields) or \
                not _SHA256.fullmatch(fields[1]) or parse_time(fields[2]) is None:
            raise UsageError(_damaged(path, f'entry {n} of "read" is not a file name, '
                                            "the sha256 of its bytes (64 hex digits) "
                                            "and a time read_at (ISO 8601)"))
        found.append(TextRead(*fields))
    return found


def _damaged(path: Path, why: str) -> str:
    return (f'{path}: {why}; mend it ({{"read": [{{"file": ..., "sha256": ..., '
            f'"read_at": ...}}, ...]}}), or remove it and mark the returns read again with '
            "sheetflow collect --mark-read")


def mark_read(root: Path, report: ValidationReport, names: Iterable[str], *,
              now: dt.datetime | None = None) -> list[TextRead]:
    """Record in ``text-read.json`` that the returns ``names`` were read, then mark
    every recorded acknowledgement on ``report`` (:func:`apply_text_read`).

    Parameters
    ----------
    root : Path
        The study folder.
    report : ValidationReport
        This collect's report (its issues are replaced by ones marked read).
    names : iterable of str
        Files as collect lists them (or their paths in the study, ``returns/...``).
    now : datetime, optional
        When they were read (default: now).

    Returns
    -------
    list of TextRead
        The acknowledgements that apply to this report's files.

    Raises
    ------
    UsageError
        A name is no file of ``returns/`` holding text sheetflow does not read;
        nothing is recorded then.
    """
    recorded = read_text_read(root)
    known = {(r.file, r.sha256) for r in recorded}
    when = (now or dt.datetime.now(dt.UTC)).astimezone(dt.UTC).isoformat(timespec="seconds")
    new = []
    for name in dict.fromkeys(names):
        for f in _holding_unread_text(report, name):
            if (f.file, f.sha256) not in known:
                known.add((f.file, f.sha256))
                new.append(TextRead(f.file, f.sha256, when))
    if new:
        _write(Path(root) / TEXT_READ_FILE, recorded + new)
    return apply_text_read(report, recorded + new)


def _holding_unread_text(report: ValidationReport, name: str) -> list[FileStatus]:
    """The files of ``returns/`` called ``name`` that hold unread text; a usage error
    naming it when there is none."""
    files = [f for f in report.files if name in (f.file, f.path)]
    if not files:
        raise UsageError(f"--mark-read {name}: collect read no file of that name; give a "
                         f"file of {L.RETURNS_DIR}/ as collect lists it")
    returned = [f for f in files if f.path.startswith(f"{L.RETURNS_DIR}/")]
    if not returned:
        raise UsageError(f"--mark-read {name}: not in {L.RETURNS_DIR}/ ({files[0].path}); "
                         f"only a return kept in {L.RETURNS_DIR}/ can be marked read")
    holding = {i.file for i in report.issues if i.code in MARKED_READ}
    found = [f for f in returned if f.file in holding]
    if not found:
        raise UsageError(f"--mark-read {name}: it holds no text sheetflow does not read "
                         f"({', '.join(sorted(UNREAD_TEXT))}) and came from its rater's "
                         f"address ({', '.join(sorted(SENDER_CHECK))} is not among its "
                         "issues); there is nothing to mark read")
    return found


def apply_text_read(report: ValidationReport, recorded: list[TextRead]) -> list[TextRead]:
    """Mark the unread-text issues of each file a recorded acknowledgement covers (the
    same name and sha256) as read; the acknowledgements that applied."""
    by_file = {(r.file, r.sha256): r for r in recorded}
    covered = {f.file: by_file[(f.file, f.sha256)] for f in report.files
               if (f.file, f.sha256) in by_file}
    # an issue names its file by name: two files of one name are read only both at once
    covered = {name: r for name, r in covered.items()
               if all((f.file, f.sha256) in by_file for f in report.files if f.file == name)}
    if not covered:
        return []
    report.issues = [replace(i, read=covered[i.file].words())
                     if i.code in MARKED_READ and i.file in covered else i
                     for i in report.issues]
    return list(dict.fromkeys(covered.values()))


def _write(path: Path, entries: list[TextRead]) -> None:
    """Replace ``path`` whole with ``entries`` (never a half-written record; a write
    that fails leaves the earlier record and names the file)."""
    doc = {"read": [{"file": e.file, "sha256": e.sha256, "read_at": e.read_at}
                    for e in entries]}
    write_alone(path, (json.dumps(doc, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
