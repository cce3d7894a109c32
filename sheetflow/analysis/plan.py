"""Run a study's plan: :func:`analyze` from a study folder, :func:`run_plan` in memory."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pandas as pd

from .._gc import release_free_memory
from ..collect.outputs import (
    check_mark,
    check_row_count,
    returns_since_collect,
    verify_ratings,
    verify_returns,
)
from ..errors import IncompleteError, MissingStepError
from ..hints import command_line
from ..packs.seal import check_collected_manifest, load_generated_study, require_seal
from ..packs.second_rater import awaiting_lock
from ..spec.blanks import blank_response_notes
from ..spec.rubric import answer_required
from ..spec.study import Study
from ..words import counted, first_few
from ..workbook import layout as L
from .context import Analysis, Context, answered, answered_packs, natural_order
from .keep_known_files import batch_times, yield_figure
from .owner_record import add_owner_records
from .panel import (
    Panel,
    build_panel,
    journal_note,
    missing_before_unsealing,
    rated_cases,
    recorded_journal_damage,
)
from .registry import all_analyses, planned_analyses, protocol_plan
from .selfchecks import self_checks
from .summary import methods, reported_analyses, summary
from .unblind import (
    RATINGS_FILE,
    RAW_COLUMNS,
    add_totals,
    complete_columns,
    internal_scores,
    key_entries,
    key_sides,
    missing_total_notes,
    unblind,
    verify_seal,
)

PartReady = Callable[[Analysis, str], None]
"""Called with the analysis so far and ``"feedback"`` or a table's name, as each is done."""


def analyze(study_dir: str | Path, *, published: str | None = None,
            on_part: PartReady | None = None, allow_partial: bool = False) -> Analysis:
    """Unseal, unblind and run the plan of the study in ``study_dir``.

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``sheetflow generate`` and ``sheetflow collect``.
    published : str, optional
        The key sha256 published before scoring; the key must have it.
    on_part : callable, optional
        See :func:`run_plan`.
    allow_partial : bool
        Unseal and analyse the raters there are when the panel is incomplete. Without
        it an incomplete panel stops the analysis before the key is opened: unblinding
        cannot be undone, so it waits until every expected return is in.

    Returns
    -------
    Analysis

    Raises
    ------
    SealError
        The key or the spec does not match its sealed hash.
    MissingStepError
        There are no collected ratings yet (``out/ratings.csv`` is missing).
    OutputError
        ``out/ratings.csv`` does not match ``out/collection.json`` (cut off, changed,
        or left by a collect that did not finish).
    SealError
        Also when ``out/collection.json`` does not carry the study secret's mark (the
        table and its record edited together), or a used return changed after collect.
    IncompleteError
        A pack has no used return (and ``allow_partial`` is not set), or no return has
        a rating at all; nothing unsealed.
    """
    root = Path(study_dir)
    study = load_generated_study(root)  # a sealed input edited: refused as such
    require_seal(root)  # the steps in order: generate first, then collect
    ratings_path = root / RATINGS_FILE
    if not ratings_path.exists():
        raise MissingStepError(f"{RATINGS_FILE} not found in {root}",
                               f"sheetflow collect {root}")
    # the table and its record, read once: whole, and the table collect wrote
    collected = verify_ratings(root, incomplete=allow_partial)
    damaged = recorded_journal_damage(collected.record, study_dir)
    # each used return hashed once: checked against the record, then not hashed again
    # by the search for files collect did not read
    returns_sha256 = verify_returns(root, collected.files)
    _refuse_returns_not_collected(root, collected.files)
    # the rows of returns left out for blank answers (blinded: read before unsealing)
    left = _read_table(collected.incomplete) if collected.incomplete else None
    if not allow_partial:
        _refuse_incomplete_panel(root, study, collected.files, damaged)
    elif not collected.rows and (left is None or not answered(left["value"]).any()):
        _refuse_no_rating(root, study, collected.files, blank_returns=left is not None)
    sealed = verify_seal(root, study, published)
    key, key_hash, secret = sealed.key, sealed.key_sha256, sealed.secret
    if secret is not None:  # the record carries the secret's mark, from the returns on disk
        check_mark(collected.record, secret, study_dir=root)
    check_collected_manifest(sealed, collected.record)  # the ratings placed by the sealed map
    data, recorded = collected.data, collected.rows
    audit = {"ratings_sha256": hashlib.sha256(data).hexdigest(),
             "returns_sha256": returns_sha256}
    raw = _read_table(data)
    del data  # parsed: the table's text (60 MB at 500 raters) is not kept through the run
    check_row_count(recorded, len(raw), study_dir=root)
    if left is None:  # an empty copy, not a slice: a slice would keep all of raw alive
        left = raw.iloc[:0].copy()
    check_row_count(collected.incomplete_rows, len(left), study_dir=root)
    if len(left):  # --allow-partial: the cases rated in returns left out for blanks
        audit["incomplete_ratings_sha256"] = hashlib.sha256(collected.incomplete).hexdigest()
        raw = pd.concat([raw, left], ignore_index=True)
    collected = collected._replace(data=b"", incomplete=b"")
    data = unblind(study, raw, key_sides(key))
    entries = key_entries(key)
    batches = batch_times(study, raw, entries)
    # the collector's table as text is one string object per cell (about 150 MB at 500
    # raters); unblinded and its batch times read, it is not kept through the run
    del raw
    release_free_memory()  # reading and unblinding's temporaries (see there)
    internal = internal_scores(study, sealed.input_bytes)
    seeds = {L.pack_id(p.get("rater_id"), p.get("sitting", 1)): p.get("seeds", {})
             for p in entries}
    expected = [(str(p.get("rater_id", p.get("rater", ""))), int(p.get("sitting", 1)))
                for p in entries]
    partial = rated_cases(left, _required_answer(study)) if len(left) else {}
    panel = build_panel(expected, complete_columns(data), collected.files, partial=partial,
                        journal_damaged=damaged, study_dir=study_dir,
                        awaiting=awaiting_lock(study, (r for r, _ in expected)))
    names = case_names(entries)
    # the key as read (some 90,000 objects at 500 raters) is not kept through the run
    del sealed, key, entries
    holder = [data]  # run_plan's first step replaces the table: it is not kept here either
    del data
    analysis = _run_plan(study, holder, key_hash=key_hash, internal=internal,
                         key_seeds=seeds, panel=panel, on_part=on_part, case_names=names)
    analysis.summary["audit"] = audit
    analysis.batches = batches
    if study.design.batch_size:  # protocol 001: the rater description and deviations
        add_owner_records(analysis)
    return analysis


def _required_answer(study: Study) -> Callable[[str, str], bool]:
    dims = {d.id: d for d in study.rubric.dimensions}
    return lambda dim, part: dim in dims and answer_required(dims[dim], part)


def _read_table(data: bytes) -> pd.DataFrame:
    return pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False,
                       usecols=lambda name: name in RAW_COLUMNS)


def _refuse_returns_not_collected(root: Path, files: list[dict[str, Any]]) -> None:
    """Refuse when ``returns/`` holds a file the last collect did not read.

    A collect stopped before its outputs moved in (or never run after a file came)
    leaves the table of the files before: analysed, a corrected return would count
    with its old answers and a new one not at all, with nothing saying so. The returns
    collect used (``files``: its record's entries) were checked just before by
    :func:`~sheetflow.collect.outputs.verify_returns` (a changed one is the seal's
    refusal, exit 3, "changed after collect"): their recorded sha256s stand in for
    hashing them again.

    Raises
    ------
    MissingStepError
        Naming the files (the first three) and the collect to run.
    """
    used = {str(f.get("file", "")): str(f.get("sha256", "")) for f in files if f.get("used")}
    changed = [name for name in returns_since_collect(root, digests=used) if name not in used]
    if changed:
        shown = first_few(changed)
        raise MissingStepError(
            f"{L.RETURNS_DIR}/ holds {counted(len(changed), 'file')} the last collect did "
            f"not read ({shown}): {RATINGS_FILE} does not include them",
            command_line("collect", root))


def _refuse_incomplete_panel(root: Path, study: Study, files: list[dict[str, Any]],
                             journal_damaged: list[int]) -> None:
    """Stop before the key is opened when a pack has no used return, or a rater's pack
    is still to be written (002's second raters before the lock), naming the mail
    journal's damaged lines too: which of a rater's two files stands, and so who is
    missing, may have been decided without them."""
    missing = missing_before_unsealing(root, files, study)
    if missing:
        also = f". Also: {journal_note(journal_damaged, root)}" if journal_damaged else ""
        raise IncompleteError(
            f"the panel is incomplete, so nothing was unsealed: {'; '.join(missing)}. "
            "Collect the missing returns, or run analyze --allow-partial to unseal and "
            f"analyse the raters there are{also}")


def _refuse_no_rating(root: Path, study: Study, files: list[dict[str, Any]], *,
                      blank_returns: bool) -> None:
    """Stop before the key is opened when no return holds an answer: unsealing for no
    rating at all would show nothing. ``blank_returns``: returns were left out for blank
    answers, and every answer in them is blank (said, since they were returned)."""
    blank = ". Every answer in the returns left out for blank answers is blank" \
        if blank_returns else ""
    raise IncompleteError(
        "no return has ratings to analyse, so nothing was unsealed: "
        f"{'; '.join(missing_before_unsealing(root, files, study))}{blank}. Collect the "
        "returns first")


def run_plan(study: Study, data: pd.DataFrame, *, key_hash: str = "",
             internal: pd.DataFrame | None = None,
             key_seeds: dict[str, Any] | None = None,
             panel: Panel | None = None, on_part: PartReady | None = None,
             case_names: dict[tuple[str, str], tuple[int, str]] | None = None) -> Analysis:
    """Run every analysis of ``study.plan.run`` on unblinded ratings.

    Parameters
    ----------
    study : Study
    data : pandas.DataFrame
        Unblinded ratings, columns :data:`DATA_COLUMNS` (``role``, ``label`` and
        ``confidence`` may be absent), without totals.
    key_hash : str
        The sealed key's sha256, recorded in the summary.
    internal : pandas.DataFrame, optional
        Internal scores (``case, arm, total``) for ``spearman_internal``.
    key_seeds : dict, optional
        Seeds recorded in the key, copied into the summary.
    panel : Panel, optional
        The expected panel against the ratings (default: every rater of the spec,
        and a second sitting when the design repeats items).
    on_part : callable, optional
        ``on_part(analysis, part)`` as each part is final: ``"feedback"`` (the raters'
        feedback tables, computed first) and then each table's name, so a caller can
        write the large parts while the rest is computed (see
        :func:`sheetflow.report.analyze_and_write`).
    case_names : dict, optional
        ``(rater, item id) -> (card number, name)`` for sitting 1, from the key
        (:func:`case_names`): what the raters' feedback calls each case.

    Returns
    -------
    Analysis
    """
    return _run_plan(study, [data], key_hash=key_hash, internal=internal,
                     key_seeds=key_seeds, panel=panel, on_part=on_part, case_names=case_names)


def _run_plan(study: Study, holder: list[pd.DataFrame], *, key_hash: str,
              internal: pd.DataFrame | None, key_seeds: dict[str, Any] | None,
              panel: Panel | None, on_part: PartReady | None,
              case_names: dict[tuple[str, str], tuple[int, str]] | None) -> Analysis:
    """:func:`run_plan` on the table in ``holder``, taken out of it: the unblinded table
    without totals (10 MB at 500 raters) is let go once the analysis's own is made."""
    # a pack whose every answer is blank (taken in with --allow-partial) adds no rater:
    # counted, it made a study of "3 raters" and a judge "who scored" of one who did not
    data = answered_packs(complete_columns(holder.pop()))
    if panel is None:
        panel = build_panel(expected_packs(study), data, [])
    data = natural_order(add_totals(data, study.rubric), ["rater", "sitting", "case"])
    panel.notes += missing_total_notes(data, study.rubric)
    # check and generate warned of these, but the analyst reads the Summary
    panel.notes += blank_response_notes(study)
    ctx = Context(study, data, internal, case_names)
    analysis = Analysis(study, data)
    ready = on_part or (lambda _analysis, _part: None)
    own = protocol_plan(study.protocol)
    analysis.feedback = own.feedback(ctx) if own is not None and own.feedback else {}
    if own is not None and own.feedback_notes:  # before the summary, which holds the notes
        panel.notes += own.feedback_notes(ctx)
    ready(analysis, "feedback")
    for name in planned_analyses(study):
        analysis.tables[name] = _guarded(name, ctx)
        release_free_memory()  # its temporaries (the pairwise tables' are some 20 MB)
        ready(analysis, name)
    analysis.tables["self_checks"] = self_checks(ctx)
    ready(analysis, "self_checks")
    analysis.summary = summary(ctx, analysis.tables, key_hash, key_seeds or {},
                               panel)
    analysis.panel = panel
    ran = reported_analyses(analysis.tables, analysis.summary)
    analysis.methods = _with_result_methods(
        _with_data_methods(methods(study, ran), ctx), ctx, analysis.summary)
    analysis.figures = _figures(ctx, analysis.tables)
    return analysis


def case_names(entries: list[dict[str, Any]]) -> dict[tuple[str, str], tuple[int, str]]:
    """Per rater and item (sitting 1): the card number and the name the rater saw."""
    out = {}
    for entry in entries:
        if int(entry.get("sitting", 1)) != 1:
            continue
        rater = str(entry.get("rater_id", entry.get("rater", "")))
        for pos, card in enumerate(entry.get("cases", []), 1):
            number = int(card.get("position", pos))
            out[(rater, str(card.get("item_id", "")))] = (
                number, L.case_name({"card": number, "code": card.get("code", "")}))
    return out


def _with_data_methods(entries: list[tuple[str, str]], ctx: Context) -> list[tuple[str, str]]:
    """The protocol's data-dependent Methods entries, before the closing ones (Panel...)."""
    own = protocol_plan(ctx.study.protocol)
    extra = own.data_methods(ctx) if own is not None and own.data_methods else []
    at = next((i for i, (topic, _) in enumerate(entries) if topic == "Panel"), len(entries))
    return [*entries[:at], *extra, *entries[at:]]


def _with_result_methods(entries: list[tuple[str, str]], ctx: Context,
                         summary_doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Each entry with the protocol's sentence from the computed figures after its text
    (the Monte Carlo error of the p it explains), where it has one."""
    own = protocol_plan(ctx.study.protocol)
    said = own.result_methods(ctx, summary_doc) if own is not None and own.result_methods \
        else {}
    return [(topic, f"{text} {said[topic]}" if said.get(topic) else text)
            for topic, text in entries]


def expected_packs(study: Study) -> list[tuple[str, int]]:
    """(rater, sitting) for every rater of the spec; sitting 2 when items repeat."""
    sittings = (1, 2) if study.design.repeats else (1,)
    return [(r.id, s) for r in study.raters for s in sittings]


def _figures(ctx: Context, tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    """Chart data: alpha with error-bar lengths, score counts per rater, scatter points."""
    out: dict[str, pd.DataFrame] = {}
    if "alpha" in tables:
        a = tables["alpha"][["measure", "alpha", "ci_low", "ci_high"]].copy()
        a["err_plus"] = (a["ci_high"] - a["alpha"]).clip(lower=0)
        a["err_minus"] = (a["alpha"] - a["ci_low"]).clip(lower=0)
        for band in ctx.plan.bands:
            if band.minimum > 0:
                a[f"threshold {band.minimum:g}"] = band.minimum
        out["alpha"] = a
    if ctx.study.rubric.totals:
        tid = ctx.study.rubric.totals[0].id
        vals = ctx.numeric(tid)
        if not vals.empty:
            counts = vals.pivot_table(index="value", columns="rater", values="unit",
                                      aggfunc="count", fill_value=0)
            out["distribution"] = counts.reset_index().rename(columns={"value": tid})
    if ctx.internal is not None and ctx.study.rubric.totals:
        tid = ctx.study.rubric.totals[0].id
        ext = ctx.numeric(tid).groupby(["case", "arm"])["value"].mean().rename("external")
        joined = pd.concat([ext, ctx.internal.set_index(["case", "arm"])["total"]
                            .rename("internal")], axis=1, join="inner").dropna()
        out["scatter"] = joined.reset_index()
    if "alpha" in tables.get("confidence_agreement", pd.DataFrame()):
        out["confidence"] = _confidence_figure(tables["confidence_agreement"])
    if "yield_fisher" in tables and "ci_low" in tables["yield_fisher"]:
        out["yield"] = yield_figure(tables["yield_fisher"])
    if "direction_agreement" in tables and "comparison" in tables["direction_agreement"]:
        d = tables["direction_agreement"]
        out["direction"] = d[d["comparison"] == "majority"][["rater", "agreement"]]
    return out


def _confidence_figure(table: pd.DataFrame) -> pd.DataFrame:
    """Per dimension: alpha on all ratings and on Medium/High, with error-bar lengths."""
    wide = {}
    for subset in ("all ratings", "Medium/High"):
        part = table[table["subset"] == subset].set_index("dimension")
        wide[f"alpha {subset}"] = part["alpha"]
        wide[f"plus {subset}"] = (part["ci_high"] - part["alpha"]).clip(lower=0)
        wide[f"minus {subset}"] = (part["alpha"] - part["ci_low"]).clip(lower=0)
    return pd.DataFrame(wide).rename_axis("dimension").reset_index()


def _guarded(name: str, ctx: Context) -> pd.DataFrame:
    """One analysis; data it cannot use gives a row with the reason, not an exception."""
    try:
        return all_analyses()[name](ctx)
    except (ValueError, KeyError, TypeError, ZeroDivisionError) as exc:
        return pd.DataFrame([{"analysis": name, "reason": f"could not be computed: {exc}"}])
