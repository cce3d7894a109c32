"""The study secret: nothing a rater holds predicts an arm or another rater's pack.

The attack these tests replay: a rater holds one pack and knows everything public (the
source code, the template's seeds, the spec hash published before scoring, the rater ids).
Before the study secret, every draw came from ``sha256(seed + purpose)`` and the row-id
key from ``sha256(spec hash + seeds)``; trying every seed below ten million recovered
them in seconds. Now each draw is keyed with 32 secret bytes (``sealed/secret``).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import random
import shutil
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import openpyxl
import pytest
from generate_helpers import generated_with_two_first_packs
from roundtrip_helpers import (
    claim_identity,
    fill_openpyxl,
    generate_every_template,
    plan_answers,
)

from sheetflow.collect import collect, status
from sheetflow.packs import generate_packs
from sheetflow.packs.assign import _with_sides, derivation
from sheetflow.packs.manifest import read_manifest
from sheetflow.spec import init_study, list_templates, load_study
from sheetflow.workbook import layout as L

TEMPLATES = sorted(list_templates())
BELOW = 10**7  # every integer seed a person might type, as the attack tried
CHUNKS = 8


def _seeds_generating(args: tuple[int, int, bytes, bytes, str, bytes]) -> list[int]:
    """Seeds in ``[start, stop)`` whose public derivation gives ``target``.

    ``kind`` ``"draw"``: ``sha256(b"<seed>" + suffix)[:8]`` (a draw's generator seed);
    ``"row-key"``: ``sha256(prefix + b"<seed>" + suffix)`` hex (the old row-id key).
    """
    start, stop, prefix, suffix, kind, target = args
    sha = hashlib.sha256
    if kind == "draw":
        return [s for s in range(start, stop) if sha(b"%d%s" % (s, suffix)).digest()[:8]
                == target]
    base = sha(prefix)
    found = []
    for s in range(start, stop):
        h = base.copy()
        h.update(b"%d%s" % (s, suffix))
        if h.hexdigest().encode() == target:
            found.append(s)
    return found


def _brute_force(pool: ProcessPoolExecutor, prefix: bytes, suffix: bytes, kind: str,
                 target: bytes, extra: list[int]) -> list[int]:
    step = BELOW // CHUNKS
    jobs = [(i, min(i + step, BELOW), prefix, suffix, kind, target)
            for i in range(0, BELOW, step)]
    jobs += [(s, s + 1, prefix, suffix, kind, target) for s in extra]
    return [s for found in pool.map(_seeds_generating, jobs) for s in found]


@pytest.fixture(scope="module")
def studies(tmp_path_factory) -> dict[str, Path]:
    return generate_every_template(tmp_path_factory.mktemp("secret"))


def _sealed(root: Path) -> tuple[bytes, dict]:
    secret = bytes.fromhex((root / "sealed" / "secret").read_text(encoding="ascii"))
    key = json.loads((root / "sealed" / "key.json").read_text(encoding="utf-8"))
    return secret, key


@pytest.mark.slow
def test_no_seed_below_ten_million_reproduces_a_draw_or_the_row_key(studies):
    """For a pack of each template: the generator that drew its sides (paired) or codes
    (single), and the key of every pack's row ids, are not what any seed below 10^7 (or
    the template's own seeds) gives through the public derivation. A generator seeded
    differently draws differently, so the seeds predict neither the sides of any card
    nor any other pack's row ids."""
    with ProcessPoolExecutor(max_workers=2) as pool:
        for template, root in studies.items():
            study = load_study(root)
            secret, key = _sealed(root)
            pack = key["packs"][0]
            channel = "sides" if study.design.paired else "codes"
            derivation = pack["seeds"][channel]
            used = hmac.new(secret, derivation.encode(), hashlib.sha256).digest()[:8]
            suffix = derivation.partition(":")[2]
            seeds = [study.design.seed, study.plan.seed or 0]
            found = _brute_force(pool, b"", b":" + suffix.encode(), "draw", used, seeds)
            assert found == [], (template, found)

            row_key = hmac.new(secret, f"sheetflow row ids\x1f{study.hash}".encode(),
                               hashlib.sha256).hexdigest().encode()
            repeats = str(study.design.repeats.seed if study.design.repeats else "")
            plan_seed = str(study.plan.seed)
            prefix = f"sheetflow row ids\x1f{study.hash}\x1f".encode()
            found = _brute_force(pool, prefix, f"\x1f{repeats}\x1f{plan_seed}".encode(),
                                 "row-key", row_key, seeds)  # every design seed
            assert found == [], (template, found)
            prefix = f"sheetflow row ids\x1f{study.hash}\x1f{study.design.seed}\x1f" \
                     f"{repeats}\x1f".encode()
            found = _brute_force(pool, prefix, b"", "row-key", row_key, seeds)  # plan seed
            assert found == [], (template, found)


def _public_rows(study, pack: dict, pack_id: str) -> set[str]:
    """The row ids the old public derivation gives for ``pack_id`` (the attacker's
    best guess, with the template's seeds)."""
    d = study.design
    parts = ["sheetflow row ids", study.hash, str(d.seed),
             str(d.repeats.seed if d.repeats else ""), str(study.plan.seed)]
    guess = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return {L.keyed_row_id(guess, pack_id, r["row_id"].split("#")[0])
            for card in pack["cards"] for r in card["rows"]}


def test_the_template_seeds_predict_no_row_id_and_no_sides(studies):
    for template, root in studies.items():
        study = load_study(root)
        manifest = read_manifest(root / L.PACKS_DIR / L.MANIFEST_FILE)
        for pack in manifest["packs"]:
            actual = {r["row_id"] for card in pack["cards"] for r in card["rows"]}
            assert not actual & _public_rows(study, pack, pack["identity"]["pack_id"]), \
                template
        if study.design.paired:
            _, key = _sealed(root)
            for kp in key["packs"]:
                rng = random.Random(int.from_bytes(hashlib.sha256(
                    kp["seeds"]["sides"].encode()).digest()[:8], "big"))
                items = [study.items[[it.id for it in study.items].index(i)]
                         for i in kp["order"]]
                guessed = [dict(s.sides) for s in _with_sides(study, items, rng)]
                actual = [c["sides"] for c in kp["cases"]]
                assert guessed != actual, template
                assert kp["seeds"]["sides"] == derivation(study.design.seed, "sides", "s1",
                                                           kp["rater_id"])


def test_regenerating_in_place_keeps_the_secret_and_the_bytes(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    before = {p.name: p.read_bytes() for p in (root / L.PACKS_DIR).glob("*.xlsx")}
    secret = (root / "sealed" / "secret").read_bytes()
    generate_packs(root)
    assert (root / "sealed" / "secret").read_bytes() == secret
    assert {p.name: p.read_bytes() for p in (root / L.PACKS_DIR).glob("*.xlsx")} == before


def test_the_key_commits_to_the_secret(tmp_path):
    from sheetflow.packs import verify_seal

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    _, key = _sealed(root)
    stored = (root / "sealed" / "secret").read_bytes()
    assert key["secret_sha256"] == hashlib.sha256(stored).hexdigest()
    assert verify_seal(root).ok
    (root / "sealed" / "secret").write_bytes(b"0" * 64 + b"\n")
    check = verify_seal(root)
    assert not check.ok and "sealed/secret" in check.problems[0]


# ------------------------------------------------------------------ forging another rater


def _rekey(wb: openpyxl.Workbook, study, pack_id: str) -> None:
    """Recompute every row id for ``pack_id`` with the attacker's best key guess."""
    d = study.design
    parts = ["sheetflow row ids", study.hash, str(d.seed),
             str(d.repeats.seed if d.repeats else ""), str(study.plan.seed)]
    guess = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()

    def rekeyed(value: str) -> str:
        return L.keyed_row_id(guess, pack_id, value.split("#")[0])
    for sheet, column in ((L.SCORING_SHEET, 1), (L.IDENTITY_SHEET, 1)):
        ws = wb[sheet]
        first = L.IDENTITY_ROW_TABLE_FIRST if sheet == L.IDENTITY_SHEET else 1
        for r in range(first, ws.max_row + 1):
            value = ws.cell(r, column).value
            if value and "#" in str(value):
                ws.cell(r, column).value = " ".join(rekeyed(v) for v in str(value).split())


def _forgeries(filled: Path, study, victim: dict, returns: Path) -> list[str]:
    """Every route from the forger's own filled pack to a workbook claiming ``victim``."""
    routes = {
        "identity.xlsx": lambda wb: claim_identity(wb, victim["identity"]),
        "identity-and-rows.xlsx": lambda wb: (claim_identity(wb, victim["identity"]),
                                              _rekey(wb, study, victim["identity"]["pack_id"])),
        "rows-only.xlsx": lambda wb: _rekey(wb, study, victim["identity"]["pack_id"]),
    }
    for name, forge in routes.items():
        wb = openpyxl.load_workbook(filled)
        forge(wb)
        wb.save(returns / name)
    shutil.copyfile(filled, returns / victim["file"])  # own file under the victim's name
    return [*routes, victim["file"]]


@pytest.mark.parametrize("template", TEMPLATES)
def test_a_forged_workbook_never_counts_as_another_rater(tmp_path, template):
    root = tmp_path / "s"
    packs = generated_with_two_first_packs(root, template)
    study = load_study(root)
    forger, victim = packs[0], packs[1]
    returns = root / "returns"
    filled = tmp_path / "forger.xlsx"
    fill_openpyxl(root / L.PACKS_DIR / forger["file"], filled, plan_answers(forger))
    names = _forgeries(filled, study, victim, returns)

    result = collect(root, write=False)
    by_file = {f.file: f for f in result.report.files}
    for name in names:
        assert by_file[name].pack_id != victim["identity"]["pack_id"], (name, by_file[name])
    victim_status = next(s for s in status(root) if s.rater == victim["rater_id"]
                         and s.sitting == 1)
    assert not victim_status.returned

    # the victim's genuine return is used, and no forgery displaces it
    genuine = tmp_path / "victim.xlsx"
    fill_openpyxl(root / L.PACKS_DIR / victim["file"], genuine, plan_answers(victim))
    (returns / victim["file"]).unlink()
    shutil.copyfile(genuine, returns / "victim-own.xlsx")
    result = collect(root, write=False)
    mine = [f for f in result.report.files if f.pack_id == victim["identity"]["pack_id"]]
    assert [f.file for f in mine] == ["victim-own.xlsx"] and mine[0].used
    assert not [i for i in result.report.issues if i.file == "victim-own.xlsx"
                and i.severity == "error"]


def test_a_value_in_a_reply_cannot_open_a_mime_part_of_its_own(tmp_path):
    """A rater's answer is quoted in the coordinator's reply draft. With a boundary
    derived from the pack name (as before), a crafted answer could close the text part
    and add a text/html part; the boundary is now random, so the draft keeps its two
    parts whatever the text says."""
    import email

    from sheetflow.packs.mail import build_eml

    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    study = load_study(root)
    rater = study.raters[0]
    pack = next((root / L.PACKS_DIR).glob("*.xlsx"))
    old = "sheetflow-" + hashlib.sha256(pack.name.encode()).hexdigest()[:24]
    crafted = (f"Your value: x\n--{old}\nContent-Type: text/html\n\n<a href='http://evil'>"
               f"fix here</a>\n--{old}--\n")
    drafts = [build_eml(study, rater, pack, body=crafted) for _ in range(2)]
    for raw in drafts:
        message = email.message_from_bytes(raw)
        assert [p.get_content_type() for p in message.walk()] == [
            "multipart/mixed", "text/plain",
            "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"]
        assert message.get_boundary() != old
    assert email.message_from_bytes(drafts[0]).get_boundary() != \
        email.message_from_bytes(drafts[1]).get_boundary()
