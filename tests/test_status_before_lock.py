"""``status`` before protocol 002's data lock: the second rater is in the panel but has
no pack until ``lock`` writes it. Status said "1 of 1 packs returned" in green with no
word of them, as if the panel were back; it now names them and the step that writes
their pack (the analysis refuses to unseal without them)."""

from __future__ import annotations

from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study


def test_status_names_the_second_rater_awaiting_the_lock(tmp_path):
    root = tmp_path / "plan"
    init_study(root, "anchored-plan")
    generate_packs(root)
    fill_packs(root, seed=3)
    collect(root)
    out = CliRunner().invoke(cli, ["status", str(root)])
    assert out.exit_code == 0, out.output
    head = next(ln for ln in out.output.splitlines() if "packs returned" in ln)
    assert head == "1 of 1 packs returned; 1 rater without a pack yet (R-3MD: written at lock)"
    assert any(ln.startswith("R-3MD: no pack yet") and "sheetflow lock" in ln
               for ln in out.output.splitlines())
