"""The check of text outside the cells (:mod:`sheetflow.collect.part_text`) reads no
return's sheets a second time (the safety inspection keeps each sheet's headers and
footers) and reads the pack only when the return holds text generate did not write."""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from roundtrip_helpers import first_return_changed, paired_study_every_pack_returned

from sheetflow.collect.part_text import check_part_text
from sheetflow.collect.reader import open_book
from sheetflow.collect.run import collect
from sheetflow.collect.safety import inspect_file
from sheetflow.spec.study import load_study
from sheetflow.workbook import layout as L

NOTE = "case 3: response B cites no source"


@pytest.fixture(scope="module")
def clean(tmp_path_factory) -> Path:
    """A study whose every pack came back filled in (openpyxl)."""
    return paired_study_every_pack_returned(tmp_path_factory.mktemp("part-reads") / "s")


def _footer(wb) -> None:
    wb[L.SCORING_SHEET].oddFooter.center.text = NOTE


def _checked(root: Path, path: Path, spec_hash: str | None = None,
             book=None) -> list[tuple[str, str]]:
    """The issues :func:`check_part_text` adds for ``path`` (``book``: it opened),
    checked as collect checks it but against a manifest entry without a sha256 (so a
    pack read says why it could not be compared) and a manifest whose spec hash is
    ``spec_hash`` (the study's by default)."""
    study = load_study(root)
    added: list[tuple[str, str]] = []
    manifest_hash = study.hash if spec_hash is None else spec_hash
    checker = SimpleNamespace(
        study=study, book=book or open_book(path), renamed={},
        # as collect's parent works it out once for every file
        job=SimpleNamespace(study_dir=str(root), spec_current=study.hash == manifest_hash,
                            manifest=SimpleNamespace(top={"spec_hash": manifest_hash})),
        head=SimpleNamespace(file=path.name, sha256="", sitting=1),
        add=lambda code, **fields: added.append((code, fields["what"])))
    check_part_text(checker)
    return added


def test_the_inspection_keeps_each_sheets_header_footer_block(clean, tmp_path):
    _, path = first_return_changed(clean, tmp_path, _footer)
    blocks = inspect_file(path).header_footers
    assert NOTE.encode() in blocks[L.SCORING_SHEET]
    assert blocks[L.SCORING_SHEET].startswith(b"<headerFooter")
    assert blocks[L.SCORING_SHEET].endswith(b"</headerFooter>")
    assert blocks[L.INSTRUCTIONS_SHEET] is None


def test_a_footer_is_named_without_decompressing_the_returns_sheets_again(clean, tmp_path,
                                                                          monkeypatch):
    root, path = first_return_changed(clean, tmp_path, _footer)
    book = open_book(path)
    read: list[str] = []
    original = zipfile.ZipFile.read

    def spy(self, name, *args, **kwargs):
        read.append(name if isinstance(name, str) else name.filename)
        return original(self, name, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "read", spy)
    found = [what for code, what in _checked(root, path, book=book)
             if code == "header-footer-text"]
    assert len(found) == 1 and NOTE in found[0]
    assert read and not [name for name in read if name.startswith("xl/worksheets/")]


def test_a_return_holding_only_the_packs_own_title_does_not_read_the_pack(clean, tmp_path):
    """With the packs gone, a return whose only property text is the title generate
    gave it has nothing named: the title is known as sheetflow's own without the pack."""
    root = Path(shutil.copytree(clean, tmp_path / "s"))
    for pack in (root / L.PACKS_DIR).glob("*.xlsx"):
        pack.unlink()
    issues = collect(root, write=False).report.issues
    assert [i for i in issues if i.code == "property-text"] == []


def test_other_text_is_still_compared_with_the_pack(clean, tmp_path):
    root, path = first_return_changed(clean, tmp_path,
                                      lambda wb: setattr(wb.properties, "title", NOTE))
    added = _checked(root, path)
    # the pack cannot be compared here: the Comments generate wrote are named too
    assert [what.split(" holds ")[0] for _, what in added] == [
        "The document property Title", "The document property Comments"]
    assert NOTE in added[0][1]
    assert all(what.endswith("has no sha256 in the manifest to check it by")
               for _, what in added)


def test_a_study_changed_since_generate_compares_its_title_with_the_pack(clean, tmp_path):
    """The title generate wrote comes from the study as it was: once the study's spec
    hash is not the manifest's, even the study's title is compared with the pack."""
    root, path = first_return_changed(clean, tmp_path, lambda wb: None)
    assert _checked(root, path) == []
    added = _checked(root, path, spec_hash="0" * 64)
    assert [what.split(" holds ")[0] for _, what in added] == [
        "The document property Title", "The document property Comments"]
    assert all(what.endswith("has no sha256 in the manifest to check it by")
               for _, what in added)
