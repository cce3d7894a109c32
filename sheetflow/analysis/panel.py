"""The panel: which raters the study expects, which are in the analysis, who is not, why.

The expected panel is every pack of the sealed key (rater and sitting), and the second
raters whose pack protocol 002's lock has still to write. A pack is included when the
collected ratings hold at least one answer from it: a return whose every answer is blank
(taken in with ``--allow-partial``) is *empty*, named so, and adds no rater. Every file
that ``collect`` left out is listed with collect's reason (from ``out/collection.json``);
a pack that is not included is *missing*, with the reason: its file was left out (and
why), nothing was returned for it, or (002) its pack is still to be written. A file
collect could not read or identify but linked to packs (named like one, or its identity
stores naming them: ``linked``, ``linked_raters`` and ``link`` in its verdict) is that
reason for each of them.

Policy for a return with blank answers: ``collect`` reports each blank required
answer as the error ``answer-missing`` and uses none of that file's ratings, so the
rater's pack is missing here and the decision is "incomplete" until a corrected file
is collected. Its valid answers are not used on their own: the protocol's statistics
would then rest on a different set of cases per rater without anyone having decided
so. The Summary, ``summary.json`` and the command's last lines name the rater, the file
and the cells; ``analyze --allow-partial`` reports the analysis, still marked
"incomplete" (and exits 1), and uses the cases such a rater did rate (collect keeps the rows
of a return whose only errors are blank required answers in
``out/ratings-incomplete.csv``, recorded and marked like ``ratings.csv``): the
statistics take the unrated cases as missing data, and the panel line says how many
cases the rater rated.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..collect.mail_state import FETCHED_RISK, journal_caveat
from ..collect.outputs import OutputError, again
from ..hints import command_line
from ..spec.study import Study
from ..workbook import layout as L
from .context import answered

COLLECTION_FILE = Path("out") / "collection.json"
PANEL_METHOD = (
    "Expected panel: every pack (rater and sitting) of the sealed key, and, where protocol "
    "002's second-rater subset is drawn at data lock, each second rater before the lock "
    "writes their pack (their rating is the protocol's second-rater check: missing until "
    "it is in). A pack is included when the collected ratings hold an answer from it; a "
    "return whose every answer is blank adds no rater: it is named as returned empty, and "
    "is not counted among the raters (nor, for 004, among the judges who scored). Every "
    "returned file collect did not use is listed with collect's reason. A pack not "
    "included makes the decision 'incomplete' and analyze exit 1 (without --allow-partial "
    "it unseals nothing); the statistics shown are those of the raters included. A return "
    "with blank required answers (answer-missing) is left out whole until a corrected file "
    "is collected: using part of it would give raters different sets of cases without "
    "anyone deciding so. With --allow-partial the cases such a rater did rate are used (the "
    "statistics take the rest as missing data: Krippendorff's alpha is defined for missing "
    "values) and the panel line names the rater and how many cases they rated; the "
    "decision stays 'incomplete'. A returned file left out while every pack is included (a "
    "stray or damaged file beside a rater's good one) leaves the decision as computed on "
    "the full panel but makes the command exit 1, naming the file; an exact copy of a file "
    "used is counted once and changes nothing.")


@dataclass
class Panel:
    """Expected, included and missing raters, and files left out.

    Attributes
    ----------
    expected : list of str
        Rater ids the study expects ratings from (key order; then any second rater whose
        pack protocol 002's lock has still to write).
    included : list of str
        Rater ids with ratings in the analysis: at least one answer given.
    missing : list of str
        Expected rater ids with at least one pack (sitting) not in the analysis.
    missing_packs : list of dict
        ``{rater, sitting, reason}`` per pack not in the analysis.
    excluded_files : list of dict
        ``{file, rater, reason}`` per returned file whose ratings were not used.
    notes : list of str
        Anything that limits what the panel can say (e.g. no collection record, or a
        mail journal collect read with lines that held no record).
    copies : list of str
        Files among ``excluded_files`` that are byte for byte a file whose ratings are
        used (collect counts such a file once): nothing of them is left out.
    journal_damaged : list of int
        The lines of ``mail.jsonl`` that held no record when collect read it (from
        ``out/collection.json``): the sender checks and received times behind the
        ratings went without them.
    """

    expected: list[str]
    included: list[str]
    missing: list[str] = field(default_factory=list)
    missing_packs: list[dict[str, Any]] = field(default_factory=list)
    excluded_files: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    copies: list[str] = field(default_factory=list)
    journal_damaged: list[int] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True when every expected pack has ratings in the analysis."""
        return not self.missing_packs

    @property
    def files_lost(self) -> list[dict[str, str]]:
        """The files left out whose content is not in the analysis: every file in
        ``excluded_files`` but exact copies of a file used."""
        return [f for f in self.excluded_files if f["file"] not in self.copies]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (the ``panel`` object of ``summary.json``)."""
        return {"expected": list(self.expected), "included": list(self.included),
                "missing": list(self.missing), "missing_packs": list(self.missing_packs),
                "excluded_files": list(self.excluded_files), "complete": self.complete,
                "notes": list(self.notes), "journal_damaged": list(self.journal_damaged)}

    def sentence(self) -> str:
        """One line for the Summary and the command's output."""
        n_exp, n_in = len(self.expected), len(set(self.included) & set(self.expected))
        if self.complete:
            return f"panel complete: {n_in} of {n_exp} expected raters included"
        packs = "; ".join(f"{p['rater']}" + (f" (sitting {p['sitting']})"
                                             if p.get("sitting", 1) != 1 else "")
                          + f": {p['reason']}" for p in self.missing_packs)
        return (f"panel INCOMPLETE: {n_in} of {n_exp} expected raters fully included; "
                f"missing {packs}")


def build_panel(expected_packs: list[tuple[str, int]], data: pd.DataFrame,
                files: list[dict[str, Any]] | None, *,
                partial: dict[tuple[str, int], str] | None = None,
                journal_damaged: list[int] | None = None,
                study_dir: str | Path | None = None,
                awaiting: dict[str, str] | None = None) -> Panel:
    """Compare the expected packs with the ratings and collect's file verdicts.

    Parameters
    ----------
    expected_packs : list of (rater, sitting)
        Every pack the study expects (from the sealed key).
    data : pandas.DataFrame
        The unblinded ratings (columns ``rater`` and ``sitting``).
    files : list of dict, optional
        Collect's per-file verdicts (``file, rater, used, reason``); None when the
        collection record is not there.
    partial : dict of (rater, sitting) to str, optional
        Packs whose ratings come from a return left out only for blank required
        answers (``analyze --allow-partial``): in the data, yet still missing; the
        value says how many cases were rated in full and in part.
    journal_damaged : list of int, optional
        The lines of ``mail.jsonl`` that held no record when collect read it
        (:func:`recorded_journal_damage`): named in a note.
    study_dir : str or Path, optional
        The study folder as the user named it: the notes name the commands to run on it
        (summary.json and the Summary sheet keep them, so the folder this run used).
    awaiting : dict of str to str, optional
        Raters the study expects whose pack is not written yet (protocol 002's second
        raters before ``sheetflow lock``, :func:`~sheetflow.packs.second_rater.awaiting_lock`),
        each with what is to be done: expected (sitting 1), and missing for that reason.

    Returns
    -------
    Panel
    """
    # a few per rater, not per rating; a pack whose every answer is blank (a return
    # taken in with --allow-partial) is no rater "with ratings"
    given = data if "value" not in data else data[answered(data["value"])]
    packs = given[["rater", "sitting"]].drop_duplicates()
    present = {(str(r), int(s)) for r, s in zip(packs["rater"], packs["sitting"], strict=True)}
    awaiting = awaiting or {}
    expected_packs = [*expected_packs, *((r, 1) for r in awaiting)]
    expected = list(dict.fromkeys(r for r, _ in expected_packs))
    included = list(dict.fromkeys(str(r) for r in packs["rater"]))
    left_out = [f for f in files or [] if not f.get("used")]
    used = {f.get("sha256") for f in files or [] if f.get("used") and f.get("sha256")}
    # an exact copy of a file used, or a file set aside for the rater's newer one (sent
    # after the reply asking for fixes): nothing of it is missing from the analysis
    copies = [str(f.get("file", "")) for f in left_out
              if f.get("sha256") in used or f.get("set_aside")]
    excluded = [{"file": str(f.get("file", "")), "rater": str(f.get("rater", "")),
                 "reason": _why(f)} for f in left_out]
    missing_packs = []
    partial = partial or {}
    for rater, sitting in expected_packs:
        if (rater, sitting) in present and (rater, sitting) not in partial:
            continue
        # each sitting's own file: a rater's sitting-2 file is no reason sitting 1 is out
        mine = [f for f, raw in zip(excluded, left_out, strict=True)
                if file_of_pack(raw, rater, L.pack_id(rater, sitting))]
        reason = "; ".join(f"file {f['file']} not used: {f['reason']}" for f in mine) \
            if mine else awaiting.get(rater, "no return collected")
        entry = {"rater": rater, "sitting": sitting, "reason": reason}
        if (rater, sitting) in partial:
            entry.update(_partial_entry(mine, partial[(rater, sitting)],
                                        empty=(rater, sitting) not in present))
        missing_packs.append(entry)
    notes = [] if files is not None else [
        f"{COLLECTION_FILE} not found: files collect left out cannot be named here; "
        f"{again('collect', study_dir)}"]
    if journal_damaged:
        notes.append(journal_note(journal_damaged, study_dir))
    return Panel(expected=expected, included=included,
                 missing=list(dict.fromkeys(p["rater"] for p in missing_packs)),
                 missing_packs=missing_packs, excluded_files=excluded, notes=notes,
                 copies=copies, journal_damaged=list(journal_damaged or []))


def file_of_pack(file: dict[str, Any], rater: str, pack: str) -> bool:
    """Whether collect's verdict on ``file`` speaks of the pack ``pack`` of ``rater``:
    a file that names its pack is that pack's alone; one that does not (unreadable, or
    a record written before files named their pack) is its rater's, or that of any
    pack it was linked to."""
    if file.get("pack_id"):
        return file["pack_id"] == pack
    return file.get("rater") == rater or pack in (file.get("linked") or [])


def _partial_entry(files: list[dict[str, str]], rated: str, *, empty: bool
                   ) -> dict[str, Any]:
    """The missing-pack fields of a return left out for blank required answers and
    taken in with ``--allow-partial``: ``partial`` when it holds an answer, ``empty``
    (every answer blank: nothing of it is in the analysis) when it holds none."""
    files_said = "; ".join(f"file {f['file']} ({f['reason']})" for f in files)
    left_out = f"{files_said or 'the return'} was left out by collect"
    if empty:
        return {"empty": True,
                "reason": f"{left_out}; every answer in it is blank ({rated}), so this "
                          "rater has no rating in the analysis and is not counted among "
                          "the raters"}
    return {"partial": True,
            "reason": f"{left_out}; with --allow-partial the answers this rater gave are "
                      f"used ({rated}), the blank ones are missing data"}


def journal_note(lines: list[int], study_dir: str | Path | None = None) -> str:
    """The note (Summary, summary.json, the command's output) that the ratings were
    collected from a mail journal with ``lines`` that held no record; the commands to
    run again name ``study_dir``, the study folder as the user named it."""
    if study_dir is None:
        then = "run sheetflow collect and sheetflow analyze again"
    else:
        then = (f"run '{command_line('collect', study_dir)}' and "
                f"'{command_line('analyze', study_dir)}' again")
    return journal_caveat(lines, risk=f"{FETCHED_RISK}, and these ratings are the ones "
                          "that collect kept", then=then)


def recorded_journal_damage(record: dict[str, Any],
                            study_dir: str | Path | None = None) -> list[int]:
    """The lines of ``mail.jsonl`` collect's record (``out/collection.json``) says held no
    record when it ran; none for a record from before collect wrote them.

    ``study_dir``, the study folder as the user named it, is named in the command the
    error says to run.

    Raises
    ------
    OutputError
        The record gives them as something other than a list of line numbers.
    """
    lines = record.get("journal_damaged", [])
    if not isinstance(lines, list) or not all(
            isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in lines):
        raise OutputError(f"{COLLECTION_FILE} is unreadable (journal_damaged is not a list "
                          f"of line numbers); {again('collect', study_dir)}")
    return lines


def _why(verdict: dict[str, Any]) -> str:
    """Why collect left a file out: its reason, after what ties it to a pack when it
    was identified as none (``link``)."""
    reason = str(verdict.get("reason", "") or "not used")
    return f"{verdict['link']}; {reason}" if verdict.get("link") else reason


def rated_cases(rows: pd.DataFrame, required: Callable[[str, str], bool]
                ) -> dict[tuple[str, int], str]:
    """Per pack of blinded rating ``rows``: "N of M cases in full, K in part".

    ``required(dimension, field)`` says whether an answer must be given; a case is
    rated in full when every required answer of it is, in part when some answer is.
    Study-scope answers and batch times belong to no case and are not counted.
    """
    out = {}
    cases = rows[rows["case_id"].astype(str) != ""]
    for (rater, sitting), mine in cases.groupby(["rater_id", "sitting"]):
        given = mine["value"].astype(str).str.strip() != ""
        needed = [required(d, f) for d, f in zip(mine["dimension"], mine["field"],
                                                 strict=True)]
        per = pd.DataFrame({"case": mine["case_id"], "given": given,
                            "missing": [n and not g for n, g in zip(needed, given,
                                                                    strict=True)]})
        agg = per.groupby("case").agg(any_given=("given", "any"), gap=("missing", "any"))
        full = int((agg["any_given"] & ~agg["gap"]).sum())
        part = int((agg["any_given"] & agg["gap"]).sum())
        out[(str(rater), int(sitting or 1))] = (f"{full} of {len(agg)} cases in full, "
                                                f"{part} in part")
    return out


def missing_before_unsealing(study_dir: Path, files: list[dict[str, Any]],
                             study: Study | None = None) -> list[str]:
    """The packs no used return stands for, from the blinded manifest and collect's
    record (``files``) alone: read before the key is opened, so an incomplete panel is
    named without unblinding anything. One line per pack: who, which sitting, why;
    with ``study``, also each rater whose pack is still to be written (protocol 002's
    second raters before ``sheetflow lock``).
    """
    from ..packs.manifest import open_manifest
    from ..packs.second_rater import awaiting_lock

    manifest = open_manifest(study_dir)
    manifest.close()  # only the pack heads
    used = {str(f.get("pack_id", "")) for f in files if f.get("used")}
    awaiting = awaiting_lock(study, (h.rater_id for h in manifest.heads)) if study else {}
    lines = []
    for head in manifest.heads:
        if head.pack_id in used:
            continue
        mine = [f for f in files if file_of_pack(f, head.rater_id, head.pack_id)]
        why = "; ".join(f"file {f.get('file')} not used: {_why(f)}"
                        for f in mine) or "no return collected"
        lines.append(f"{head.rater_id} (sitting {head.sitting}): {why}")
    return lines + [f"{rater} (sitting 1): {why}" for rater, why in awaiting.items()]
