"""The demo study as a fixture: built once per test module, copied for each test."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from sheetflow.cli import cli


def built_demo(folder: Path) -> Path:
    """``sheetflow demo`` into ``folder``: four returns collected and analysed."""
    result = CliRunner().invoke(cli, ["demo", str(folder)])
    assert result.exit_code == 0, result.output
    return folder


def copy_of(demo: Path, tmp_path: Path) -> Path:
    """A copy of the demo study for one test to change."""
    root = tmp_path / "study"
    shutil.copytree(demo, root)
    return root


def analysed_templates(base: Path) -> dict[str, Path]:
    """Template -> a study made from it in ``base``, its packs filled by the demo's
    simulated raters, collected and analysed (``out/analysis.xlsx``). Anchored-plan's
    second rater gets a pack only at its lock: before it they are expected and missing,
    which only ``allow_partial`` analyses."""
    from sheetflow.analysis import analyze
    from sheetflow.collect import collect
    from sheetflow.demo.simulate import fill_packs
    from sheetflow.packs import generate_packs
    from sheetflow.report import write_analysis_outputs
    from sheetflow.spec import init_study, list_templates

    out = {}
    for template in sorted(list_templates()):
        root = init_study(base / template, template)
        generate_packs(root)
        fill_packs(root, seed=5)
        collect(root)
        write_analysis_outputs(analyze(root, allow_partial=True), root / "out")
        out[template] = root
    return out
