"""The compact manifest (format 2): every reader gets exactly the full form back, the
file is smaller than the packs, the seal still sees any change, and a format-1
manifest written by the previous version still reads."""

from __future__ import annotations

import csv
import hashlib
import json
import pickle
import re
import shutil
from pathlib import Path

import pytest
from roundtrip_helpers import fill_openpyxl, plan_answers

from sheetflow.collect.run import collect
from sheetflow.errors import SheetflowError
from sheetflow.packs import manifest_form
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import open_manifest, read_manifest
from sheetflow.packs.manifest_form import Compactor, Inflater
from sheetflow.packs.seal import dump_json, verify_seal
from sheetflow.spec.templates import init_study, list_templates
from sheetflow.workbook import layout as L

TEMPLATES = sorted(list_templates())


def _manifest_path(root: Path) -> Path:
    return root / L.PACKS_DIR / L.MANIFEST_FILE


def _full_form(root: Path, monkeypatch: pytest.MonkeyPatch) -> bytes:
    """The manifest as the previous version wrote it: generate with every card whole."""
    with monkeypatch.context() as m:
        m.setattr(manifest_form.Compactor, "card", lambda self, card: card)
        m.setattr(L, "MANIFEST_FORMAT", 1)
        generate_packs(root, force=True)
    return _manifest_path(root).read_bytes()


@pytest.fixture(scope="module")
def both_forms(tmp_path_factory):
    """Per template: (study root, compact manifest bytes, full-form manifest bytes)."""
    base = tmp_path_factory.mktemp("forms")
    out = {}
    with pytest.MonkeyPatch.context() as monkeypatch:
        for template in TEMPLATES:
            full_root, root = base / f"{template}-full", base / template
            init_study(full_root, template)
            full = _full_form(full_root, monkeypatch)
            init_study(root, template)
            shutil.copytree(full_root / "sealed", root / "sealed")  # the same study secret
            generate_packs(root)
            out[template] = (root, _manifest_path(root).read_bytes(), full)
    return out


@pytest.mark.parametrize("template", TEMPLATES)
def test_every_reader_gets_the_full_form_back(both_forms, template):
    root, compact, full = both_forms[template]
    old = json.loads(full)
    assert old.pop("manifest_format") == 1
    new = read_manifest(_manifest_path(root))
    assert new.pop("manifest_format") == 2 and "shared" not in new
    # the same document, keys in the same order (json.dumps keeps insertion order)
    assert json.dumps(new) == json.dumps(old)
    manifest = open_manifest(root)
    assert not manifest.temporary and "shared" not in manifest.top
    assert json.dumps([manifest.pack(h) for h in manifest.heads]) == json.dumps(old["packs"])
    assert len(compact) * 3 < len(full)


def test_a_child_gets_the_manifest_without_its_tables_and_reads_them(both_forms):
    root = both_forms["paired-rubric"][0]
    manifest = open_manifest(root)
    expected = manifest.pack(manifest.heads[-1])
    copy = pickle.loads(pickle.dumps(manifest))
    assert copy.inflater is None and manifest.inflater is not None
    assert copy.pack(copy.heads[-1]) == expected
    assert len(pickle.dumps(manifest)) < 4000


def test_open_manifest_takes_the_study_as_readme_shows(both_forms):
    """README's `open_manifest(study)` raised TypeError (unsupported operand type(s)
    for /) with a loaded study, and so did a folder given as a string."""
    from sheetflow.spec import load_study

    root = both_forms["paired-rubric"][0]
    expected = open_manifest(root)
    for given in (load_study(root), str(root)):
        manifest = open_manifest(given)
        try:
            assert [h.file for h in manifest.heads] == [h.file for h in expected.heads]
        finally:
            manifest.close()
    expected.close()


def test_the_seal_sees_a_changed_shared_table(both_forms, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(both_forms["paired-rubric"][0], root)
    assert verify_seal(root).ok
    path = _manifest_path(root)
    data = path.read_bytes()
    at = data.index(b'"hashes":["') + len(b'"hashes":["')
    flipped = b"0" if data[at:at + 1] != b"0" else b"1"
    path.write_bytes(data[:at] + flipped + data[at + 1:])
    check = verify_seal(root)
    assert not check.ok
    assert any("packs/manifest.json" in p and "changed after generate" in p
               for p in check.problems)
    # collect reads the changed hash too: the locked text no longer matches
    assert read_manifest(path) != read_manifest(_manifest_path(both_forms["paired-rubric"][0]))


def test_a_format_1_manifest_collects_like_the_compact_one(both_forms, tmp_path):
    root = tmp_path / "compact"
    shutil.copytree(both_forms["paired-rubric"][0], root)
    for pack in read_manifest(_manifest_path(root))["packs"]:
        fill_openpyxl(root / L.PACKS_DIR / pack["file"], root / L.RETURNS_DIR / pack["file"],
                      plan_answers(pack))
    old = tmp_path / "old"
    shutil.copytree(root, old)
    _manifest_path(old).write_bytes(both_forms["paired-rubric"][2])
    # as a study generated in that form: its seal records that manifest
    lock = old / "sealed" / "plan.lock.json"
    record = json.loads(lock.read_text(encoding="utf-8"))
    record["manifest_sha256"] = hashlib.sha256(both_forms["paired-rubric"][2]).hexdigest()
    lock.write_text(json.dumps(record), encoding="utf-8")
    manifest = open_manifest(old)
    assert not manifest.temporary and manifest.inflater is not None
    assert not manifest.inflater.shapes  # nothing to inflate: every card is whole
    new, before = collect(root, write=False), collect(old, write=False)
    assert new.report.error_count == 0
    assert new.to_dict() == before.to_dict() and list(new.ratings) == list(before.ratings)


def _single_study(root: Path, items: int, raters: int) -> None:
    """The answer-review template with its items cycled to ``items`` and ``raters`` raters."""
    init_study(root, "answer-review")
    with (root / "items.csv").open(encoding="utf-8-sig", newline="") as fh:
        rows = list(csv.reader(fh))
    with (root / "items.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(rows[0])
        for i in range(items):
            row = list(rows[1 + i % (len(rows) - 1)])
            row[0] = f"{row[0]}-{i:04d}"
            w.writerow(row)
    with (root / "raters.csv").open("w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["rater_id", "name", "last_name", "email", "role"])
        for i in range(raters):
            w.writerow([f"R{i:03d}", f"Rater {i}", f"Surname{i:03d}", "", "primary"])


def test_the_manifest_is_smaller_than_the_packs(tmp_path, monkeypatch):
    root = tmp_path / "single"
    _single_study(root, items=120, raters=6)
    generate_packs(root)
    packs = sum(p.stat().st_size for p in (root / L.PACKS_DIR).glob("*.xlsx"))
    compact = _manifest_path(root).stat().st_size
    full = len(_full_form(root, monkeypatch))
    assert full > packs  # what the issue measured: the full form outgrew the packs
    assert compact < packs / 2 and compact * 5 < full


# --------------------------------------------------------------------------- one card


def _card(**change) -> dict:
    """A full card as the writer makes it (two rows, a checklist, a case answer)."""
    hashes = ["a" * 64, "b" * 64, "c" * 64]

    def row(label: str, col: str, h: str) -> dict:
        return {"row_id": f"K7Q2/{label}#0123456789ab", "item_id": "T-1", "label": label,
                "locked": [{"field": "response", "label": f"Response {label}",
                            "sheet": "Scoring", "cells": ["C9", "C10"], "sha256": h}],
                "locked_sha256": L.row_digest([hashes[0], h]),
                "answers": {"ok": {"kind": "checklist", "confidence": {
                    "sheet": "Scoring", "cell": f"{chr(ord(col) + 1)}12"},
                    "questions": [{"sheet": "Scoring", "cell": f"{col}12", "question": "Q?",
                                   "validation": {"type": "list", "choices": ["Yes", "No"]}}]}},
                "derived": {"t": {"sheet": "Scoring", "cell": f"{col}13"}}}

    card = {"card": 3, "item_id": "T-1", "code": "K7Q2", "batch": None,
            "title": {"sheet": "Scoring", "cell": "B5"},
            "locked": [{"field": "prompt", "label": "Prompt", "sheet": "Scoring",
                        "cells": ["C7"], "sha256": hashes[0]}],
            "rows": [row("A", "C", hashes[1]), row("B", "E", hashes[2])],
            "case_answers": {"why": {"kind": "text", "sheet": "Scoring", "cell": "C15",
                                     "validation": {"type": "any"}}}}
    card.update(change)
    return card


def _round_trip(cards: list[dict]) -> tuple[list, list[dict]]:
    compactor = Compactor()
    stored = json.loads(dump_json(compactor.entry({"cards": cards}), compact=True))
    shared = json.loads(dump_json(compactor.shared(), compact=True))
    return stored["cards"], Inflater(shared).entry(stored)["cards"]


def test_cards_laid_out_alike_share_one_shape():
    moved = re.sub(r'"([A-F])(\d+)"', lambda m: f'"{m[1]}{int(m[2]) + 35}"',
                   json.dumps(_card()))  # the same card 35 rows further down
    second = {**json.loads(moved), "card": 4, "item_id": "T-2", "code": "ZZ9P"}
    for row in second["rows"]:
        row.update(item_id="T-2", row_id=row["row_id"].replace("K7Q2", "ZZ9P"))
    stored, back = _round_trip([_card(), second])
    assert [c[0] for c in stored] == [0, 0] and [c[1] for c in stored] == [5, 40]
    assert back[1]["rows"][0]["answers"]["ok"]["questions"][0]["cell"] == "C47"
    assert back[1]["rows"][0]["row_id"] == "ZZ9P/A#0123456789ab"
    assert back[1]["rows"][0]["item_id"] == "T-2"
    assert back[0] == _card()


def test_more_layouts_than_the_compactor_tries_first_each_get_their_shape():
    cards = []
    for i in range(14):
        card = _card(card=i + 1)
        card["locked"][0]["cells"] = [f"C{7 + k}" for k in range(i % 7 + 1)]
        cards.append(card)
    stored, back = _round_trip(cards)
    assert [c[0] for c in stored] == [i % 7 for i in range(14)]
    assert back == cards


def test_a_card_the_compact_form_cannot_give_back_is_stored_whole():
    odd = _card()
    odd["rows"][1]["item_id"] = "T-other"  # not the card's item: kept as written
    stored, back = _round_trip([odd, _card()])
    assert isinstance(stored[0], dict) and isinstance(stored[1], list)
    assert back == [odd, _card()]


def test_a_shape_holding_the_cut_mark_is_filled_as_a_tree():
    nul = _card(case_answers={"why": {"kind": "categorical", "sheet": "Scoring", "cell": "C15",
                                      "validation": {"type": "list", "choices": ["a\x00b"]}}})
    stored, back = _round_trip([nul])
    assert isinstance(stored[0], list) and back == [nul]


def test_a_compact_card_without_its_tables_is_one_clear_error(both_forms, tmp_path):
    root = tmp_path / "study"
    shutil.copytree(both_forms["paired-rubric"][0], root)
    path = _manifest_path(root)
    data = json.loads(path.read_bytes())
    data["shared"]["hashes"] = data["shared"]["hashes"][:1]
    path.write_bytes(dump_json(data, compact=True))
    with pytest.raises(SheetflowError, match="does not match the shared tables"):
        read_manifest(path)
    manifest = open_manifest(root)
    with pytest.raises(SheetflowError, match="changed after generate"):
        manifest.pack(manifest.heads[0])
