"""``sheetflow lock`` (protocol 002): the ratings drawn from are the table ``collect``
recorded, read once, and the lock holds the study lock.
"""

from __future__ import annotations

import shutil

import pytest
from click.testing import CliRunner
from roundtrip_helpers import return_every_pack

from sheetflow.cli import cli
from sheetflow.collect import collect
from sheetflow.packs import generate_packs
from sheetflow.spec import init_study

SELECTION = "second-rater-selection.json"


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """Protocol 002 after generate and collect, before the lock (made once)."""
    root = init_study(tmp_path_factory.mktemp("lock") / "a", "anchored-plan")
    generate_packs(root)
    return_every_pack(root)
    collect(root)
    return root


@pytest.fixture
def study(collected, tmp_path):
    root = tmp_path / "a"
    shutil.copytree(collected, root, symlinks=True)
    return root


def _lock(root):
    return CliRunner().invoke(cli, ["lock", str(root)])


def _errors(result) -> list[str]:
    return [ln for ln in result.output.splitlines() if ln.startswith("error:")]


def test_the_lock_draws_only_from_the_ratings_collect_recorded(study):
    """Half the cases' rows dropped from out/ratings.csv drew the subset from 8 of 16
    completed items (exit 0, sealed), and a row cut in two was a pandas traceback."""
    ratings = study / "out" / "ratings.csv"
    lines = ratings.read_text(encoding="utf-8").splitlines(keepends=True)
    cases = sorted({ln.split(",")[3] for ln in lines[1:]})
    kept = [lines[0]] + [ln for ln in lines[1:] if ln.split(",")[3] in cases[::2]]
    cut = "".join(lines)[:len("".join(lines)) // 2]
    for text in ("".join(kept), cut):
        ratings.write_text(text, encoding="utf-8")
        result = _lock(study)
        errors = _errors(result)
        assert result.exit_code == 3 and isinstance(result.exception, SystemExit), \
            result.output
        assert len(errors) == 1 and "out/ratings.csv does not match out/collection.json" \
            in errors[0] and f"run 'sheetflow collect {study}' again" in errors[0], errors
        assert not (study / "sealed" / SELECTION).exists()


def test_the_lock_holds_the_study_lock(study):
    """A lock started while a collect runs waits for it, then refuses."""
    from sheetflow.collect.data_lock import lock_second_rater
    from sheetflow.collect.outputs import OutputError, study_lock

    with study_lock(study, "collect"), pytest.raises(OutputError, match="another sheetflow"):
        lock_second_rater(study, lock_wait=0.2)
    assert not (study / "sealed" / SELECTION).exists()
    assert lock_second_rater(study, lock_wait=0.2).selected
