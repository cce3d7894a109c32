"""A sealed study keeps its spec hash when a later sheetflow changes a default.

The expected hashes were computed with sheetflow at commit 90a2928 (before a number
whose ``min`` is below 0 defaulted to the interval level): each study below was made
with ``init_study`` and edited as the test does, and ``load_study(folder).hash`` printed.
A study sealed then must hash the same now, or every command refuses it as edited.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sheetflow.spec.study import load_study
from sheetflow.spec.templates import init_study

# each template as shipped, hashed at 90a2928; anchored-plan since its material-error
# count lost the cap of 50 the protocol never set (a study generated before keeps its own)
TEMPLATE_HASHES = {
    "anchored-plan": "bc781bcbeb551d776d056bed9123d282369f4a73e4420a556402274dbe279b8a",
    "answer-review": "c59fae8e71f01b661530fc50b0f65b488c038647a3dadf819311dd9ad4503fc5",
    "judge-likert": "b69f176cf73197cd5bd45b969d4b866470e9f73b44729c92cef32f0894815a78",
    "keep-known": "1e1d9daac11abae4d20b8cb593e9e2aec3ad498b2a53da60adb5d8dfe43334a9",
    "paired-rubric": "ba21ea836a16bf5677919880ea8094d5e3c77913656b59fee6dedbfd3801e8e9",
}
# paired-rubric with hours_worked at min = -5 and its level line deleted, hashed at 90a2928
NEGATIVE_MIN_NO_LEVEL = "d3e0eecc2d75e328ae3a9c18419319ef48b109bf6e765b1ac58ac4a853b241d1"
# the same with level = "interval" written instead, hashed at 90a2928
NEGATIVE_MIN_INTERVAL = "3a331db0bbddf984a2815f27ce55b10dcc6c33eab073d09b524f5da5ddba3b46"

_HOURS = ('min = 0\nmax = 40\ndecimals = 2\nhelp = "For the compensation calculation: '
          'the hours you actually spent, e.g. 6.5."\nlevel = "ratio"\n')


def _hours_edited(tmp_path: Path, level_line: str) -> Path:
    """paired-rubric with hours_worked allowing -5, its level line replaced."""
    folder = init_study(tmp_path / "s", "paired-rubric")
    spec = folder / "study.toml"
    text = spec.read_text(encoding="utf-8")
    assert _HOURS in text  # the template's hours_worked as the hashes above were made
    edited = _HOURS.replace("min = 0", "min = -5").replace('level = "ratio"\n', level_line)
    spec.write_text(text.replace(_HOURS, edited), encoding="utf-8")
    return folder


@pytest.mark.parametrize("template", sorted(TEMPLATE_HASHES))
def test_each_template_hashes_as_it_did(tmp_path, template):
    assert load_study(init_study(tmp_path / template, template)).hash == \
        TEMPLATE_HASHES[template]


def test_a_negative_number_without_a_level_keeps_the_hash_sealed_before(tmp_path):
    study = load_study(_hours_edited(tmp_path, ""))
    assert study.hash == NEGATIVE_MIN_NO_LEVEL
    # the hash is kept, the analysis still runs at interval (ratio needs a true zero)
    assert study.rubric.dimension("hours_worked").level == "interval"
    assert not study.generate_problems


def test_a_negative_number_with_interval_written_hashes_as_written(tmp_path):
    study = load_study(_hours_edited(tmp_path, 'level = "interval"\n'))
    assert study.hash == NEGATIVE_MIN_INTERVAL
