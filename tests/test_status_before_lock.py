"""``status`` before protocol 002's data lock: the second rater is in the panel but has
no pack until ``lock`` writes it. Status said "1 of 1 packs returned" in green with no
word of them, as if the panel were back; it now names them and the step that writes
their pack (the analysis refuses to unseal without them). Its --json said ``"ok": true``
and named no such rater: it now lists them under ``awaiting_lock`` and is not ok (exit
1), since the panel is not back."""

from __future__ import annotations

import json

from click.testing import CliRunner

from sheetflow.cli import cli
from sheetflow.collect.run import collect
from sheetflow.demo.simulate import fill_packs
from sheetflow.packs.generate import generate_packs
from sheetflow.spec.templates import init_study


def _collected_before_lock(tmp_path):
    """An anchored-plan study (002) whose primary pack came back and was collected,
    before ``lock`` writes the second rater's pack."""
    root = tmp_path / "plan"
    init_study(root, "anchored-plan")
    generate_packs(root)
    fill_packs(root, seed=3)
    collect(root)
    return root


def test_status_names_the_second_rater_awaiting_the_lock(tmp_path):
    root = _collected_before_lock(tmp_path)
    out = CliRunner().invoke(cli, ["status", str(root)])
    assert out.exit_code == 1, out.output  # the panel is not back: lock is still to run
    head = next(ln for ln in out.output.splitlines() if "packs returned" in ln)
    assert head == "1 of 1 packs returned; 1 rater without a pack yet (R-3MD: written at lock)"
    assert any(ln.startswith("R-3MD: no pack yet") and "sheetflow lock" in ln
               for ln in out.output.splitlines())


def test_status_json_lists_the_second_rater_awaiting_the_lock_and_is_not_ok(tmp_path):
    root = _collected_before_lock(tmp_path)
    out = CliRunner().invoke(cli, ["status", str(root), "--json"])
    doc = json.loads(out.stdout)
    assert out.exit_code == 1
    assert doc["ok"] is False
    assert list(doc["awaiting_lock"]) == ["R-3MD"]
    assert "sheetflow lock" in doc["awaiting_lock"]["R-3MD"]
