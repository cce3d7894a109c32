"""generate's draws: sides balanced per rater, orders shuffled or kept, the seed and the
study secret, the second raters' subset; the same spec and secret give the same bytes."""

from __future__ import annotations

import csv
import email
import hashlib
import json
import math
import shutil
from pathlib import Path

import pytest
from generate_helpers import SECRET, make_study, manifest_of

from sheetflow.packs.assign import assign, second_rater_items
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.study import load_study


def test_paired_sides_balanced_and_orders_differ(tmp_path):
    folder = make_study(tmp_path, "paired-rubric")
    study = load_study(folder)
    first_arm = study.design.arms[0].id
    for rater in study.raters:
        a = assign(study, rater, secret=SECRET)
        under_a = sum(dict(s.sides)["A"] == first_arm for s in a.slots)
        under_b = sum(dict(s.sides)["B"] == first_arm for s in a.slots)
        assert abs(under_a - under_b) <= 1 and under_a + under_b == len(study.items)
    sides = [tuple(dict(s.sides)["A"] for s in assign(study, r, secret=SECRET).slots)
             for r in study.raters]
    assert len(set(sides)) == len(sides), "every rater got the same sides"


def test_balance_holds_for_odd_counts(tmp_path):
    folder = make_study(tmp_path, "paired-rubric")
    lines = (folder / "items.csv").read_text(encoding="utf-8").splitlines(keepends=True)
    text = "".join(lines)
    study = load_study(folder)
    assert len(study.items) % 2 == 0
    # drop the last case so the count is odd
    rows = list(csv.reader(text.splitlines(keepends=True)))
    with (folder / "items.csv").open("w", newline="", encoding="utf-8") as fh:
        csv.writer(fh).writerows(rows[:-1])
    scores = (folder / "internal_scores.csv").read_text(encoding="utf-8").splitlines()
    (folder / "internal_scores.csv").write_text(  # and the dropped case's internal scores
        "\n".join(ln for ln in scores if not ln.startswith(rows[-1][0] + ",")) + "\n",
        encoding="utf-8")
    study = load_study(folder)
    first_arm = study.design.arms[0].id
    for rater in study.raters:
        slots = assign(study, rater, secret=SECRET).slots
        under_a = sum(dict(s.sides)["A"] == first_arm for s in slots)
        assert abs(2 * under_a - len(slots)) == 1


def test_spec_order_kept_without_shuffle(tmp_path):
    folder = make_study(tmp_path, "paired-rubric")
    toml = folder / "study.toml"
    toml.write_text(toml.read_text(encoding="utf-8").replace(
        "shuffle = true", "shuffle = false", 1), encoding="utf-8")
    study = load_study(folder)
    assert not study.design.shuffle
    for r in study.raters:
        slots = assign(study, r, secret=SECRET).slots
        assert [s.item.id for s in slots] == [it.id for it in study.items]


@pytest.mark.parametrize("template", ["paired-rubric", "keep-known"])
def test_same_spec_and_secret_give_identical_bytes(tmp_path, template):
    """Regenerating with the sealed secret (here: b holds a's seal) gives the same bytes."""
    a = make_study(tmp_path / "a", template)
    b = make_study(tmp_path / "b", template)
    generate_packs(a, emails=True)
    shutil.copytree(a / "sealed", b / "sealed")
    generate_packs(b, emails=True)
    files_a = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    files_b = sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file())
    assert files_a == files_b
    produced = [p for p in files_a if p.parts[0] in ("packs", "sealed")]
    assert any(p.suffix == ".xlsx" for p in produced) and Path("sealed/key.json") in produced
    for rel in produced:
        if rel.suffix == ".eml":  # random MIME boundaries: the same message, not the bytes
            ma, mb = (email.message_from_bytes((x / rel).read_bytes()) for x in (a, b))
            assert ma.get_boundary() != mb.get_boundary()
            assert [(p.get_content_type(), p.get_payload(decode=True)) for p in ma.walk()] \
                == [(p.get_content_type(), p.get_payload(decode=True)) for p in mb.walk()]
            assert [h for h in ma.items() if h[0] != "Content-Type"] == \
                [h for h in mb.items() if h[0] != "Content-Type"]
            continue
        assert (a / rel).read_bytes() == (b / rel).read_bytes(), rel


def test_different_seed_changes_the_draws(tmp_path):
    a = make_study(tmp_path / "a", "paired-rubric")
    b = make_study(tmp_path / "b", "paired-rubric")
    toml = (b / "study.toml").read_text(encoding="utf-8")
    (b / "study.toml").write_text(toml.replace("seed = 20260915", "seed = 1"), encoding="utf-8")
    sa, sb = load_study(a), load_study(b)
    assert [assign(sa, r, secret=SECRET).slots for r in sa.raters] != \
        [assign(sb, r, secret=SECRET).slots for r in sb.raters]


def test_a_new_study_gets_a_new_secret(tmp_path):
    """Two studies from one template and seed: every pack differs (codes, row ids)."""
    a = make_study(tmp_path / "a", "paired-rubric")
    b = make_study(tmp_path / "b", "paired-rubric")
    generate_packs(a)
    generate_packs(b)
    assert (a / "sealed" / "secret").read_bytes() != (b / "sealed" / "secret").read_bytes()
    ka = json.loads((a / "sealed" / "key.json").read_text(encoding="utf-8"))
    kb = json.loads((b / "sealed" / "key.json").read_text(encoding="utf-8"))
    assert [c["code"] for p in ka["packs"] for c in p["cases"]] != \
        [c["code"] for p in kb["packs"] for c in p["cases"]]
    for pa in sorted((a / "packs").glob("*.xlsx")):
        assert pa.read_bytes() != (b / "packs" / pa.name).read_bytes()


def test_second_rater_gets_the_sha256_ranked_subset(tmp_path):
    folder = make_study(tmp_path, "anchored-plan")
    spec = folder / "study.toml"
    spec.write_text(spec.read_text(encoding="utf-8").replace('select_at = "lock"',
                                                             'select_at = "generate"'),
                    encoding="utf-8")
    generate_packs(folder)
    study = load_study(folder)
    plan = study.design.second_rater
    strata: dict[tuple, list] = {}
    for it in study.items:
        strata.setdefault(tuple(it.fields[c] for c in plan.strata), []).append(it.id)
    expected = set()
    for ids in strata.values():
        ranked = sorted(ids, key=lambda i: hashlib.sha256(f"{study.hash}:{i}".encode())
                        .hexdigest())
        expected.update(ranked[: math.ceil(plan.fraction * len(ids))])
    assert {it.id for it in second_rater_items(study)} == expected
    manifest = manifest_of(folder)
    by_rater = {p["rater_id"]: {c["item_id"] for c in p["cards"]} for p in manifest["packs"]}
    assert by_rater["S-1"] == expected
    assert by_rater["P-1"] == {it.id for it in study.items}
    assert len(expected) < len(study.items)
