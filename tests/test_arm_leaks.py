"""generate's last check: an arm id found in a pack stops it, and nothing is written.

It used to print a warning per pack and part and exit 0, with the packs, the seal and
the drafts ready to send, each card reading the arm it came from. A distinctive arm id
(``assistant_dense_rag``) in a pack now stops generate (exit 3) before anything is moved
into place; an id that is an ordinary word (``dense``) is matched as a whole word only
and is a warning, since a response or a prompt may use it by coincidence.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner
from spec_helpers import replace_once

from sheetflow.cli import cli
from sheetflow.errors import SealError
from sheetflow.packs import leaks
from sheetflow.packs.generate import generate_packs
from sheetflow.spec import init_study, load_study

QUESTION = "What is the licence fee for a senior member?"


def _study(tmp_path: Path, question: str = QUESTION) -> Path:
    """answer-review with the question of HV-02 (a shown column) replaced."""
    root = init_study(tmp_path / "s", "answer-review")
    replace_once(root / "items.csv", QUESTION, question)
    return root


def _files(root: Path) -> dict[str, str]:
    """Every file under the study's packs/ and sealed/, with its sha256."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for d in ("packs", "sealed") for p in sorted((root / d).rglob("*")) if p.is_file()}


def test_a_distinctive_arm_id_in_a_pack_stops_generate_and_nothing_is_written(tmp_path):
    root = _study(tmp_path, "Which fee did assistant_dense_rag quote?")
    result = CliRunner().invoke(cli, ["generate", str(root), "--eml"])
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    errors = [ln for ln in result.output.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1, result.output
    assert "xl/sharedStrings.xml holds arm id 'assistant_dense_rag' (and 1 other pack)" \
        in errors[0]
    assert "nothing was written" in errors[0]
    assert not (root / "packs").exists() and not (root / "sealed").exists()
    assert not (root / "returns").exists()


def _refused_after_a_first_set(tmp_path: Path, edit: Callable[[Path], None],
                               refusal: str) -> None:
    """A study generated with its drafts, then ``edit``-ed: generating again is refused
    with ``refusal`` and leaves the first set (packs, seal, drafts) as it was."""
    root = _study(tmp_path)
    generate_packs(root, emails=True)
    before = _files(root)
    assert any(name.endswith(".eml") for name in before)
    edit(root)
    with pytest.raises(SealError, match=refusal):
        generate_packs(root, emails=True, force=True)
    assert _files(root) == before
    assert not list(root.rglob("*.partial"))


def test_a_refused_regeneration_leaves_the_earlier_set_whole(tmp_path):
    _refused_after_a_first_set(
        tmp_path, lambda root: replace_once(root / "items.csv", QUESTION,
                                            "Which fee did Assistant_Dense_RAG quote?"),
        "holds arm id 'assistant_dense_rag'")


def _word_arms_study(tmp_path: Path) -> Path:
    """answer-review with arm ids that are ordinary words: ``dense`` and ``hybrid``."""
    root = init_study(tmp_path / "s", "answer-review")
    for path in (root / "study.toml", root / "items.csv"):
        text = path.read_text(encoding="utf-8")
        path.write_text(text.replace("assistant_dense_rag", "dense")
                        .replace("assistant_hybrid_rag", "hybrid"), encoding="utf-8")
    return root


def test_an_arm_id_that_is_a_word_is_a_warning_and_only_as_a_whole_word(tmp_path):
    root = _word_arms_study(tmp_path)
    replace_once(root / "items.csv", QUESTION, "Is the condensed fee for a senior member?")
    assert generate_packs(root).warnings == []  # "condensed" is not the word "dense"
    replace_once(root / "items.csv", "condensed fee", "dense fee")
    result = generate_packs(root, force=True)
    warnings = result.warnings
    assert len(warnings) == len(result.packs) == 2  # one per pack
    assert "xl/sharedStrings.xml contains 'dense', an arm id that is also an ordinary " \
        "word or short" in warnings[0]


def test_an_arm_id_in_the_manifest_only_is_a_warning(tmp_path):
    root = init_study(tmp_path / "s", "answer-review")
    replace_once(root / "items.csv", "HV-02,", "HV-02-assistant_hybrid_rag,")
    result = generate_packs(root)
    assert len(result.packs) == 2
    assert [w for w in result.warnings if "manifest.json contains arm id "
            "'assistant_hybrid_rag'; the manifest stays with the coordinator, but check the "
            "item ids" in w]


@pytest.mark.parametrize("text,found", [
    ("x cell_a_opus_solo.", True), ("(CELL_A_OPUS_SOLO)", True),
    ("xcell_a_opus_solo", False), ("cell_a_opus_solo_2", False), ("cell_a_opus_sol", False),
])
def test_an_arm_id_is_matched_as_a_whole_token_in_any_case(tmp_path, text, found):
    study = load_study(init_study(tmp_path / "s", "judge-likert"))
    path = tmp_path / "m.json"
    path.write_text(text, encoding="utf-8")
    hits = leaks.find_leaks(study, [(path.name, path)])
    assert [k.arm for k in hits] == (["cell_a_opus_solo"] if found else [])


@pytest.mark.parametrize("arms,text,found", [
    (["gpt-4", "gpt-4o"], "gpt-4o, then gpt-4.", ["gpt-4", "gpt-4o"]),
    (["gpt-4o", "gpt-4o-mini"], "(gpt-4o-mini)", ["gpt-4o", "gpt-4o-mini"]),
    (["b", "a-b"], "x a-b", ["b", "a-b"]),
    (["rag_v2", "RAG_v2"], "rag_V2", ["rag_v2", "RAG_v2"]),
    (["base", "base_2"], "baseline base_2x", []),
    (["tool_a", "tool_ab"], "tool_ab tool_abc", ["tool_ab"]),
])
def test_every_arm_id_standing_whole_is_found_where_ids_overlap(tmp_path, arms, text, found):
    """An id inside a longer one (after a '-' or '.') stands whole too: each is found,
    however the ids overlap or differ only in case, in the design's order."""
    study = SimpleNamespace(design=SimpleNamespace(arms=[SimpleNamespace(id=a) for a in arms]),
                            instructions="")
    path = tmp_path / "m.json"
    path.write_text(text, encoding="utf-8")
    assert [k.arm for k in leaks.find_leaks(study, [(path.name, path)])] == found


def test_an_arm_id_is_found_across_block_boundaries_and_only_whole(tmp_path, monkeypatch):
    study = load_study(init_study(tmp_path / "s", "paired-rubric"))
    arm = study.design.arms[1].id
    monkeypatch.setattr(leaks, "_BLOCK", 5)
    for offset in range(12):
        path = tmp_path / f"m{offset}.json"
        path.write_text("x" * offset + " " + arm + " " + "y" * 3, encoding="utf-8")
        assert leaks.find_leaks(study, [(path.name, path)]) == [
            leaks.Leak(path.name, path.name, arm, True)]
        path.write_text("x" * offset + arm + "y" * 3, encoding="utf-8")  # a longer token
        assert leaks.find_leaks(study, [(path.name, path)]) == []


def _with_email(root: Path, subject: str, body: str) -> None:
    """study.toml given an [email] table with ``subject`` and ``body``."""
    with (root / "study.toml").open("a", encoding="utf-8") as fh:
        fh.write(f'\n[email]\nsubject = "{subject}"\nbody = "{body}"\n')


def test_a_distinctive_arm_id_in_the_invitation_stops_generate_and_nothing_is_written(
        tmp_path):
    """The invitations were never searched: an arm id in [email] went to every rater."""
    root = _study(tmp_path)
    _with_email(root, "Your workbook", "Dear {name}, these answers come from "
                "assistant_dense_rag and another system.")
    result = CliRunner().invoke(cli, ["generate", str(root), "--eml"])
    assert result.exit_code == 3, result.output
    assert "Traceback" not in result.output
    (error,) = [ln for ln in result.output.splitlines() if ln.startswith("error: ")]
    assert error.startswith("error: the invitation to ")
    assert "its body holds arm id 'assistant_dense_rag' (and 1 other invitation)" in error
    assert "nothing was written" in error and "[email] in study.toml" in error
    assert not (root / "packs").exists() and not (root / "sealed").exists()
    assert not (root / "returns").exists()


def test_a_refused_invitation_leaves_the_earlier_set_whole(tmp_path):
    _refused_after_a_first_set(
        tmp_path, lambda root: _with_email(root, "Scoring Assistant_Hybrid_RAG",
                                           "Dear {name}, please score."),
        "its subject holds arm id 'assistant_hybrid_rag'")


def test_an_arm_id_that_is_a_word_in_the_invitation_is_one_warning(tmp_path):
    root = _word_arms_study(tmp_path)
    _with_email(root, "Your workbook", "Dear {name}, the dense part is short.")
    result = generate_packs(root)  # no --eml: send words its invitations the same way
    (warning,) = result.warnings
    assert warning.startswith("the invitation to ")
    assert "its body contains 'dense', an arm id that is also an ordinary word or short " \
        "(and 1 other invitation)" in warning
