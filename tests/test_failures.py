"""Failures of the machine, not the data: each is one line naming the file, never a
traceback, and nothing half-written is left in place."""

from __future__ import annotations

import json
import os
import resource
import signal
import subprocess
import sys

from click.testing import CliRunner
from roundtrip_helpers import return_every_pack

from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.packs import generate_packs
from sheetflow.spec import init_study


def _collected(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    generate_packs(root)
    return_every_pack(root)
    collect(root)
    return root


def _small_disk(limit: int):
    """In the child: files may grow to ``limit`` bytes; past it a write fails with
    EFBIG, as on a full disk (the signal that would kill the process is ignored)."""
    def apply() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return apply


def test_analyze_on_a_full_disk_is_one_line_and_writes_nothing(tmp_path):
    root = _collected(tmp_path)
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    run = subprocess.run([sys.executable, "-m", "sheetflow", "analyze", str(root)],
                         capture_output=True, text=True, env=env, timeout=600,
                         preexec_fn=_small_disk(40_000))
    errors = [ln for ln in run.stderr.splitlines() if ln.startswith("error:")]
    assert run.returncode == 3, run.stderr
    assert "Traceback" not in run.stderr + run.stdout
    assert len(errors) == 1 and "could not be written" in errors[0], run.stderr
    assert "out/analysis.xlsx: could not be written" in errors[0], errors  # not the staged name
    out = root / "out"
    assert not (out / "analysis.xlsx").exists() and not (out / "summary.json").exists()
    assert not list(out.rglob("*.partial"))


def test_a_deeply_nested_judge_record_is_one_line(tmp_path):
    root = init_study(tmp_path / "s", "judge-likert")
    generate_packs(root)
    deep = tmp_path / "deep.jsonl"
    deep.write_text("[" * 200_000 + "]" * 200_000 + "\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["import-judges", str(root), str(deep)])
    text = result.output
    assert result.exit_code != 0 and "Traceback" not in text
    lines = [ln for ln in text.splitlines() if ln.startswith("error:")]
    assert len(lines) == 1 and "line 1" in lines[0] and "nested too deeply" in lines[0], text
    assert json.loads("[1]") == [1]  # the interpreter is unharmed
