"""Neutral display codes: no pack of any template shows an id whose order gives the arms away.

Cards read "Case 7 of 60 - K7QF": the code is drawn per rater from the design seed, so
its order carries no trace of the arms. The bundled templates number their items in an
order unrelated to the arms, and a spec that opts in to showing ids (``[items] show_id``)
is warned at ``check`` when the ids' order follows the arms.
"""

from __future__ import annotations

import csv
import json
import random
import re
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.packs.assign import CODE_ALPHABET, CODE_LENGTH
from sheetflow.packs.generate import generate_packs
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec.blinding import natural_key, order_reveals_arms
from sheetflow.spec.study import load_study

ROOT = Path(__file__).resolve().parent.parent
TEMPLATES = ["paired-rubric", "keep-known", "anchored-plan", "answer-review", "judge-likert"]
# a card's title; its score heading ("...: scores") repeats the case and is not one
TITLE = re.compile(r"^Case (\d+) of (\d+)(?: \u2014 ([^:]+))?$")


def _study(tmp: Path, template: str) -> Path:
    folder = tmp / template
    shutil.copytree(ROOT / "templates" / template, folder)
    return folder


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    """Every template's packs, drawn with a fixed study secret: the order detector works
    at alpha 0.01, so on codes drawn afresh each run it would flag about one pack in a
    hundred by chance; a fixed secret makes the checked draws the same every run."""
    import sheetflow.packs.generate as G

    tmp = tmp_path_factory.mktemp("blind")
    out = {}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(G, "new_secret", lambda: bytes(range(32)))
        for template in TEMPLATES:
            folder = _study(tmp, template)
            generate_packs(folder)
            out[template] = folder
    return out


def _shown_cells(path: Path, *, row_ids: bool = False) -> list[str]:
    """Every text a rater sees: cells of the visible and the (merely) hidden sheets.

    The cells holding only row ids (the collector's binding of rows to a pack, in a
    hidden column) are left out unless ``row_ids``: they are tested on their own.
    """
    manifest = read_manifest(path.parent / "manifest.json")
    pack = next(p for p in manifest["packs"] if p["file"] == path.name)
    ids = {r["row_id"] for card in pack["cards"] for r in card["rows"]}
    wb = openpyxl.load_workbook(path)
    try:
        texts = [str(c.value) for ws in wb.worksheets if ws.sheet_state != "veryHidden"
                 for row in ws.iter_rows() for c in row if c.value is not None]
    finally:
        wb.close()
    return [t for t in texts if row_ids or not set(t.split()) <= ids]


def _cards(folder: Path) -> dict[str, list[dict]]:
    """Per pack file: the key's cards (item id, code, arm signature)."""
    key = json.loads((folder / "sealed" / "key.json").read_text(encoding="utf-8"))
    out = {}
    for pack in key["packs"]:
        cards = []
        for card in pack["cases"]:
            arm = card.get("arm") or card["sides"][key["design"]["labels"][0]]
            cards.append({"item": card["item_id"], "code": card["code"], "arm": arm})
        out[pack["file"]] = cards
    return out


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_pack_shows_a_source_id(generated, template):
    folder = generated[template]
    study = load_study(folder)
    ids = [re.compile(rf"(?<![\w-]){re.escape(it.id)}(?![\w-])") for it in study.items]
    for file, cards in _cards(folder).items():
        shown = _shown_cells(folder / "packs" / file)
        titles = [m for m in map(TITLE.match, shown) if m]
        assert [int(m[1]) for m in titles] == list(range(1, len(cards) + 1))
        assert [m[3] for m in titles] == [c["code"] for c in cards]
        leaks = {p.pattern for p in ids for text in shown if p.search(text)}
        assert not leaks, f"{file} shows item ids {sorted(leaks)[:5]}"


@pytest.mark.parametrize("template", TEMPLATES)
def test_row_ids_in_a_pack_carry_no_source_id(generated, template):
    """The hidden row-id column is one unhide away: it holds the code, not the id."""
    folder = generated[template]
    study = load_study(folder)
    for file in _cards(folder):
        shown = " ".join(_shown_cells(folder / "packs" / file, row_ids=True))
        assert not [it.id for it in study.items
                    if re.search(rf"(?<![\w-]){re.escape(it.id)}(?![\w-])", shown)]


@pytest.mark.parametrize("template", TEMPLATES)
def test_no_shown_code_order_separates_the_arms(generated, template):
    for file, cards in _cards(generated[template]).items():
        codes = [c["code"] for c in cards]
        assert len(set(codes)) == len(codes)
        assert all(len(c) == CODE_LENGTH and set(c) <= set(CODE_ALPHABET) for c in codes)
        assert not order_reveals_arms(codes, [c["arm"] for c in cards]), file


@pytest.mark.parametrize("template", ["keep-known", "anchored-plan", "answer-review",
                                      "judge-likert"])
def test_template_ids_do_not_follow_the_arms(template):
    study = load_study(ROOT / "templates" / template)
    ids = [it.id for it in study.items]
    arms = [it.fields[study.design.arm_column] for it in study.items]
    assert not any(order_reveals_arms(ids, arms, seed=s) for s in range(5))


def test_codes_differ_between_raters_and_sittings(generated):
    cards = _cards(generated["keep-known"])
    by_item = [{c["item"]: c["code"] for c in pack} for pack in cards.values()]
    shared = set(by_item[0]) & set(by_item[-1])
    assert shared and any(by_item[0][i] != by_item[-1][i] for i in shared)


def test_the_test_sees_arms_in_ordered_ids():
    """The detector flags blocks, alternation and four-way cycles, not random orders."""
    ids = [f"X{i:03d}" for i in range(1, 61)]
    assert order_reveals_arms(ids, ["a"] * 30 + ["b"] * 30)
    assert order_reveals_arms(ids, ["a", "b"] * 30)
    assert order_reveals_arms(ids[:12], ["a", "b", "c", "d"] * 3)
    rng = random.Random(5)
    arms = ["a"] * 30 + ["b"] * 30
    hits = 0
    for seed in range(100):
        rng.shuffle(arms)
        hits += order_reveals_arms(ids, arms, seed=seed)
    assert hits <= 5
    assert natural_key("C2") < natural_key("C10")


def _ids_by_arm(folder: Path) -> None:
    """Renumber answer-review's items so that each system's answers are numbered together."""
    path = folder / "items.csv"
    rows = list(csv.DictReader(path.open(encoding="utf-8", newline="")))
    rows.sort(key=lambda r: r["system"])
    with path.open("w", encoding="utf-8", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for i, r in enumerate(rows, 1):
            w.writerow({**r, "item_id": f"HV-{i:02d}"})


def _show_ids(folder: Path) -> None:
    toml = folder / "study.toml"
    text = toml.read_text(encoding="utf-8")
    toml.write_text(text.replace('id_column = "item_id"', 'id_column = "item_id"\nshow_id = true'),
                    encoding="utf-8")


def test_show_id_with_ids_by_arm_warns_at_check(tmp_path):
    folder = _study(tmp_path, "answer-review")
    _show_ids(folder)
    _ids_by_arm(folder)
    result = CliRunner().invoke(cli, ["check", str(folder)])
    assert result.exit_code == 0, result.output
    warnings = [ln for ln in result.stderr.splitlines() if ln.startswith("warning: ")]
    assert len(warnings) == 1 and "follows the arms" in warnings[0], result.stderr
    assert "items.csv" in warnings[0] and "show_id" in warnings[0]
    assert any("follows the arms" in w for w in generate_packs(folder).warnings)


def test_show_id_shows_ids_and_no_warning_when_they_are_neutral(tmp_path):
    folder = _study(tmp_path, "answer-review")
    plain = load_study(folder).hash
    _show_ids(folder)
    result = CliRunner().invoke(cli, ["check", str(folder)])
    assert result.exit_code == 0 and "warning" not in result.stderr
    assert load_study(folder).hash != plain  # the choice is frozen with the spec
    generate_packs(folder)
    for file, cards in _cards(folder).items():
        titles = [m for m in map(TITLE.match, _shown_cells(folder / "packs" / file)) if m]
        assert [m[3] for m in titles] == [c["item"] for c in cards]
