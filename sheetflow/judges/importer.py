"""Import automated judges' JSONL outputs as raters (protocol 004).

An automated judge scores the same rubric a human would; its output arrives as JSONL,
one record per response, with one object per judge (``judge_opus``, ``judge_gpt``,
...). :func:`import_judges` turns each judge into a rater of the study: it fills that
rater's generated workbook with the judge's answers, cell by cell through the blinded
manifest, and saves the copy into ``returns/``. ``sheetflow collect`` then validates
it like any human return and ``sheetflow analyze`` treats judges and humans alike.

The mapping lives in the study's ``[analysis.params.jsonl]`` table::

    [analysis.params.jsonl]
    # JSON key -> rater id: protocol 004's locked trio, three judges to three raters
    judges = { judge_opus = "judge-1", judge_gpt = "judge-2", judge_minimax = "judge-3" }
    arms = { A = "cell_a_opus_solo", B = "cell_b_opus_memory_harness" }  # cell -> arm
    task_field = "task_id"      # record field naming the task (default task_id)
    cell_field = "cell_id"      # record field naming the arm's cell (default cell_id)
    task_column = "task_id"     # items column holding the task

A record's response is the item whose task column and arm column match the record.
Values are written as the judge gave them; collect reports anything off the rubric.
The generated packs are never modified: a returns folder inside ``packs/``,
``sealed/`` or ``out/`` is refused.

The arguments are checked first (the study's mapping, the execution window, the
JSONL file, the returns folder, files already there without ``force``): a refusal
there changes nothing. Then every record is checked against itself and the items
(:mod:`sheetflow.judges.records`: schema, judge means and trio mean recomputed, verdicts
against the stated thresholds, candidate response against the item); any mismatch is
reported with its line, record and field, and nothing is written or removed (the
workbooks and pilot summary of an earlier import stay together as it wrote them). The
import holds the study lock (``out/.lock``), as collect and analyze do: an analyze,
which builds its own ``out/pilot-summary.json`` from the one there, never runs
beside it. A judge object absent from a record
leaves that judge's cells blank (collect then reports them) and, the trio being
locked, ``out/pilot-summary.json`` is not written. Otherwise, given the run's
execution window, ``out/pilot-summary.json`` is written in the protocol's own schema
(costs, call counts, window, ``results_per_task``, ``aggregate``). The workbooks and
the summary are staged and replace the earlier ones together
(:class:`~sheetflow.staging.OutputSet`); an import that writes no summary removes an
earlier one and says so (``removed``).
"""

from __future__ import annotations

import datetime as dt
import json
import shlex
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import openpyxl

from ..collect.content_checks import check_word_count
from ..collect.run_lock import study_lock
from ..errors import MissingStepError, SheetflowError, UsageError
from ..hints import command_line
from ..packs.manifest import Manifest, open_manifest
from ..packs.seal import SEALED_DIR
from ..spec.study import Study, load_study
from ..staging import OutputSet, remove_partials
from ..words import counted
from ..workbook import layout as L
from .records import (
    DIRECTION_TOLERANCE,
    Thresholds,
    check_records,
    pilot_summary,
    unknown_fields,
)

PILOT_SUMMARY = "out/pilot-summary.json"


class JudgeImportError(SheetflowError):
    """A JSONL file of judge outputs cannot be imported as it is; nothing was written
    or removed."""


@dataclass
class JudgeImport:
    """What :func:`import_judges` wrote.

    Attributes
    ----------
    files : list of Path
        One filled workbook per judge, in ``returns/``.
    records : int
        JSONL records read.
    answers : int
        Answer cells filled.
    missing : list of str
        ``judge key: item id`` for each judge object absent (or null) in a record.
    missing_at : list of str
        The same gaps, each with its file, line and record (``judges.jsonl: line 3
        (task-1/C): judge_gpt: item R01``), for the warning that names them.
    ignored : list of str
        One line per field of the records sheetflow does not know (file, the first
        line and record holding it, the field, how many more lines hold it): not
        imported.
    word_counts : list of str
        One line per judge text outside its rubric dimension's word range (file, line,
        record, judge and field, words counted, the range): imported as given, since
        the range is guidance, as collect treats it.
    summary_path : Path or None
        ``out/pilot-summary.json`` when written.
    summary_note : str
        Why it was not written (a judge missing: the trio is locked; no execution
        window given) and, for a missing window, the whole command that writes it.
    removed : list of Path
        The ``out/pilot-summary.json`` written before, which this import replaced with
        none.
    """

    files: list[Path] = field(default_factory=list)
    records: int = 0
    answers: int = 0
    missing: list[str] = field(default_factory=list)
    missing_at: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)
    word_counts: list[str] = field(default_factory=list)
    summary_path: Path | None = None
    summary_note: str = ""
    removed: list[Path] = field(default_factory=list)


class RecordMismatchError(JudgeImportError):
    """Records that disagree with themselves or with the items; nothing was written.

    Attributes
    ----------
    lines : list of str
        One line per mismatch: file, line, record (task/cell), field and what differs.
    """

    def __init__(self, lines: list[str]):
        super().__init__(f"{len(lines)} mismatch(es) in the judge records; nothing was "
                         "written:\n" + "\n".join(lines))
        self.lines = lines


def import_judges(study_dir: str | Path, jsonl_path: str | Path,
                  returns_dir: str | Path | None = None, *, force: bool = False,
                  window: str | None = None) -> JudgeImport:
    """Fill each judge's workbook from a JSONL file of judge outputs.

    Parameters
    ----------
    study_dir : str or Path
        A study folder after ``sheetflow generate``.
    jsonl_path : str or Path
        The judges' outputs, one JSON object per line.
    returns_dir : str or Path, optional
        Where to save the filled workbooks (default ``study_dir/returns``).
    force : bool, default False
        Replace existing files of the same name in ``returns_dir``.
    window : str, optional
        The run's execution window, ``"<ISO start> to <ISO end>"`` (UTC), for
        ``out/pilot-summary.json`` (the records carry no times).

    Returns
    -------
    JudgeImport

    Raises
    ------
    JudgeImportError
        A line that is not JSON, a record without its task or cell, a cell or task
        that matches no item, an unknown judge rater. The message names the file and
        line; nothing is written or removed.
    UsageError
        The study has no ``[analysis.params.jsonl]`` mapping or no generated packs, the
        window or a path is not usable, or a target file exists and ``force`` is
        False. Nothing is changed.
    OutputError
        Another collect, analyze, plan, send or import still held the study lock
        (``out/.lock``) after :data:`~sheetflow.collect.outputs.LOCK_WAIT` seconds.
    """
    root = Path(study_dir)
    study = load_study(root)  # a folder that is no study: refused before out/ is locked
    # an analyze builds its out/pilot-summary.json from the one there: an import in the
    # meantime would be lost, so the two take turns
    with study_lock(root, "import-judges", tidy=True):
        plan = _checked_arguments(root, study, Path(jsonl_path), returns_dir, force, window)
        # a refused record set changes nothing: the workbooks and the pilot summary of
        # the last import stay together, as that import wrote them
        records, answers = _checked_records(study, plan)
        return _write(study, plan, records, answers)


@dataclass
class _Plan:
    """The checked arguments of one import: what it reads and where it writes."""

    jsonl: Path
    mapping: dict[str, Any]
    window: str | None
    out_dir: Path
    packs: dict[str, dict[str, Any]]
    items: dict[tuple[str, str], str]
    command: str
    """The command as run, for the advice to run it again with the window."""


def _checked_arguments(root: Path, study: Study, jsonl: Path,
                       returns_dir: str | Path | None, force: bool,
                       window: str | None) -> _Plan:
    """Every argument checked before anything is read, written or removed."""
    mapping = _mapping(study)
    if window is not None:
        window = check_window(window)
    manifest_path = root / L.PACKS_DIR / L.MANIFEST_FILE
    if not manifest_path.exists():
        raise MissingStepError(f"{root}: no generated packs", f"sheetflow generate {root}")
    _check_jsonl_path(jsonl)
    out_dir = Path(returns_dir) if returns_dir is not None else root / L.RETURNS_DIR
    _refuse_study_output(out_dir, root)
    items = _item_lookup(study, mapping)
    packs = _packs(root, sorted(set(mapping["judges"].values())))
    taken = [out_dir / pack["file"] for pack in packs.values()
             if (out_dir / pack["file"]).exists()]
    if taken and not force:  # all refused before one is written
        raise UsageError(f"{taken[0]}: already exists"
                         + (f" (and {counted(len(taken) - 1, 'other')})" if len(taken) > 1
                            else "") + "; move it away or use --force")
    returns = ["--returns", str(returns_dir)] if returns_dir is not None else []
    command = shlex.join(["sheetflow", "import-judges", str(root), str(jsonl), *returns])
    return _Plan(jsonl, mapping, window, out_dir, packs, items, command)


def _packs(root: Path, rater_ids: list[str]) -> dict[str, dict[str, Any]]:
    """Rater id -> the first-sitting pack the import fills for that judge."""
    manifest = open_manifest(root)
    try:
        return {rater_id: _pack_of(manifest, rater_id, root) for rater_id in rater_ids}
    finally:
        manifest.close()


def _checked_records(study: Study, plan: _Plan
                     ) -> tuple[list[tuple[int, dict[str, Any]]], dict[str, Any]]:
    """The records and each judge's answers, every record checked; else an error."""
    records = _read_jsonl(plan.jsonl)
    answers = _answers_by_rater(records, plan.mapping, plan.items, plan.jsonl.name)
    mismatches = check_records(records, list(plan.mapping["judges"]),
                               _responses(study, plan.mapping), _thresholds(study),
                               written=_written(study))
    mismatches = [m for m in mismatches if not m.absent_judge]  # blank cells, said later
    if mismatches:
        raise RecordMismatchError([m.text(plan.jsonl.name) for m in mismatches])
    return records, answers


def _write(study: Study, plan: _Plan, records: list[tuple[int, dict[str, Any]]],
           answers: dict[str, Any]) -> JudgeImport:
    """Stage every workbook and the summary; they replace the earlier ones together."""
    result = JudgeImport(records=len(records), missing=answers.pop("__missing__", []),
                         missing_at=answers.pop("__missing_at__", []),
                         ignored=_ignored(study, plan, records),
                         word_counts=_word_counts(study, plan, records))
    remove_partials(plan.out_dir)  # what a killed import left; out/'s are analyze's to clean
    with OutputSet(label="import-judges", what="workbooks") as outputs:
        for rater_id, pack in plan.packs.items():
            target = plan.out_dir / pack["file"]
            result.answers += _fill(study.root / L.PACKS_DIR / pack["file"],
                                    outputs.stage(target), pack, answers[rater_id])
            result.files.append(target)
        _stage_summary(study, plan, [r for _, r in records], result, outputs)
    result.removed = list(outputs.removed)
    return result


def _written(study: Study) -> set[str]:
    """The fields of a judge's object :func:`_fill` writes into a cell: the rubric's."""
    return {d.id for d in study.rubric.dimensions}


def _ignored(study: Study, plan: _Plan, records: list[tuple[int, dict[str, Any]]]
             ) -> list[str]:
    """A line per field of the records that nothing reads or writes, once per field:
    a judge's output given under a name of its own would otherwise vanish unsaid."""
    found = unknown_fields(records, list(plan.mapping["judges"]),
                           known=(plan.mapping["task_field"], plan.mapping["cell_field"]),
                           written=_written(study))
    return [f"{plan.jsonl.name}: line {u.line} ({u.record}): {u.field}: not a field "
            "sheetflow knows, so it was ignored (not imported)"
            + (f"; {counted(u.more, 'more line')} {'holds' if u.more == 1 else 'hold'} it"
               if u.more else "") for u in found]


def _word_counts(study: Study, plan: _Plan, records: list[tuple[int, dict[str, Any]]]
                 ) -> list[str]:
    """Each judge text outside its dimension's ``min_words``/``max_words``, named.

    The protocol asks the judges for 1-2 sentences and the spec states the range, but a
    word range is guidance, not a rule (collect warns and uses the answer): the text is
    imported as given and said here, where the judge and record are still known.
    """
    ranged = [d for d in study.rubric.dimensions
              if d.kind == "text" and (d.min_words is not None or d.max_words is not None)]
    lines = []
    for number, record in records:
        where = (f"{plan.jsonl.name}: line {number} ({record.get(plan.mapping['task_field'])}"
                 f"/{record.get(plan.mapping['cell_field'])})")
        for key in plan.mapping["judges"]:
            judged = record.get(key)
            for dim in ranged if isinstance(judged, dict) else ():
                text = judged.get(dim.id)
                outside = check_word_count(text, dim.min_words, dim.max_words) \
                    if isinstance(text, str) else None
                if outside:
                    lines.append(f"{where}: {key}.{dim.id}: {counted(outside[0], 'word')}, "
                                 f"where the rubric asks {outside[1]}; imported as given "
                                 "(the range is guidance: collect warns too)")
    return lines


_NOT_RETURNS = (L.PACKS_DIR, SEALED_DIR, L.OUT_DIR)


def _refuse_study_output(out_dir: Path, root: Path) -> None:
    """Refuse a returns folder that is, or is inside, the study's ``packs/``,
    ``sealed/`` or ``out/``: a filled copy saved there would replace the blank pack it
    was made from (with ``--force``), sit beside the key, or be lost among outputs."""
    name = L.study_folder_holding(out_dir, root, _NOT_RETURNS)
    if name is not None:
        raise UsageError(f"--returns {out_dir}: is (inside) the study's {name}/ folder; "
                         f"leave --returns off to save into {L.RETURNS_DIR}/, or give a "
                         f"folder outside {', '.join(f'{n}/' for n in _NOT_RETURNS)}")


def _responses(study: Study, mapping: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(task, cell) -> the item's response text."""
    cell_of = {arm: cell for cell, arm in mapping["arms"].items()}
    arm_col, resp_col = study.design.arm_column or "", study.design.response_column or ""
    return {(it.fields.get(mapping["task_column"], ""),
             cell_of.get(it.fields.get(arm_col, ""), "")): it.fields.get(resp_col, "")
            for it in study.items}


def _thresholds(study: Study) -> Thresholds:
    targets = study.plan.targets
    return Thresholds(float(targets.get("strict_pass", 3.5)),
                      float(targets.get("critical_below", 2.0)))


def _stage_summary(study: Study, plan: _Plan, records: list[dict[str, Any]],
                   result: JudgeImport, outputs: OutputSet) -> None:
    """Stage ``out/pilot-summary.json``, whole; or say why not and have the set remove
    the one written before (it would stand beside workbooks it was not made from)."""
    path = study.root / PILOT_SUMMARY
    if result.missing:
        result.summary_note = (f"{PILOT_SUMMARY} not written: the trio is locked and "
                               f"{counted(len(result.missing), 'judge output')} "
                               f"{'is' if len(result.missing) == 1 else 'are'} missing")
    elif not plan.window:
        result.summary_note = (
            f"{PILOT_SUMMARY} not written: the records carry no times; give the run's "
            "UTC execution window (ISO times) by running again: "
            f"{plan.command} --execution-window 'START to END' --force")
    if result.summary_note:
        outputs.supersede([path])
        return
    params = study.plan.params
    summary = pilot_summary(
        records, list(plan.mapping["judges"]), list(params.get("hypotheses", [])),
        plan.mapping["arms"], pilot_id=str(params.get("pilot_id", study.id)),
        window=plan.window or "", min_tasks=int(params.get("pilot_pass_min_tasks", 2)),
        thresholds=_thresholds(study),
        tolerance=float(params.get("direction_tolerance", DIRECTION_TOLERANCE)))
    outputs.write(path, (json.dumps(summary, indent=2, allow_nan=False) + "\n").encode("utf-8"))
    result.summary_path = path


def check_window(window: str) -> str:
    """``"<ISO start> to <ISO end>"`` with start <= end, as given; else a UsageError."""
    parts = [p.strip() for p in window.split(" to ")]
    try:
        start, end = (dt.datetime.fromisoformat(p.replace("Z", "+00:00")) for p in parts)
        ordered = start <= end
    except (ValueError, TypeError):
        ordered = None
    if len(parts) != 2 or ordered is None:
        raise UsageError(f"execution window {window!r}: give it as '<ISO start> to <ISO end>', "
                         "e.g. '2026-04-26T09:00:00Z to 2026-04-26T11:30:00Z'")
    if not ordered:
        raise UsageError(f"execution window {window!r}: the end is before the start")
    return f"{parts[0]} to {parts[1]}"


def _mapping(study: Study) -> dict[str, Any]:
    raw = study.plan.params.get("jsonl")
    if not isinstance(raw, dict) or not raw.get("judges") or not raw.get("arms"):
        raise UsageError(
            f"{study.root / 'study.toml'}: [analysis.params.jsonl] with 'judges' (JSON key "
            "-> rater id) and 'arms' (cell -> arm id) is needed to import judge outputs")
    rater_ids = {r.id for r in study.raters}
    for key, rater_id in raw["judges"].items():
        if rater_id not in rater_ids:
            raise UsageError(f"{study.root / 'study.toml'}: [analysis.params.jsonl] judges: "
                             f"{key} -> {rater_id!r} is not a rater in {study.raters_file}")
    return {"task_field": "task_id", "cell_field": "cell_id", "task_column": "task_id",
            **raw}


def _check_jsonl_path(path: Path) -> None:
    if not path.is_file():
        raise UsageError(f"{path}: no such file" if not path.exists() else
                         f"{path}: not a file; give the judges' JSONL file")


def _read_jsonl(path: Path) -> list[tuple[int, dict[str, Any]]]:
    try:
        text = path.read_text(encoding="utf-8-sig")  # a BOM (Windows editors) is not data
    except UnicodeDecodeError:
        raise JudgeImportError(f"{path.name}: is not UTF-8; save it as UTF-8") from None
    except OSError as exc:
        raise JudgeImportError(f"{path}: cannot be read ({exc.strerror})") from None
    records = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line, object_pairs_hook=_unique_keys)
        except _DuplicateKey as exc:
            raise JudgeImportError(
                f"{path.name}: line {number}: {exc.key!r} appears twice in one object; "
                "JSON keeps only the last, so keep the one the judge meant") from None
        except json.JSONDecodeError as exc:
            raise JudgeImportError(
                f"{path.name}: line {number}: not valid JSON ({exc.msg}); each line must be "
                "one JSON object") from None
        except RecursionError:
            raise JudgeImportError(
                f"{path.name}: line {number}: nested too deeply to be a judge record; each "
                "line must be one flat JSON object") from None
        if not isinstance(record, dict):
            raise JudgeImportError(f"{path.name}: line {number}: is not a JSON object")
        records.append((number, record))
    if not records:
        raise JudgeImportError(f"{path.name}: holds no records")
    return records


class _DuplicateKey(ValueError):
    """A JSON object of a record names ``key`` twice."""

    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a key given twice: ``json`` would keep the last
    silently, and a score or rationale given twice is two answers for one cell."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def _item_lookup(study: Study, mapping: dict[str, Any]) -> dict[tuple[str, str], str]:
    """(task, arm id) -> item id."""
    arm_column = study.design.arm_column or ""
    task_column = mapping["task_column"]
    lookup = {}
    for item in study.items:
        if task_column not in item.fields:
            raise UsageError(f"{study.items_file}: has no column {task_column!r} "
                             "([analysis.params.jsonl] task_column)")
        lookup[(item.fields[task_column], item.fields.get(arm_column, ""))] = item.id
    return lookup


def _answers_by_rater(records: list[tuple[int, dict[str, Any]]], mapping: dict[str, Any],
                      items: dict[tuple[str, str], str], name: str) -> dict[str, Any]:
    """rater id -> item id -> the judge's object; ``__missing__`` lists absent judges,
    ``__missing_at__`` the same with file, line and record."""
    out: dict[str, Any] = {rater: {} for rater in mapping["judges"].values()}
    missing, missing_at = [], []
    for number, record in records:
        item_id = _item_of(record, mapping, items, f"{name}: line {number}")
        where = (f"{name}: line {number} ({record.get(mapping['task_field'])}"
                 f"/{record.get(mapping['cell_field'])})")
        for key, rater_id in mapping["judges"].items():
            judged = record.get(key)
            if not isinstance(judged, dict):  # one present but not an object is refused
                missing.append(f"{key}: {item_id}")
                missing_at.append(f"{where}: {key}: item {item_id}")
                continue
            if item_id in out[rater_id]:
                raise JudgeImportError(f"{name}: line {number}: a second record for item "
                                       f"{item_id!r}; each response is judged once")
            out[rater_id][item_id] = judged
    out["__missing__"] = missing
    out["__missing_at__"] = missing_at
    return out


def _item_of(record: dict[str, Any], mapping: dict[str, Any],
             items: dict[tuple[str, str], str], where: str) -> str:
    task = record.get(mapping["task_field"])
    cell = record.get(mapping["cell_field"])
    if task is None or cell is None:
        raise JudgeImportError(f"{where}: needs '{mapping['task_field']}' and "
                               f"'{mapping['cell_field']}'")
    arm = mapping["arms"].get(str(cell))
    if arm is None:
        raise JudgeImportError(f"{where}: {mapping['cell_field']} {cell!r} is not in "
                               f"[analysis.params.jsonl] arms {sorted(mapping['arms'])}")
    item_id = items.get((str(task), arm))
    if item_id is None:
        raise JudgeImportError(f"{where}: no item has task {task!r} and arm of cell {cell!r}")
    return item_id


def _pack_of(manifest: Manifest, rater_id: str, root: Path) -> dict[str, Any]:
    for head in manifest.heads:
        if head.rater_id == rater_id and head.sitting == 1:
            return manifest.pack(head)
    raise UsageError(f"no generated pack for rater {rater_id!r}; run "
                     f"'{command_line('generate', root)}' after adding the judges to the "
                     "raters file")


def _fill(source: Path, target: Path, pack: dict[str, Any],
          by_item: dict[str, dict[str, Any]]) -> int:
    """Write the judge's values into a copy of ``source`` saved as ``target`` (a staged
    path: its folder exists); return the cells written."""
    wb = openpyxl.load_workbook(source)
    written = 0
    for cell in L.iter_answer_cells(pack):
        judged = by_item.get(cell.get("item_id") or "")
        if not judged or cell["part"] != "value" or cell["dimension"] not in judged:
            continue
        value = judged[cell["dimension"]]
        if value is None:
            continue
        ws = wb[cell["sheet"]]
        ws[cell["cell"]] = value
        if isinstance(value, str):
            ws[cell["cell"]].data_type = "s"  # a judge's text is never a formula
        written += 1
    wb.save(target)
    return written
