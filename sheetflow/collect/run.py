"""Collect returned rater workbooks: identify, validate, and build the ratings table.

:func:`collect` reads every returned file safely, identifies it by the identity
embedded in it (never by its name), checks it against the blinded manifest
``packs/manifest.json`` (the sealed key is never opened), reports every problem at
once as :class:`~sheetflow.collect.validate.Issue` objects, and recomputes derived points and
totals. A file with an error contributes no ratings; the others still do. Returned
files are only ever opened for reading.

Every entry of the returns folder gets a verdict (:mod:`sheetflow.collect.returns`): files are
read, anything else (an unreadable file, a link out of the study, a folder, a pipe) is
reported and the batch goes on. Outputs are written as one set under the study lock
(:mod:`sheetflow.collect.outputs`): ``out/collection.json`` records the ratings table's
sha256 and row count, so ``analyze`` never uses a table a killed run cut off.

Each file is inspected, read and checked in a sandbox child process
(:func:`sheetflow.collect.file_check.check_file`, two or more at a time); the parent only
decides which pack each file belongs to, finds duplicates and writes the outputs. The
ratings table stays on disk (:class:`~sheetflow.collect.spool.Ratings`), so memory
does not grow with the number of rating rows.

Duplicate returns
-----------------
- The same bytes given twice (same sha256): the file named like a pack that was
  sent is used, else the first by file name; each other copy gets the warning
  ``duplicate-file``.
- Two different files for one pack (same rater and sitting): :mod:`.rivals` says
  which stands, if any, never by save times (set by the rater's machine).
"""

from __future__ import annotations

import datetime as dt
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import UsageError
from ..hints import command_line
from ..packs.journal import Journal, iso, read_journal
from ..packs.manifest import Manifest, PackHead, open_manifest
from ..packs.seal import load_generated_study, sealed_manifest_sha256
from ..spec.study import Study
from ..staging import OutputSet, remove_partials
from ..workbook import layout as L
from .attribution import claim_of, rows_link, rows_shown
from .consent import spread_refusals
from .content_checks import SelfCheckInput, self_checks
from .coordinator import (
    FEEDBACK_DIR,
    Expected,
    RosterRow,
    roster,
    write_validation_workbook,
)
from .copies import AnswerPrint, warn_copies, warn_same_saver
from .drafts import (
    Drafts,
    mark_written,
    reply_keys,
    reply_left_out,
    stage_drafts,
    with_replies_left_out,
    write_feedback,
)
from .file_check import (
    RATING_COLUMNS,
    FileJob,
    FileResult,
    blanks_only,
    cell_name,
    check_file,
    known_study,
    neutralise,
    split_cell,
)
from .file_verdicts import file_verdicts
from .hazards import hazard_issues
from .links import beside_used, file_link, named_like_pack
from .mail_state import PackMail, came_back, journal_issue, pack_mail, received_times
from .mailbox import is_mail_file, members_job
from .outputs import (
    COLLECTION_FILE,
    INCOMPLETE_RATINGS_NAME,
    LOCK_WAIT,
    RATINGS_NAME,
    collection_record,
    collection_secret,
    recorded_tables,
    retire_stale_analysis,
)
from .protocol_checks import batch_overlaps, sitting_gaps
from .returns import Entry, NotAFile, escape_controls, file_digest, find_entries, where_read
from .rivals import settle_packs
from .run_lock import study_lock
from .safety import Limits, Problem, problem_fields
from .sandbox import Outcome, Sandbox
from .senders import Senders, with_senders_unchecked
from .spec_marks import expected_spec_mark, preview_secret
from .spool import Ratings, Spooled
from .text_read import apply_text_read, read_text_read
from .text_read import mark_read as record_text_read
from .validate import (
    ERROR,
    WARNING,
    FileStatus,
    Issue,
    ValidationReport,
    issue,
    sort_issues,
)

__all__ = [
    "RATING_COLUMNS",
    "Collection",
    "Ratings",
    "cell_name",
    "collect",
    "file_verdicts",
    "find_files",
    "neutralise",
    "split_cell",
    "write_outputs",
]

RETURNS_DIR, OUT_DIR = L.RETURNS_DIR, L.OUT_DIR


@dataclass
class Collection:
    """The result of :func:`collect`.

    Attributes
    ----------
    ratings : Ratings
        The tidy ratings table (columns :data:`RATING_COLUMNS`), sorted.
    report : ValidationReport
        Every file's status and every issue.
    outputs : dict
        Output name -> path written ("" when not written).
    study_id : str
    roster : list of RosterRow
        One row per expected pack, returned or not, and per file matching no pack.
    feedback : Drafts
        The reply drafts written for raters whose file has errors, and those left out
        (``changed``: the pack they would attach changed after generate).
    heads : list of PackHead
        The manifest's packs the returns were placed by.
    """

    ratings: Ratings
    report: ValidationReport
    outputs: dict[str, str] = field(default_factory=dict)
    study_id: str = ""
    roster: list[RosterRow] = field(default_factory=list)
    feedback: Drafts = field(default_factory=Drafts)
    heads: list[PackHead] = field(default_factory=list)
    received: dict[str, dt.datetime] = field(default_factory=dict)
    """sha256 -> the ``Date`` of the saved message it came in (``.eml``/``.mbox`` returns)."""
    mail: dict[str, PackMail] = field(default_factory=dict)
    """Pack id -> its mail history (:mod:`.mail_state`)."""
    came_back: dict[str, str] = field(default_factory=dict)
    """Pack id -> when its first file was received (ISO 8601; "" when no time is known),
    for each pack a file stands for (:func:`.mail_state.came_back`): recorded in
    ``out/collection.json`` so that ``fetch`` need not read the returns again."""
    removed: list[Path] = field(default_factory=list)
    """The earlier analysis outputs removed: made from another table than this one
    (:func:`~.outputs.retire_stale_analysis`)."""
    manifest_sha256: str = ""  # of the manifest the ratings were placed by (when written)
    journal_damaged: list[int] = field(default_factory=list)
    """The lines of ``mail.jsonl`` that hold no record: a sender, a received time or a
    reply recorded there was not known to this collect (also the one
    ``journal-damaged`` warning among ``report.issues``: :attr:`journal_issue`)."""
    journal_issue: Issue | None = None
    study_dir: str | Path = "."
    """The study folder as the user gave it (the commands the messages name run on it)."""
    """That warning, the one issue of ``report.issues`` about no returned file (None
    when the journal is whole)."""

    @property
    def file_issues(self) -> list[Issue]:
        """The issues of the returned files: ``report.issues`` without
        :attr:`journal_issue`, in the same order."""
        return [i for i in self.report.issues if i is not self.journal_issue]

    @property
    def valid(self) -> bool:
        """True when no file has an error."""
        return self.report.valid

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready summary: the report plus the number of rating rows."""
        return {**self.report.to_dict(), "ratings": len(self.ratings),
                "outputs": dict(sorted(self.outputs.items())),
                "raters": [row.to_dict() for row in self.roster],
                "feedback": [str(p) for p in self.feedback.written],
                "feedback_left_out": [
                    {"rater": r, "sitting": s, "pack": p,
                     "why": reply_left_out(r, p, self.study_dir)}
                    for r, s, p in self.feedback.changed],
                "removed": [str(p) for p in self.removed],
                "journal_damaged": list(self.journal_damaged)}


def collect(study_dir: str | Path, paths: list[str | Path] | None = None, *,
            write: bool = True, limits: Limits | None = None,
            workers: int | None = None, lock_wait: float = LOCK_WAIT,
            progress: Callable[[int, int], None] | None = None,
            now: dt.datetime | None = None, journal: Journal | None = None,
            mark_read: Sequence[str] = ()) -> Collection:
    """Collect returned workbooks of the study in ``study_dir``.

    Parameters
    ----------
    study_dir : str or Path
        The study folder (with ``packs/manifest.json`` from ``generate``).
    paths : list of str or Path, optional
        Files or folders to collect (default: ``study_dir/returns``). Folders are
        read non-recursively; hidden files and Office lock files are skipped.
    write : bool
        Whether to write ``out/ratings.csv``, ``out/validation.xlsx`` and
        ``out/collection.json`` (as one set, each replaced whole; see
        :mod:`sheetflow.collect.outputs`). Writing runs under the study lock.
    limits : Limits, optional
        Safety limits for reading (sizes, memory, time).
    workers : int, optional
        Reader child processes (default: the CPU count, at most 4).
    lock_wait : float
        Seconds to wait while another collect or analyze holds the study lock.
    progress : callable, optional
        Called as ``progress(done, total)`` after each file is checked.
    now : datetime, optional
        The clock for the mail history (overdue, held; default: now).
    journal : Journal, optional
        The mail journal as the caller read (and checked) it; default: read here. Its
        lines that hold no record are in ``Collection.journal_damaged``.
    mark_read : sequence of str
        Returns whose text sheetflow does not read the coordinator has read: recorded
        in ``text-read.json`` before the outputs are written (only with ``write``;
        see :mod:`.text_read`). The acknowledgements recorded there are applied in
        every collect: those files' unread-text issues are marked read.

    Returns
    -------
    Collection

    Raises
    ------
    SheetflowError
        The study or its manifest cannot be loaded (not a data problem).
    UsageError
        A name of ``mark_read`` is no file of ``returns/`` holding unread text (nothing
        is written then), or ``text-read.json`` is no record.
    OutputError
        Another run still held the study lock after ``lock_wait`` seconds.
    """
    root = Path(study_dir)
    # a broken spec, or a sealed input edited, fails here, once, not in every child
    study = load_generated_study(root)
    # read once: the senders, the mail history and the reply drafts see the same records
    journal = read_journal(root) if journal is None else journal
    if not write:
        if mark_read:
            raise UsageError("returns are marked read only by a collect that writes")
        result = _collect(root, paths, limits, workers, write, study, progress, now,
                          journal, preview_secret(root))
        apply_text_read(result.report, read_text_read(root))
        result.roster = with_senders_unchecked(result.roster, result.report, root)
        return result
    with study_lock(root, "collect", lock_wait):
        secret = collection_secret(root)  # read once: the packs' spec mark, the record's
        result = _collect(root, paths, limits, workers, write, study, progress, now,
                          journal, secret)
        # before anything is written: a name that holds no unread text writes nothing
        record_text_read(root, result.report, mark_read, now=now)
        result.roster = with_senders_unchecked(result.roster, result.report, root)
        # composed first: a reply left out (its pack changed) is named on the Status sheet
        result.feedback = write_feedback(study, root, result.roster, result.report,
                                         result.heads, journal=journal)
        result.roster = with_replies_left_out(result.roster, result.feedback, root)
        out = root / OUT_DIR
        result.outputs = write_outputs(out, result, secret)  # the reply drafts among them
        tables = recorded_tables(Path(result.outputs["collection"]).read_bytes())
        result.removed = retire_stale_analysis(root, tables)  # analysed from the old table
    return result


def _collect(root: Path, paths: list[str | Path] | None, limits: Limits | None,
             workers: int | None, write: bool, study: Study,
             progress: Callable[[int, int], None] | None,
             now: dt.datetime | None, journal: Journal, secret: bytes | None) -> Collection:
    # the manifest maps each card to its item: only the one sealed at generate, and the
    # bytes hashed are those read (a preview, write False, needs no access to sealed/)
    manifest = open_manifest(root, sealed_manifest_sha256(root) if write else None,
                             private=write)
    known_study(str(root), study)  # forked reader children need not load it again
    try:
        files = find_files(root, paths)
        collector = _Collector(root, manifest, limits or Limits(), csv=write,
                               senders=Senders.of(study, journal), journal=journal,
                               secret=secret,
                               spec_current=study.hash == manifest.top.get("spec_hash"))
        result = collector.run(files, workers, progress)
    finally:
        manifest.close()
    result.study_id, result.manifest_sha256 = study.id, manifest.sha256
    result.study_dir = root
    result.heads = manifest.heads
    result.journal_damaged = list(journal.damaged)
    if journal.damaged:  # a row of the Issues sheet too, counted with the warnings
        result.journal_issue = journal_issue(journal.damaged, root)
        result.report.issues = sort_issues([*result.report.issues, result.journal_issue])
    received = received_times(root, result.report.files, journal, result.received)
    result.came_back = {pack: iso(moment) if moment else "" for pack, moment
                        in came_back(result.report.files, received).items()}
    result.mail = pack_mail(manifest.heads, result.report.files, received, journal,
                            deadline=study.mail.deadline, now=now)
    expected = [Expected(h.pack_id, h.rater_id, h.sitting, h.file) for h in manifest.heads]
    result.roster = roster(study, expected, result.report, result.mail)
    return result


def find_files(root: Path, paths: list[str | Path] | None) -> list[Entry]:
    """Every entry to collect or report, in a stable order (see :mod:`.returns`)."""
    return find_entries(root, paths)


# --------------------------------------------------------------------------- collector


@dataclass
class _FileWork:
    """One input file on its way through the collector."""

    path: Path
    name: str
    sha256: str = ""
    issues: list[Issue] = field(default_factory=list)
    head: PackHead | None = None
    duplicate_of: str = ""
    as_sent: bool = False  # byte for byte the pack as generated (never filled in)
    resaved: bool = False  # as_sent for a blank copy saved again (rivals.mark_blank_copies)
    superseded_by: str = ""  # the rater's newer file, sent after our reply
    block: Spooled | None = None
    answered: int = 0
    required: int = 0
    entered: int = 0  # answer cells holding anything (PackCheck.entered)
    marks: tuple[int, int] = (0, 0)  # (PackCheck.marks_held, PackCheck.marks)
    answers_read: bool = False  # the pack's answers were read (see PackCheck.read)
    rows_proven: bool = False  # its rows carry the pack's keyed ids (PackCheck.rows_proven)
    rows_checked: bool = False  # its rows were checked against the pack it claims
    self_check: SelfCheckInput | None = None
    member: int = -1  # a saved message's attachment (see .mailbox)
    sender: str = ""  # the address the file's message came from, when known
    sender_problem: str = ""  # why its saved message has no single sender (.mailbox)
    received: dt.datetime | None = None
    answers: AnswerPrint | None = None  # compared across raters (.copies)
    saved_by: str = ""  # the user name it was last saved under (.copies)
    by_stores: dict[str, list[str]] = field(default_factory=dict)  # pack id -> its stores
    # refused for its spec mark, the pack its rows prove (.attribution)
    rows_head: PackHead | None = None

    @property
    def rater(self) -> str:
        return self.head.rater_id if self.head else ""

    @property
    def failed(self) -> bool:
        return any(i.severity == ERROR for i in self.issues)

    @property
    def used(self) -> bool:
        """Whether its ratings go into the table: identified, no error, not a copy, not
        the pack as it was sent."""
        return self.head is not None and not self.failed and not self.duplicate_of and \
            not self.as_sent and not self.superseded_by


class _Collector:
    """Runs the checks for one study over a list of files."""

    def __init__(self, root: Path, manifest: Manifest, limits: Limits, csv: bool,
                 senders: Senders | None = None, journal: Journal | None = None,
                 secret: bytes | None = None, spec_current: bool = False):
        self.root = root
        self.spec_current = spec_current  # the study's spec hash is the manifest's
        self.again = command_line("collect", root)  # what a file's issue says to run
        self.senders = senders or Senders()
        self.journal = journal or Journal()
        self.manifest = manifest
        self.packs = manifest.by_id
        self.spec_mark = expected_spec_mark(manifest, secret)
        self.limits = limits
        self.csv = csv
        self.ratings = Ratings()

    def run(self, entries: list[Entry], workers: int | None,
            progress: Callable[[int, int], None] | None = None) -> Collection:
        works = self._open_entries(entries, workers)
        self._mark_copies(works)
        unique = [w for w in works if w.sha256 and not w.duplicate_of]
        if unique:
            jobs = [FileJob(str(w.path), w.name, w.sha256, str(self.root), self.manifest,
                            self.limits, self.csv, w.member, self.spec_current)
                    for w in unique]
            count = workers or min(4, os.cpu_count() or 1)
            sandbox = Sandbox(check_file, self.limits, workers=min(count, len(jobs)))
            for done, (index, outcome) in enumerate(sandbox.imap(jobs), 1):
                self._receive(unique[index], outcome)
                if progress is not None:
                    progress(done, len(jobs))
        # after the checks: report every problem at once (a pack sent back as it was
        # sent, beside the rater's filled file, is no rival of it)
        settle_packs(unique, self.root, self.packs, self.journal, self.senders)
        for work in works:
            if work.duplicate_of:
                work.issues.append(issue("duplicate-file", file=work.name,
                                         detail=work.duplicate_of))
        return self._result(works)

    def _mark_copies(self, works: list[_FileWork]) -> None:
        """Mark each exact copy (the same sha256) of another file as a copy of it.

        The original is the file named like a pack that was sent
        (:func:`~.links.named_like_pack`), else the first by name: a copy that sorts
        first must not stand for the pack's file, which would then be a copy, tied to
        no pack (an unreadable file is linked to its pack by that name alone).
        """
        first_by_hash: dict[str, _FileWork] = {}
        heads = self.manifest.heads
        # sorted is stable: among files named like a pack, or like none, name order stays
        for work in sorted(works, key=lambda w: not named_like_pack(w.name, heads)):
            if not work.sha256:
                continue  # reported, not read
            if work.sha256 in first_by_hash:
                work.duplicate_of = first_by_hash[work.sha256].name
            else:
                first_by_hash[work.sha256] = work

    def _open_entries(self, entries: list[Entry], workers: int | None) -> list[_FileWork]:
        """A work item per file, and per spreadsheet attachment of a saved message (whose
        attachments are listed in sandbox children, as workbooks are read)."""
        mail = [e for e in entries if not e.code and is_mail_file(e.name)]
        listed: dict[int, Outcome] = {}
        if mail:
            sandbox = Sandbox(members_job, self.limits,
                              workers=min(workers or 2, len(mail)))
            outcomes = sandbox.run([(str(e.path), self.limits) for e in mail])
            listed = {id(e): o for e, o in zip(mail, outcomes, strict=True)}
        works: list[_FileWork] = []
        for entry in entries:
            if id(entry) in listed:
                works += self._members(entry, listed[id(entry)])
            else:
                works.append(self._open(entry))
        return works

    def _members(self, entry: Entry, outcome: Outcome) -> list[_FileWork]:
        """The work items of one saved message file, or the one that reports it."""
        found = outcome.value if outcome.ok else Problem("mail-unreadable", outcome.reason)
        if isinstance(found, Problem) or not found:
            code, detail = ((found.code, found.detail) if isinstance(found, Problem)
                            else ("mail-no-spreadsheet", "none attached"))
            work = _FileWork(entry.path, entry.name)
            work.issues.append(issue(code, file=entry.name, detail=detail,
                                     collect=self.again))
            return [work]
        works = []
        for m in found:
            work = _FileWork(entry.path, m.name, m.sha256, member=m.index, sender=m.sender,
                             received=m.received, sender_problem=m.sender_problem)
            if m.undecodable:
                work.issues.append(issue("attachment-undecodable", file=m.name))
            elif m.index < 0:
                work.issues.append(issue("attachment-too-large", file=m.name,
                                         detail=f"{m.size / 2**20:.1f} MB"))
            works.append(work)
        return works

    def _open(self, entry: Entry) -> _FileWork:
        """The entry's work item: hashed when it is a readable file, else its verdict."""
        work = _FileWork(entry.path, entry.name)
        code, detail = entry.code, entry.detail
        if not code:
            try:
                work.sha256 = file_digest(entry.path)
                return work
            except NotAFile:
                code, detail = "not-a-file", "special file"
            except OSError as exc:
                code, detail = "file-unreadable", escape_controls(exc.strerror or str(exc))
        work.issues.append(issue(code, file=entry.name, detail=detail, collect=self.again))
        return work

    def _receive(self, work: _FileWork, outcome: Outcome) -> None:
        """Take one child's result in; only the small parts are kept."""
        if not outcome.ok:
            code = "read-aborted" if outcome.kind == "aborted" else "unreadable-workbook"
            work.issues.append(issue(code, file=work.name, detail=outcome.reason))
            return
        result: FileResult = outcome.value
        if result.problem is not None:
            work.issues.append(issue(result.problem.code, file=work.name, collect=self.again,
                                     **problem_fields(result.problem, work.name)))
            return
        self._take_checks(work, result)
        # after the checks: what would act in Excel is named whoever the file is
        # (an error, so its ratings are not used), and the checks still tell what else
        # to fix
        work.issues += hazard_issues(result.hazards, work.name, work.rater)

    def _take_checks(self, work: _FileWork, result: FileResult) -> None:
        """Identify the file and take in its checks against the pack it is."""
        claim = claim_of(work.name, result.stores, self.manifest, self.spec_mark)
        work.head, work.by_stores = claim.head, claim.by_stores
        work.issues += claim.issues
        shown = rows_shown(claim, result.stores, self.manifest,
                           lambda pack: pack in result.checks
                           and result.checks[pack].rows_proven
                           and result.checks[pack].rows_of is None)
        work.rows_head = shown  # refused still: linked to the pack its rows prove
        if work.head is None or work.failed:
            return
        check = result.checks[work.head.pack_id]
        work.issues += check.issues
        if check.rows_of is not None:
            # the rows prove another pack or none: whatever the identity claims, this is
            # not that rater's return, so it neither counts for them nor displaces theirs
            work.head = None
            return
        work.answered, work.required, work.entered, work.marks = check.answered, \
            check.required, check.entered, (check.marks_held, check.marks)
        work.answers_read, work.rows_proven = check.read, check.rows_proven
        work.rows_checked = True
        work.self_check = check.self_check
        work.answers, work.saved_by = check.answers, result.saved_by
        if check.block is not None:
            work.block = self.ratings._store(check.block)

    # -- result --------------------------------------------------------------------------

    def _sitting_gaps(self, works: list[_FileWork]) -> None:
        """Protocol 001: warn on overlapping batches, and on a sitting-2 batch begun
        < 24 h after sitting 1 ended."""
        usable = [w for w in works if w.used and w.self_check is not None]
        for work in usable:
            for found in batch_overlaps(work.self_check.batch_times):
                work.issues.append(issue("batch-time-overlap", file=work.name,
                                         sheet=L.SCORING_SHEET, cell=found.cell,
                                         rater=work.rater, dimension="batch",
                                         value=found.start, detail=found.detail))
        first = {w.head.rater_id: w.self_check.batch_times for w in usable
                 if w.head.sitting == 1}
        for work in (w for w in usable if w.head.sitting == 2):
            for gap in sitting_gaps(first.get(work.head.rater_id, []),
                                    work.self_check.batch_times):
                work.issues.append(issue("sitting-too-soon", file=work.name,
                                         sheet=L.SCORING_SHEET, cell=gap.cell,
                                         rater=work.rater, dimension="batch",
                                         value=gap.start, detail=gap.detail))

    def _result(self, works: list[_FileWork]) -> Collection:
        statuses = []
        issues: list[Issue] = []
        used_blocks, blank_blocks = [], []
        spread_refusals(works)  # before any file's use is decided
        self._sitting_gaps(works)
        warn_copies(works)  # after every file's errors are known
        warn_same_saver(works)
        for work in works:
            if work.sha256 and not work.duplicate_of:
                work.issues += self.senders.check(work.name, work.sha256, work.sender,
                                                  work.head.rater_id if work.head else "",
                                                  work.sender_problem)
        for work in works:
            used = work.used
            if work.self_check is not None:
                work.issues += self_checks(work.self_check, file=work.name, rater=work.rater)
            if work.head is not None and work.block is not None and not work.duplicate_of:
                place = (work.head.rater_id, str(work.head.sitting), work.name)
                if used:
                    used_blocks.append((place, work.block))
                elif blanks_only(work.issues):
                    blank_blocks.append((place, work.block))
            issues += work.issues
            # whoever it is, the address it came from helps find its sender
            sender, sender_rater = self.senders.sender_of(work.sha256, work.sender)
            statuses.append(FileStatus(
                file=work.name, sha256=work.sha256, rater=work.rater, used=used,
                pack_id=work.head.pack_id if work.head else "",
                errors=sum(i.severity == ERROR for i in work.issues),
                warnings=sum(i.severity == WARNING for i in work.issues),
                answered=work.answered, required=work.required, entered=work.entered,
                marks_held=work.marks[0], marks=work.marks[1],
                answers_read=work.answers_read, path=where_read(work.path, self.root),
                sender=sender, sender_rater=sender_rater,
                **({} if work.head else rows_link(work.rows_head, work.issues)
                   if work.rows_head else file_link(
                    work.name, work.issues, work.by_stores, self.manifest.heads,
                    self.senders.names_by_sha256.get(work.sha256, "")))))
        # a cut-off file beside its rater's return used asks nothing of them
        issues += beside_used(statuses, issues, self.manifest.heads)
        # one used file per rater and sitting, each sorted inside: the table's order
        covered = {place[:2] for place, _ in used_blocks}
        self.ratings._keep([handle for _, handle in sorted(used_blocks)],
                           [handle for place, handle in sorted(blank_blocks)
                            if place[:2] not in covered])
        report = ValidationReport(sorted(statuses, key=lambda s: (s.file, s.sha256)),
                                  sort_issues(issues))
        received = {w.sha256: w.received for w in works if w.sha256 and w.received}
        return Collection(self.ratings, report, received=received)


# --------------------------------------------------------------------------- outputs


def write_outputs(out_dir: Path, result: Collection,
                  secret: bytes | None = None) -> dict[str, str]:
    """Write ``ratings.csv``, ``validation.xlsx``, the reply drafts (``feedback/``) and
    ``collection.json``; their paths.

    All are written to temporary files first and replace the old ones only when all
    are complete, the record last (:class:`~sheetflow.staging.OutputSet`): the record
    holds each reply draft's sha256, so a run stopped while the set moves in leaves
    drafts that ``send`` and ``status`` tell from the ones recorded
    (:mod:`.reply_drafts`). The lines of ``mail.jsonl`` that held no record go into
    the record and above the Status and Mail sheets' tables, so whoever reads the
    outputs later learns of them.
    """
    remove_partials(out_dir)
    paths = {"ratings": out_dir / RATINGS_NAME, "validation": out_dir / "validation.xlsx",
             "collection": out_dir / COLLECTION_FILE,
             "incomplete": out_dir / INCOMPLETE_RATINGS_NAME,
             "feedback": out_dir / FEEDBACK_DIR}
    with OutputSet(label="collect", what="outputs") as outputs:
        ratings = outputs.stage(paths["ratings"])
        result.ratings.write_csv(ratings)
        incomplete = outputs.stage(paths["incomplete"])
        result.ratings.write_csv(incomplete, incomplete=True)
        # out/ sits in the study folder: the commands the workbook names run on it
        write_validation_workbook(outputs.stage(paths["validation"]), result.roster,
                                  result.report, study_dir=out_dir.parent,
                                  journal_damaged=result.journal_damaged)
        record = collection_record(result.study_id, ratings, len(result.ratings),
                                   file_verdicts(result.report), secret,
                                   incomplete=(incomplete, result.ratings.incomplete_rows),
                                   manifest_sha256=result.manifest_sha256,
                                   journal_damaged=result.journal_damaged,
                                   replies=reply_keys(result.feedback),
                                   came_back=result.came_back)
        stage_drafts(result.feedback, paths["feedback"], outputs)  # before their record
        outputs.write(paths["collection"], record)
    mark_written(result.feedback, paths["feedback"])
    return {name: str(path) for name, path in paths.items()}
