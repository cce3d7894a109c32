"""What ``lock``, ``generate`` and ``verify`` say about the sealed files is what is so.

``lock`` on a study without a second-rater subset asked for ``select_at = "lock"``, as if
the design lacked only that; ``generate`` said to keep key.json private and left out the
study secret beside it, and on a 002 study named sending as the only next step, though
the second raters' packs come from ``lock``; ``verify`` said "seal ok" and nothing of
what it had compared.
"""

from __future__ import annotations

from click.testing import CliRunner
from spec_helpers import replace_once

from sheetflow.cli import cli
from sheetflow.spec import load_study
from sheetflow.spec.templates import init_study


def _run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    assert "Traceback" not in result.output
    return result.output


def test_lock_on_a_study_without_a_second_rater_says_it_has_none(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    text = _run("lock", str(root), code=2)
    assert text.strip() == (
        f"error: {root / 'study.toml'}: sheetflow lock applies only to a study whose "
        "second-rater subset is drawn at data lock ([design.second_rater] select_at = "
        "\"lock\"); this study has no second-rater subset: nothing to lock")


def test_lock_on_a_subset_drawn_at_generate_says_generate_wrote_its_packs(tmp_path):
    root = init_study(tmp_path / "s", "anchored-plan")
    replace_once(root / "study.toml", 'select_at = "lock"', 'select_at = "generate"')
    text = _run("lock", str(root), code=2)
    assert "this study's subset is drawn at generate (select_at = \"generate\"), so its " \
        "second raters' packs were written by generate: nothing to lock" in text


def test_generate_says_all_of_sealed_is_private(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    text = _run("generate", str(root))
    assert (root / "sealed" / "secret").is_file()
    assert ("sealed     secret, key.json, key.sha256, plan.lock.json (keep sealed/ private: "
            "the secret and the key unblind the study; publish the key's hash below)") in text
    assert text.strip().splitlines()[-1] == \
        f"3 packs written; next: send them, then sheetflow status {root}"


def test_generate_asks_to_publish_the_key_hash_and_to_keep_the_spec_hash_back(tmp_path):
    """The spec hash is a plain sha256 of a spec whose only unknowns, to a rater who
    knows the template, may be the arms: published before scoring, it could be tested
    against guesses (docs/integrity.md). The key's hash commits to the spec through
    the key, which records the secret's sha256, so it alone is published before."""
    root = init_study(tmp_path / "s", "paired-rubric")
    lines = _run("generate", str(root)).splitlines()
    key_sha = (root / "sealed" / "key.sha256").read_text(encoding="utf-8").split()[0]
    spec_sha = load_study(root).hash
    at = lines.index("publish before scoring:")
    assert lines[at + 1] == f"  {key_sha}  sealed/key.json"
    assert lines[at + 2].startswith("keep from the raters until they have returned")
    assert lines[at + 3] == f"  {spec_sha}  spec ({load_study(root).id})"
    assert sum(spec_sha in line for line in lines) == 1


def test_generate_names_lock_for_the_second_raters_packs(tmp_path):
    root = init_study(tmp_path / "s", "anchored-plan")
    text = _run("generate", str(root))
    assert text.strip().splitlines()[-1] == (
        f"1 pack written; next: send it, then sheetflow status {root}; once the primary "
        f"returns are collected, sheetflow lock {root} draws the second-rater subset and "
        "writes the packs of R-3MD")


def test_verify_says_what_it_compared(tmp_path):
    root = init_study(tmp_path / "s", "paired-rubric")
    _run("generate", str(root))
    text = _run("verify", str(root))
    checked = [ln.split(None, 1)[1] for ln in text.splitlines() if ln.startswith("checked ")]
    assert checked == [
        "key.json matches sealed/key.sha256 (give --key-sha256 to check it against the hash "
        "published before scoring)",
        "plan.lock.json records the same key sha256",
        "sealed/secret has the sha256 key.json records",
        "the spec hash key.json and plan.lock.json record is the study's as it is now",
        "internal_scores.csv unchanged since generate",
        "packs/manifest.json has the sha256 sealed for it",
        "the cards of 3 packs in packs/manifest.json show the items key.json sealed for them",
        "3 packs in packs/ have the sha256 packs/manifest.json records",
    ]
    assert text.strip().splitlines()[-1] == "seal ok"


def test_verify_names_the_published_hash_only_when_given(tmp_path):
    root = init_study(tmp_path / "s", "anchored-plan")
    _run("generate", str(root))
    published = (root / "sealed" / "key.sha256").read_text(encoding="utf-8").split()[0]
    text = _run("verify", str(root), "--key-sha256", published)
    assert "checked     key.json matches sealed/key.sha256 and the hash given with " \
        "--key-sha256\n" in text
    assert "1 pack in packs/ has the sha256 packs/manifest.json records" in text
    assert "unchanged since generate" not in text  # this study seals no input file
