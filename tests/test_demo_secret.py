"""A demo folder reused for real raters never keeps the demo's public secret.

The demo draws with a secret anyone can compute (``DEMO_SECRET``), so every demo run
is the same. Copied and regenerated for real raters, it used to keep that secret: the
packs came out byte-identical to the demo's and generate said to keep ``sealed/``
private, as if it hid anything.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from demo_helpers import built_demo

from sheetflow.cli import cli
from sheetflow.demo.run import DEMO_SECRET
from sheetflow.packs.secret import read_secret


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    return built_demo(tmp_path_factory.mktemp("demo-secret") / "demo")


def _reused(demo: Path, tmp_path: Path) -> Path:
    """The demo copied for real raters: its returns and outputs gone, R1 renamed."""
    root = tmp_path / "study"
    shutil.copytree(demo, root)
    for name in ("returns", "out"):
        shutil.rmtree(root / name)
    (root / "returns").mkdir()
    raters = root / "raters.csv"
    raters.write_text(raters.read_text(encoding="utf-8").replace(
        "R1,Sample Rater One,Adeyemi,r1@example.org", "R1,Jane Real,Doe,jane@example.net"),
        encoding="utf-8")
    return root


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _demo_line(root: Path) -> str:
    return (f"{root}/sealed/secret: sealed by 'sheetflow demo' with its public secret "
            "(anyone who runs the demo can compute it), so packs drawn with it blind "
            f"nothing; for a study with real raters run 'sheetflow generate {root} --force', "
            "which draws a new secret")


def test_the_demo_still_seals_with_its_fixed_secret(demo):
    assert read_secret(demo / "sealed" / "secret") == DEMO_SECRET


def test_generate_refuses_a_demo_folder_reused_for_real_raters(demo, tmp_path):
    root = _reused(demo, tmp_path)
    before = _snapshot(root)
    result = CliRunner().invoke(cli, ["generate", str(root)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"error: {_demo_line(root)}"]
    assert result.stdout == ""  # no "keep sealed/ private" for a secret anyone has
    assert _snapshot(root) == before  # nothing written


def test_generate_force_draws_a_new_secret(demo, tmp_path):
    root = _reused(demo, tmp_path)
    result = CliRunner().invoke(cli, ["generate", str(root), "--force"])
    assert result.exit_code == 0, result.output
    secret = read_secret(root / "sealed" / "secret")
    assert secret != DEMO_SECRET
    unchanged = [p.name for p in (root / "packs").glob("*.xlsx")
                 if (demo / "packs" / p.name).is_file()
                 and (demo / "packs" / p.name).read_bytes() == p.read_bytes()]
    assert unchanged == []  # drawn afresh: no pack is the demo's any more
    for command in ("check", "verify"):  # sealed afresh: nothing to warn of
        checked = CliRunner().invoke(cli, [command, str(root)])
        assert checked.exit_code == 0 and checked.stderr == "", (command, checked.output)
    again = CliRunner().invoke(cli, ["generate", str(root)])  # a real secret is kept
    assert again.exit_code == 0, again.output
    assert read_secret(root / "sealed" / "secret") == secret


def test_generate_force_on_the_demo_itself_keeps_its_returns(demo, tmp_path):
    """A new secret orphans returns made from the demo's packs: refused, as for a new
    spec, naming what would be lost."""
    root = tmp_path / "study"
    shutil.copytree(demo, root)
    before = _snapshot(root)
    result = CliRunner().invoke(cli, ["generate", str(root), "--force"])
    assert result.exit_code == 2, result.output
    (line,) = result.stderr.splitlines()
    assert line.startswith("error: returns/ (4 files) and out/ ") and "Move them out" in line
    assert _snapshot(root) == before


@pytest.mark.parametrize("command", ["check", "verify", "status", "analyze"])
def test_every_reading_command_says_a_demo_seal_blinds_nothing(demo, tmp_path, command):
    """check and verify, and status and analyze on a study run to the end on the
    demo's seal (the figures unblind ratings from packs anyone could unblind): the
    coordinator is told, and the demo itself still runs through each (a warning, not
    a refusal)."""
    root = tmp_path / "study"
    shutil.copytree(demo, root)
    result = CliRunner().invoke(cli, [command, str(root)])
    assert result.exit_code == 0, result.output
    assert result.stderr.splitlines() == [f"warning: {_demo_line(root)}"]
    doc = json.loads(CliRunner().invoke(cli, [command, str(root), "--json"]).stdout)
    assert doc["ok"] and doc["warnings"] == [_demo_line(root)]


@pytest.mark.parametrize("kind", ["invitations", "reminders", "replies"])
def test_send_refuses_to_mail_packs_drawn_with_the_demo_secret(demo, tmp_path, kind):
    """Copied for real raters and sent without generating again, the demo's packs would
    reach them with a key anyone can compute (a reply attaches the pack again): nothing
    goes, nothing is written, and a dry run, which lists what a send would do, stops
    the same way."""
    root = _reused(demo, tmp_path)
    before = _snapshot(root)
    for dry in ([], ["--dry-run"]):
        result = CliRunner().invoke(cli, ["send", str(root), kind, "--yes", *dry,
                                          "--smtp", "127.0.0.1:9", "--smtp-security", "none"])
        assert result.exit_code == 3, result.output
        assert result.stderr.strip() == f"error: {_demo_line(root)}"
        assert _snapshot(root) == before


def test_remind_warns_that_its_drafts_attach_packs_drawn_with_the_demo_secret(demo, tmp_path):
    root = _reused(demo, tmp_path)
    result = CliRunner().invoke(cli, ["remind", str(root), "--min-days", "0"])
    assert f"warning: {_demo_line(root)}" in result.stderr, result.output
