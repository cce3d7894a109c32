"""A return whose identity claims a pack its rows do not prove counts for nobody, and
every statement about it says so.

A rater who took their own workbook, named another rater and pack in all three
identity stores and deleted every row id (the Scoring sheet's and the hidden row
table) made a file that claims the other pack without proving it. While the other
rater had not returned, that file stood for them: the pack was "returned" with 18
errors, a reply thanking them went to them, ``remind`` said every pack was back and
``analyze`` blamed their file. An identity naming a rater of this study with another
rater's pack was said to name a rater "not part of this study", and a sitting changed in
every store was used without a word.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from generate_helpers import manifest_of
from mail_helpers import mail_study, run, run_json
from roundtrip_helpers import claim_identity, fill_openpyxl, plan_answers

from sheetflow.collect.run import collect
from sheetflow.workbook import layout as L


@pytest.fixture
def study(tmp_path) -> tuple[Path, list[dict]]:
    root = mail_study(tmp_path / "s")
    (root / L.RETURNS_DIR).mkdir(exist_ok=True)
    return root, [p for p in manifest_of(root)["packs"] if p["sitting"] == 1]


def _edited(root: Path, pack: dict, dst: Path, strip: bool = False, **values: str) -> None:
    """``pack`` filled in, its identity set to ``values``, every row id deleted with
    ``strip``; saved as ``dst``."""
    fill_openpyxl(root / L.PACKS_DIR / pack["file"], dst, plan_answers(pack))
    wb = openpyxl.load_workbook(dst)
    claim_identity(wb, values)
    if strip:
        for row in wb[L.SCORING_SHEET].iter_rows(min_col=1, max_col=1):
            row[0].value = None
        ws = wb[L.IDENTITY_SHEET]
        for r in range(L.IDENTITY_ROW_TABLE_FIRST, ws.max_row + 1):
            for c in range(1, 5):
                ws.cell(r, c).value = None
    wb.save(dst)


def test_a_claim_no_row_proves_counts_for_nobody_while_its_rater_has_not_returned(study):
    root, packs = study
    mine, victim = packs[0], packs[1]
    returns = root / L.RETURNS_DIR
    fill_openpyxl(root / L.PACKS_DIR / mine["file"], returns / mine["file"],
                  plan_answers(mine))
    forged = f"scores-{victim['rater_id']}.xlsx"
    _edited(root, mine, returns / forged, strip=True, rater_id=victim["rater_id"],
            pack_id=victim["identity"]["pack_id"])
    screen = run("collect", str(root))
    assert screen.exit_code == 1, screen.output
    claim = f"says it is rater {victim['rater_id']}'s, but no row proves it: counted for nobody"
    assert f"{forged}: {claim}, " in screen.stdout
    result = collect(root)
    by_name = {f.file: f for f in result.report.files}
    assert by_name[mine["file"]].used and not by_name[forged].used
    assert by_name[forged].pack_id == "" and by_name[forged].rater == ""
    codes = {i.code for i in result.report.issues if i.file == forged}
    assert "claim-unproven" in codes and not codes & {"rows-unproven", "duplicate-rater"}
    # the pack stays not returned, never replied to; its rater is asked, not reminded
    rows = {r.rater_id: r for r in result.roster}
    assert rows[victim["rater_id"]].state == "missing"
    assert not any(victim["rater_id"] in p.name for p in result.feedback.written)
    (stranger,) = [r for r in result.roster if r.file == forged]
    assert stranger.todo.startswith(claim) and \
        f"ask rater {victim['rater_id']} whether they sent it" in stranger.todo
    status = run("status", str(root)).stdout.splitlines()
    assert any(ln.startswith(f"{forged}: {claim}: [claim-unproven]") for ln in status)
    assert status[-1].startswith(f"1 of {len(packs)} packs returned")


def test_a_pack_a_claim_no_row_proves_names_the_file_and_gets_no_reminder(study):
    """Its rater may have sent the file (their own, its row ids gone): every line about
    the pack asks them, as the file's own line does; none says it has not arrived."""
    root, packs = study
    victim, waiting = packs[0], packs[1]
    own = victim["file"]
    _edited(root, victim, root / L.RETURNS_DIR / own, strip=True)
    rater = victim["rater_id"]
    ask = (f"a file claims this pack but no row proves it: ask {rater} whether they "
           f"sent {own} (")
    screen = run("collect", str(root)).stdout.splitlines()
    (line,) = [ln for ln in screen if ln.startswith(f"not returned: {rater} ")]
    assert f"; {ask}" in line
    assert "1 of them claimed by a file no row proves: no reminder" in screen[-1]
    rows = {r.rater_id: r for r in collect(root, write=False).roster}
    assert rows[rater].todo.startswith(f"not returned yet: {ask}")
    assert rows[waiting["rater_id"]].todo.startswith("not returned yet: run ")
    status = run("status", str(root)).stdout.splitlines()
    (last,) = [ln for ln in status if ln.startswith("0 of ")]
    assert last.endswith("; 1 file claims a pack no row proves (ask the rater it names "
                         "whether they sent it)")
    assert "matching no pack" not in last
    _, doc = run_json("status", str(root))
    assert [u["ask"] for u in doc["unmatched"]] == [rater]
    reminded = run("remind", str(root))
    assert reminded.exit_code == 1, reminded.output
    assert f"no reminder {rater} (sitting 1): {ask}" in reminded.stdout
    drafts = root / "out" / "reminders"
    assert not (drafts / f"{rater}.eml").exists()
    assert (drafts / f"{waiting['rater_id']}.eml").is_file(), reminded.output
    sent = run("send", str(root), "reminders", "--dry-run")
    assert f"not sent {rater} (sitting 1): {ask}" in sent.stdout, sent.output


def test_a_broken_attachment_claiming_a_pack_keeps_its_own_error(study):
    """Only files whose rows were checked are claims nothing proves: the rows of one
    whose checks never ran say nothing (the rule stops at its own error)."""
    from types import SimpleNamespace

    from sheetflow.collect.rivals import _proven_only

    class Work:
        def __init__(self, checked: bool):
            self.name, self.rater, self.issues = "f.xlsx", "R1", []
            self.rows_proven, self.rows_checked = False, checked
            self.head = SimpleNamespace(pack_id="R1-s1")

    broken, checked = Work(False), Work(True)
    assert _proven_only([broken]) == [broken] and broken.issues == []
    assert _proven_only([checked]) == [] and checked.head is None
    assert [i.code for i in checked.issues] == ["claim-unproven"]


@pytest.mark.parametrize("change, cell, words", [
    ("rater", "B4", "names rater {other} but pack {pack}, which is rater {rater}'s"),
    ("pack", "B4", "names rater {rater} but pack {other_pack}, which is rater {other}'s"),
    ("sitting", "B5", "sitting '2', but pack {pack} is sitting 1"),
])
def test_an_identity_naming_a_pack_not_its_own_says_so(study, change, cell, words):
    root, packs = study
    mine, other = packs[0], packs[1]
    values = {"rater": {"rater_id": other["rater_id"]},
              "pack": {"pack_id": other["identity"]["pack_id"]},
              "sitting": {"sitting": "2"}}[change]
    _edited(root, mine, root / L.RETURNS_DIR / "scores.xlsx", **values)
    result = collect(root, write=False)
    (status,) = result.report.files
    assert not status.used and status.pack_id == ""
    (found,) = [i for i in result.report.issues if i.severity == "error"]
    assert found.code == "identity-mismatch" and (found.sheet, found.cell) == (
        L.IDENTITY_SHEET, cell)
    assert words.format(rater=mine["rater_id"], other=other["rater_id"],
                        pack=mine["identity"]["pack_id"],
                        other_pack=other["identity"]["pack_id"]) in found.message
    assert "not part of this study" not in found.message


def test_rows_of_another_rater_are_not_called_no_pack_of_this_study(study):
    root, packs = study
    mine, other = packs[0], packs[1]
    _edited(root, mine, root / L.RETURNS_DIR / "scores.xlsx", rater_id=other["rater_id"],
            pack_id=other["identity"]["pack_id"])
    lines = run("collect", str(root)).stdout.splitlines()
    (line,) = [ln for ln in lines if ln.startswith("scores.xlsx: ")]
    assert line.startswith(f"scores.xlsx: says it is rater {other['rater_id']}'s, but its "
                           "rows are another pack's: counted for nobody, 1 error")
