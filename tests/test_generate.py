"""generate: packs for every template, blinding, randomisation, reproducibility, seal.

The draws tested on studies of their own (sides, orders, seed, secret, the second
raters' subset) and the same bytes again from the same spec and secret:
``test_generate_draws.py``."""

from __future__ import annotations

import csv
import email
import hashlib
import json
import re
import shutil
import zipfile
from collections import Counter
from email import policy
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from generate_helpers import SECRET, TEMPLATES, make_study, manifest_of
from roundtrip_helpers import fail_at_pack

from sheetflow.cli import cli
from sheetflow.errors import UsageError
from sheetflow.packs.assign import assign
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.guides import flags_needing_notes
from sheetflow.packs.manifest import open_manifest
from sheetflow.packs.rules import blank_test, filled_test
from sheetflow.packs.seal import verify_seal
from sheetflow.spec.rubric import answer_required
from sheetflow.spec.study import judge_rater_ids, load_study
from sheetflow.workbook import layout as L


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Every template generated once (3 raters each, 2 in protocol 002), shared by the
    read-only tests."""
    tmp = tmp_path_factory.mktemp("templates")
    out = {}
    for template in TEMPLATES:
        folder = make_study(tmp, template)
        out[template] = (folder, generate_packs(folder, emails=True))
    return out


def _expected_validation(ws, cell: str):
    for dv in ws.data_validations.dataValidation:
        if cell in dv.sqref:
            return dv
    return None


def _merged_answer_cells(ws, answer_cells: set[str]) -> set[str]:
    cells = set()
    for rng in ws.merged_cells.ranges:
        if rng.start_cell.coordinate in answer_cells:
            cells.update(c.coordinate for row in ws[rng.coord] for c in row)
    return cells


@pytest.mark.parametrize("template", TEMPLATES)
def test_pack_protection_validations_and_identity(generated, template):
    folder, result = generated[template]
    manifest = manifest_of(folder)
    assert manifest["spec_hash"] == result.spec_hash
    # anchored-plan's second rater gets a pack only at data lock (sheetflow lock)
    assert len(manifest["packs"]) == len(result.packs) >= (1 if template == "anchored-plan" else 3)
    for pack in manifest["packs"]:
        wb = openpyxl.load_workbook(folder / "packs" / pack["file"])
        ws = wb[L.SCORING_SHEET]
        assert ws.protection.sheet and wb[L.INSTRUCTIONS_SHEET].protection.sheet
        answers = list(L.iter_answer_cells(pack))
        assert answers
        cells = {a["cell"] for a in answers}
        assert len(cells) == len(answers), "two answers share a cell"
        for a in answers:
            cell = ws[a["cell"]]
            assert cell.protection.locked is False, a
            assert cell.fill.fgColor.rgb.endswith("FFF2CC"), a
            dv = _expected_validation(ws, a["cell"])
            assert dv is not None, a
            _check_rule(dv, a["validation"])
            if a["validation"]["type"] != "any":
                assert dv.errorStyle in (None, "stop") and dv.showErrorMessage
            assert dv.prompt and len(dv.prompt) <= 255
        unlocked_ok = cells | _merged_answer_cells(ws, cells)
        for row in ws.iter_rows():
            for cell in row:
                if cell.coordinate in unlocked_ok or (cell.value is None and not cell.has_style):
                    continue
                assert cell.protection.locked, f"{pack['file']} {cell.coordinate} unlocked"
        _check_identity(wb, pack)
        _check_locked_text(ws, pack)


def _check_rule(dv, expected: dict) -> None:
    kind = expected["type"]
    if kind == "list":
        source = dv.formula1
        if source.startswith('"'):
            assert source.strip('"').split(",") == expected["choices"]
        else:
            assert L.LISTS_SHEET in source
    elif kind == "whole":
        assert dv.type == "whole"
        assert int(dv.formula1) == expected["min"]
        if expected["max"] is None:
            assert dv.operator == "greaterThanOrEqual"
        else:
            assert int(dv.formula2) == expected["max"]
    elif kind == "decimal":
        assert dv.type == "decimal"
        assert float(dv.formula1) == expected["min"] and float(dv.formula2) == expected["max"]
    elif kind == "datetime":
        assert dv.type == "date" and float(dv.formula1) > 36000  # a date, not a time of day
    else:
        assert kind == "any" and dv.type in (None, "none")


def _check_identity(wb, pack: dict) -> None:
    ident = pack["identity"]
    props = {p.name: p.value for p in wb.custom_doc_props.props}
    hidden = wb[L.IDENTITY_SHEET]
    assert hidden.sheet_state == "veryHidden"
    sheet_values = {hidden.cell(i + 1, 1).value: hidden.cell(i + 1, 2).value
                    for i in range(len(L.IDENTITY_KEYS))}
    for key in L.IDENTITY_KEYS:
        assert props[L.identity_property(key)] == ident[key]
        assert wb.defined_names[L.identity_name(key)].attr_text == f'"{ident[key]}"'
        assert sheet_values[key] == ident[key]
    row_ids = [hidden.cell(r, 1).value for r in range(L.IDENTITY_ROW_TABLE_FIRST,
                                                      hidden.max_row + 1)]
    assert row_ids == [row["row_id"] for card in pack["cards"] for row in card["rows"]]


def _check_locked_text(ws, pack: dict) -> None:
    for card in pack["cards"]:
        fields = list(card["locked"])
        for row in card["rows"]:
            texts = ["".join(ws[c].value or "" for c in f["cells"])
                     for f in fields + row["locked"]]
            hashes = [L.text_sha256(t) for t in texts]
            assert hashes == [f["sha256"] for f in fields + row["locked"]]
            assert L.row_digest(hashes) == row["locked_sha256"]


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_arm_in_any_pack_or_manifest(generated, template):
    """Every zip part (workbook XML, shared strings, docProps) is searched, no exceptions."""
    folder, result = generated[template]
    study = load_study(folder)
    arms = [a.id for a in study.design.arms]
    manifest_text = (folder / "packs" / L.MANIFEST_FILE).read_text(encoding="utf-8")
    assert not [a for a in arms if a in manifest_text]
    # the seed as a number of its own (a cell such as "G4004" is not the seed 4004)
    assert not re.search(rf"(?<![A-Z0-9]){study.design.seed}(?![0-9])", manifest_text)
    for info in result.packs:
        with zipfile.ZipFile(info.path) as zf:
            for part in zf.namelist():
                text = zf.read(part).decode("utf-8")
                hits = [a for a in arms if a in text]
                assert not hits, (info.path.name, part, hits)
    # paired-rubric's internal_scores.csv is the template's example: named as such
    assert all("email" in w or "template's example internal scores" in w
               for w in result.warnings), result.warnings


def _unxml(fragment: str) -> str:
    import html
    return html.unescape(re.sub(r"<[^>]+>", "", fragment))


@pytest.mark.parametrize("template", ["paired-rubric", "answer-review"])
def test_shuffled_orders_differ_between_raters(generated, template):
    folder, _ = generated[template]
    study = load_study(folder)
    orders = [tuple(s.item.id for s in assign(study, r, secret=SECRET).slots) for r in study.raters]
    assert len(set(orders)) == len(orders)
    assert all(sorted(o) == sorted(it.id for it in study.items) for o in orders)


def test_a_pack_names_sheetflow_as_the_application_that_wrote_it(tmp_path):
    """docProps/app.xml said "Microsoft Excel" 12.0 (xlsxwriter's default): a claim
    about a program that never touched the file."""
    folder = make_study(tmp_path / "s", "paired-rubric")
    generate_packs(folder)
    pack = next((folder / "packs").glob("*.xlsx"))
    with zipfile.ZipFile(pack) as z:
        app = z.read("docProps/app.xml").decode("utf-8")
    assert "<Application>sheetflow</Application>" in app
    assert "Excel" not in app and "AppVersion" not in app
    assert "<vt:lpstr>Scoring</vt:lpstr>" in app  # the visible sheets, as before


def test_key_maps_labels_to_arms_for_every_case(generated):
    folder, result = generated["paired-rubric"]
    key = json.loads(result.key_path.read_text(encoding="utf-8"))
    manifest = manifest_of(folder)
    arms = {"iter1_baseline", "iter2_improved"}
    for kp, mp in zip(key["packs"], manifest["packs"], strict=True):
        assert kp["file"] == mp["file"]
        assert kp["order"] == [c["item_id"] for c in mp["cards"]]
        for case in kp["cases"]:
            assert set(case["sides"]) == {"A", "B"} and set(case["sides"].values()) == arms
        assert kp["seeds"]["sides"].startswith("20260915:sides:")


def test_repeats_sitting_two(generated):
    folder, _ = generated["keep-known"]
    study = load_study(folder)
    manifest = manifest_of(folder)
    for rater in study.raters:
        packs = [p for p in manifest["packs"] if p["rater_id"] == rater.id]
        assert [p["sitting"] for p in packs] == [1, 2]
        first, second = ([c["item_id"] for c in p["cards"]] for p in packs)
        assert len(second) == study.design.repeats.count and set(second) <= set(first)
        assert second != [i for i in first if i in set(second)], "same order as sitting 1"
        assert packs[1]["file"].endswith("-sitting2.xlsx")
        assert packs[1]["identity"]["sitting"] == "2"
        assert packs[1]["study_answers"] == {}
        wb = openpyxl.load_workbook(folder / "packs" / packs[1]["file"])
        ws = wb[L.SCORING_SHEET]
        assert all(ws[a["cell"]].value is None for a in L.iter_answer_cells(packs[1]))


def test_batches_have_start_and_end_cells(generated):
    folder, _ = generated["keep-known"]
    pack = manifest_of(folder)["packs"][0]
    size = load_study(folder).design.batch_size
    n = len(pack["cards"])
    assert len(pack["batches"]) == -(-n // size)
    for b in pack["batches"]:
        assert b["start"]["cell"] != b["end"]["cell"]
        assert all(c["batch"] == b["batch"] for c in pack["cards"] if c["item_id"] in
                   b["row_ids"])


def test_seal_verifies_and_detects_one_byte_change(generated, tmp_path):
    folder, _ = generated["judge-likert"]
    copy = tmp_path / "study"
    shutil.copytree(folder, copy)
    assert verify_seal(copy).ok
    runner = CliRunner()
    ok = runner.invoke(cli, ["verify", str(copy)])
    assert ok.exit_code == 0 and "seal ok" in ok.output
    key = copy / "sealed" / "key.json"
    data = bytearray(key.read_bytes())
    data[10] ^= 0x01
    key.write_bytes(bytes(data))
    check = verify_seal(copy)
    assert not check.ok and "key.json" in check.problems[0]
    bad = runner.invoke(cli, ["verify", str(copy)])
    assert bad.exit_code == 3
    errors = [line for line in bad.output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "changed after sealing" in errors[0]


def test_seal_reports_a_changed_spec(generated, tmp_path):
    folder, _ = generated["answer-review"]
    copy = tmp_path / "study"
    shutil.copytree(folder, copy)
    toml = (copy / "study.toml").read_text(encoding="utf-8")
    (copy / "study.toml").write_text(toml.replace("seed = 3003", "seed = 3005"),
                                     encoding="utf-8")
    check = verify_seal(copy)
    assert not check.ok and check.problems[0].startswith(
        f"{copy}/study.toml: the study spec (this file, its items or raters) changed after "
        "generate: frozen spec")
    # what to do, as check says it (verify and analyze said only the two hashes)
    assert check.problems[0].endswith("; undo the edit so the hash matches again, or, if no "
                                      f"rater has scored yet, run 'sheetflow generate {copy} "
                                      "--force' and send the new packs")
    with pytest.raises(Exception, match="--force"):
        generate_packs(copy)


def test_key_sha256_file_format(generated):
    folder, result = generated["paired-rubric"]
    line = (folder / "sealed" / "key.sha256").read_text(encoding="utf-8")
    assert line == f"{hashlib.sha256(result.key_path.read_bytes()).hexdigest()}  key.json\n"
    lock = json.loads((folder / "sealed" / "plan.lock.json").read_text(encoding="utf-8"))
    assert lock["spec_hash"] == result.spec_hash and lock["key_sha256"] == result.key_sha256
    assert lock["sheetflow_version"]


def test_cli_generate_prints_hashes_and_writes_drafts(tmp_path):
    folder = make_study(tmp_path, "paired-rubric")
    out = CliRunner().invoke(cli, ["generate", str(folder), "--eml"])
    assert out.exit_code == 0, out.output
    study = load_study(folder)
    assert study.hash in out.output
    key_sha = (folder / "sealed" / "key.sha256").read_text(encoding="utf-8").split()[0]
    assert key_sha in out.output
    drafts = sorted((folder / "packs" / "eml").glob("*.eml"))
    assert len(drafts) == 3
    msg = email.message_from_bytes(drafts[0].read_bytes(), policy=policy.default)
    assert msg["X-Unsent"] == "1" and msg["To"].addresses[0].addr_spec.endswith("example.org")
    assert msg["Subject"] == study.email_subject
    body = msg.get_body(("plain",)).get_content()
    assert "{name}" not in body and "Dear Rater" in body
    attachment = next(msg.iter_attachments())
    assert attachment.get_content_type() == (
        "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet")
    assert attachment.get_filename() == drafts[0].stem + ".xlsx"
    assert attachment.get_content() == (folder / "packs" / attachment.get_filename()).read_bytes()


def test_mailing_list(generated):
    folder, result = generated["paired-rubric"]
    rows = list(csv.DictReader((folder / "packs" / "mailing-list.csv").open(encoding="utf-8")))
    assert [r["file"] for r in rows] == [p.path.name for p in result.packs]
    assert Counter(r["rater_id"] for r in rows) == Counter({"R-1": 1, "R-2": 1, "R-3": 1})
    assert all(r["email"].endswith("@example.org") for r in rows)


def _expand(ref: str) -> list[str]:
    from openpyxl.utils import range_boundaries
    from openpyxl.utils.cell import get_column_letter
    c1, r1, c2, r2 = range_boundaries(ref)
    return [f"{get_column_letter(c)}{r}" for r in range(r1, r2 + 1) for c in range(c1, c2 + 1)]


def _required_cells(study, pack: dict) -> list[str]:
    dims = {d.id: d for d in study.rubric.dimensions}
    return [a["cell"] for a in L.iter_answer_cells(pack)
            if answer_required(dims.get(a["dimension"]), a["part"])]


@pytest.mark.parametrize("template", TEMPLATES)
def test_progress_counts_every_required_answer_once(generated, template):
    """The done counts cover exactly the required answers; the progress total is their number."""
    folder, _ = generated[template]
    study = load_study(folder)
    for pack in manifest_of(folder)["packs"]:
        required = _required_cells(study, pack)
        assert required and len(set(required)) == len(required)
        ws = openpyxl.load_workbook(folder / "packs" / pack["file"])[L.SCORING_SHEET]
        done = L.done_column(tuple(manifest_of(folder)["labels"]))
        progress = ws[pack["progress"]["cell"]].value
        bad = L.to_correct_column(tuple(manifest_of(folder)["labels"]))
        # the lines hold filled - required: the filled count is the total plus their sum
        where = rf'&IF\(\${done}\$3="",""," \(first blank: "&\${done}\$3&"\)"\)'
        filled = rf'\((\d+)\+SUM\({done}5:{done}(\d+)\)\)&" of \1 required answers filled"'
        filled += where
        finished = rf'\(\1\+SUM\({done}5:{done}\2\)\)>=\1'
        if flags_needing_notes(study.rubric.dimensions):  # a marked flag's note to write
            lacking = L.notes_column(tuple(manifest_of(folder)["labels"]))
            notes = rf'SUM\({lacking}5:{lacking}\2\)'
            filled += (rf'&IF\({notes}>0,"; "&{notes}&IF\({notes}=1," note"," notes"\)&" '
                       rf'to write \(orange\)",""\)')
            finished = rf'AND\({finished},{notes}=0\)'
        match = re.match(rf'=IF\(SUM\({bad}5:{bad}\d+\)>0,SUM\({bad}5:{bad}\d+\)&" to '
                         rf'correct \(red cells, first: "&\${bad}\$3&"\); "&{filled},'
                         rf'IF\({finished},"All \1 answers done",{filled}\)\)', progress)
        assert match and int(match.group(1)) == len(required), progress
        counted, rows = [], []
        for row in ws.iter_rows(min_col=ord(done) - 64, max_col=ord(done) - 64):
            for cell in row:
                if cell.value is None:
                    continue
                # each answer cell of the line as IFERROR(not blank,1): a cell of spaces,
                # tabs or line breaks (blank to collect) is not counted, an error value is
                # (it is red)
                if cell.row < 5:  # rows 2-3: where the first blank line is
                    continue
                # less the line's required cells: a line with a blank one is below 0
                less, terms = re.fullmatch(r"=-(\d+)\+(.+)", cell.value).groups()
                terms = terms.split("+")
                assert int(less) == len(terms)
                assert len(cell.value) <= 8192
                for term in terms:
                    counted.append(re.search(r"\(([A-Z]+[0-9]+),", term).group(1))
                    assert term == f"IFERROR({filled_test(counted[-1])},1)", term
                    assert int(counted[-1][1:]) == cell.row  # on the answer's own line
                rows.append(cell.row)
        assert sorted(counted) == sorted(required)
        assert max(rows) <= int(match.group(2))
        assert len(rows) == len({int(c[1:]) for c in required}), "one formula per line"
        highlighted = []
        for sqref, rule in _blank_rules(folder / "packs" / pack["file"]):
            cells = [c for ref in sqref.split() for c in _expand(ref)]
            top = min(int(c[1:]) for c in cells), min(c[0] for c in cells)
            # the rule's relative formula must name the top-left cell of all its ranges,
            # and highlight it only in a card reached (the last row reached, in row 2)
            reached = f"${L.reached_column(tuple(manifest_of(folder)['labels']))}$2"
            cell = f"{top[1]}{top[0]}"
            assert rule == f"AND({blank_test(cell)},ROW({cell})<={reached})", (sqref[:40], rule)
            highlighted += cells
        assert sorted(highlighted) == sorted(required)


def _blank_rules(path: Path) -> list[tuple[str, str]]:
    """(sqref, formula) of each blank highlight on the Scoring sheet, as stored."""
    with zipfile.ZipFile(path) as zf:
        xml = zf.read("xl/worksheets/sheet2.xml").decode("utf-8")
    rules = re.findall(r'<conditionalFormatting sqref="([^"]+)"><cfRule type="(\w+)"[^>]*>'
                       r"<formula>([^<]+)</formula>", xml)
    assert rules
    return [(sqref, formula.replace("&lt;", "<")) for sqref, kind, formula in rules
            if kind == "expression" and "ROW(" in formula]


def test_manifest_is_the_canonical_dump_of_the_whole(generated):
    """Written pack by pack, the manifest is still the one compact document the seal hashes."""
    from sheetflow.packs.seal import dump_json
    folder, result = generated["keep-known"]
    data = result.manifest_path.read_bytes()
    assert data == dump_json(json.loads(data), compact=True)
    lock = json.loads((folder / "sealed" / "plan.lock.json").read_text(encoding="utf-8"))
    assert hashlib.sha256(data).hexdigest() in json.dumps(lock)
    assert not list((folder / "packs").glob("*.partial"))


@pytest.mark.parametrize("template", TEMPLATES)
def test_each_pack_entry_records_the_sha256_of_its_workbook(generated, template):
    """generate recorded no hash of a workbook's bytes: a pack changed after it could
    not be told from the one written. The manifest (sealed) now records each."""
    folder, result = generated[template]
    manifest = open_manifest(folder)
    manifest.close()
    written = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
               for p in (folder / "packs").glob("*.xlsx")}
    assert written and {h.file: h.sha256 for h in manifest.heads} == written
    assert {p.path.name: p.sha256 for p in result.packs} == written
    assert {p["file"]: p["sha256"] for p in manifest_of(folder)["packs"]} == written


def test_a_failed_pack_leaves_no_manifest(tmp_path, monkeypatch):
    from sheetflow.errors import SheetflowError
    folder = make_study(tmp_path, "paired-rubric")
    fail_at_pack(monkeypatch, 2, "could not write item 'x'")
    with pytest.raises(SheetflowError):
        generate_packs(folder)
    assert not (folder / "packs" / L.MANIFEST_FILE).exists()
    assert not list((folder / "packs").glob("*.partial"))
    assert not (folder / "sealed").exists()


def test_sitting_two_is_drafted_and_listed_apart(generated):
    """Protocol 001: sitting 2 at least 24 h later -- its drafts are not among sitting 1's."""
    folder, result = generated["keep-known"]
    first = sorted(p.name for p in (folder / "packs" / "eml").glob("*.eml"))
    second = sorted((folder / "packs" / "eml" / "sitting-2").glob("*.eml"))
    assert first and second and not any("sitting2" in name for name in first)
    assert {p.stem for p in second} == {p.path.stem for p in result.packs if p.sitting == 2}
    msg = email.message_from_bytes(second[0].read_bytes(), policy=policy.default)
    assert msg["Subject"].endswith("- second sitting")
    body = msg.get_body(("plain",)).get_content().replace("\r\n", "\n")
    greeting, note = body.split("\n\n")[:2]  # the greeting first, then the note
    assert greeting.startswith("Hello ") and note.startswith(
        "This is your SECOND-SITTING workbook. Open it no earlier than 24 hours after")
    rows = list(csv.DictReader((folder / "packs" / "mailing-list.csv").open(encoding="utf-8")))
    assert {r["sitting"]: r["send"] for r in rows} == {
        "1": "now", "2": "at least 24 h after the rater's sitting 1 is returned"}
    wb = openpyxl.load_workbook(second[0].parent.parent.parent / (second[0].stem + ".xlsx"))
    texts = [c.value for row in wb[L.INSTRUCTIONS_SHEET].iter_rows() for c in row
             if isinstance(c.value, str)]
    assert any("SECOND-SITTING" in t for t in texts)


def test_generate_out_elsewhere_says_what_status_needs(tmp_path):
    """With --out elsewhere the line said 'next: ... sheetflow status STUDY', which then
    failed (no manifest in the study folder): it now says to move packs/ and sealed/
    in first, and doing so makes status work."""
    folder = make_study(tmp_path, "paired-rubric")
    elsewhere = tmp_path / "elsewhere"
    out = CliRunner().invoke(cli, ["generate", str(folder), "--out", str(elsewhere)])
    assert out.exit_code == 0, out.output
    assert out.output.strip().splitlines()[-1] == (
        f"3 packs written; next: send them, then move {elsewhere}/packs and "
        f"{elsewhere}/sealed into {folder}, then run sheetflow status {folder}")
    for part in ("packs", "sealed"):
        shutil.move(str(elsewhere / part), str(folder / part))
    assert CliRunner().invoke(cli, ["status", str(folder)]).exit_code == 1  # none back yet
    assert "no manifest" not in CliRunner().invoke(cli, ["status", str(folder)]).output


def _tree(folder: Path) -> list[str]:
    """Every path under ``folder``, relative and sorted."""
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


@pytest.mark.parametrize("inside", ["returns", "packs", "sealed", "out", "returns/later"])
def test_generate_out_refuses_a_folder_the_study_reads(tmp_path, monkeypatch, inside):
    """'generate --out returns' run in the study folder wrote returns/packs/ (blank packs
    where collect looks for returns) and returns/sealed/key.json (the key among the
    raters' files). --out inside the study's returns/, packs/, sealed/ or out/ is now a
    usage error naming the folder and what to give instead, and nothing is written."""
    folder = make_study(tmp_path, "paired-rubric")
    if inside != "out":  # a study already generated once, and one never generated
        assert CliRunner().invoke(cli, ["generate", str(folder)]).exit_code == 0
    before = _tree(folder)
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(cli, ["generate", "--out", inside])
    assert result.exit_code == 2, result.output
    top = inside.split("/")[0]
    assert result.output.splitlines() == [
        f"error: --out {inside}: is {'inside ' if '/' in inside else ''}the study's {top}/ "
        "folder, which sheetflow reads; leave --out off to write packs/ and sealed/ in the "
        "study folder, or give a folder outside its returns/, packs/, sealed/ and out/"]
    assert _tree(folder) == before
    with pytest.raises(UsageError, match=f"--out {folder / inside}: is "):
        generate_packs(folder, folder / inside)
    assert _tree(folder) == before


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_pack_names_only_its_own_sitting_and_role(generated, template):
    """Each title a rater reads (the pack's sheets and properties, the invitation's
    subject) names the second sitting on a sitting-2 pack alone, and a second rater
    only on a pack of a rater whose role is second."""
    folder, _ = generated[template]
    study = load_study(folder)
    roles = {r.id: r.role for r in study.raters}
    judges = judge_rater_ids(study)
    for pack in manifest_of(folder)["packs"]:
        wb = openpyxl.load_workbook(folder / "packs" / pack["file"])
        titles = [wb[name]["B1"].value for name in (L.INSTRUCTIONS_SHEET, L.SCORING_SHEET)]
        titles.append(wb.properties.title)
        eml = folder / "packs" / "eml" / ("sitting-2" if pack["sitting"] == 2 else "")
        if pack["rater_id"] not in judges:  # a judge's pack is never mailed: no draft
            msg = email.message_from_bytes(
                (eml / f"{Path(pack['file']).stem}.eml").read_bytes(), policy=policy.default)
            titles.append(msg["Subject"])
        for title in titles:
            said = str(title).lower()
            assert ("second sitting" in said) is (pack["sitting"] == 2), (pack["file"], title)
            assert "second rater" not in said or roles[pack["rater_id"]] == "second", \
                (pack["file"], title)
