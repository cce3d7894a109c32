"""No part of any pack, and no text a rater is sent, names an item or an arm.

Item ids often follow the arms (numbered by system, prefixed by it), so an id a rater
can find (on a hidden sheet LibreOffice shows, in a defined name, in docProps) is as
good as the key. Every part of every pack of every template is unzipped and searched.
"""

from __future__ import annotations

import email
import email.policy
import html
import re
import zipfile
from pathlib import Path

import pytest
from roundtrip_helpers import fill_openpyxl, generate_every_template, plan_answers

from sheetflow.analysis import analyze
from sheetflow.collect import collect
from sheetflow.packs import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.report import write_analysis_outputs
from sheetflow.spec import init_study, list_templates, load_study
from sheetflow.workbook import layout as L

TEMPLATES = sorted(list_templates())


def _named(text: str, names: set[str]) -> set[str]:
    """The names that stand in ``text`` as whole tokens."""
    return {n for n in names if re.search(r"(?<![\w-])" + re.escape(n) + r"(?![\w-])", text)}


def _message(path: Path) -> email.message.EmailMessage:
    return email.message_from_bytes(path.read_bytes(), policy=email.policy.default)


def _parts(path: Path) -> dict[str, str]:
    with zipfile.ZipFile(path) as zf:
        return {name: html.unescape(zf.read(name).decode("utf-8", "replace"))
                for name in zf.namelist()}


@pytest.fixture(scope="module")
def generated(tmp_path_factory) -> dict[str, Path]:
    return generate_every_template(tmp_path_factory.mktemp("ids"), emails=True)


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_part_of_any_pack_names_an_item_or_an_arm(generated, template):
    root = generated[template]
    study = load_study(root)
    items, arms = {it.id for it in study.items}, {a.id for a in study.design.arms}
    assert not study.show_id
    packs = sorted((root / L.PACKS_DIR).glob("*.xlsx"))
    assert packs
    for pack in packs:
        parts = _parts(pack)
        assert {"xl/workbook.xml", "docProps/core.xml", "docProps/custom.xml"} <= set(parts)
        assert any(name.startswith("xl/worksheets/") for name in parts)
        for name, text in parts.items():
            assert not _named(text, items), (pack.name, name, sorted(_named(text, items))[:3])
            assert not _named(text, arms), (pack.name, name, _named(text, arms))
    for draft in sorted((root / L.PACKS_DIR / "eml").glob("*.eml")):  # invitations
        text = _message(draft).get_body(("plain",)).get_content()
        assert not _named(text, items | arms), draft.name


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_blinded_manifest_names_no_arm(generated, template):
    """The manifest maps each card to its item (collect places ratings by it), so it
    holds item ids; it must name no arm."""
    root = generated[template]
    arms = {a.id for a in load_study(root).design.arms}
    text = (root / L.PACKS_DIR / L.MANIFEST_FILE).read_text(encoding="utf-8")
    assert arms and not _named(text, arms), sorted(_named(text, arms))


@pytest.mark.parametrize("template", TEMPLATES)
def test_the_workbook_structure_is_locked(generated, template):
    for pack in sorted((generated[template] / L.PACKS_DIR).glob("*.xlsx")):
        workbook = _parts(pack)["xl/workbook.xml"]
        assert re.search(r'<workbookProtection workbookPassword="[0-9A-F]+" '
                         r'lockStructure="1"/>', workbook), pack.name
        assert workbook.index("<workbookPr") < workbook.index("<workbookProtection") < \
            workbook.index("<bookViews")  # where the schema wants it


def test_reply_drafts_and_feedback_name_cases_as_the_rater_saw_them(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    study = load_study(root)
    items = {it.id for it in study.items}
    packs = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)["packs"]
    for n, pack in enumerate(packs):
        answers = plan_answers(pack)
        if n == 0:  # the first rater leaves two answers out and mistypes one: a reply
            cells = [c for c, (value, _) in answers.items() if isinstance(value, int)]
            del answers[cells[0]], answers[cells[1]]
            answers[cells[2]] = (99, "99")
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      answers)
    result = collect(root)
    drafts = sorted((root / "out" / "feedback").glob("*.eml"))
    assert drafts, result.report.issues
    for draft in drafts:
        body = _message(draft).get_body(("plain",)).get_content()
        assert "case " in body.lower()
        assert not _named(body, items), (draft.name, _named(body, items))
        codes = {c["code"] for c in packs[0]["cards"]}
        assert any(code in body for code in codes)  # the display code the rater saw
    write_analysis_outputs(analyze(root, allow_partial=True), root / "out")
    books = sorted((root / "out").glob("feedback-*.xlsx"))
    assert books
    for book in books:
        for name, text in _parts(book).items():
            assert not _named(text, items), (book.name, name, sorted(_named(text, items))[:3])
