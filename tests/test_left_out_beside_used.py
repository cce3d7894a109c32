"""A file that could not be read, beside its rater's return used, asks nothing of them.

A rater's attachment is cut off in transfer, then the good one comes. collect used the
good one, yet told the coordinator to "ask them to send the .xlsx workbook they
received" (cut file saved by fetch under another name), or drafted a reply asking the
rater to attach it again (cut file named like the pack). Now the cut file gets
``unusable-beside-used``: left out, named with its error and what to do (remove it),
no reply draft, and its error still makes collect and status exit 1 (README: a file
with errors). A cut file whose rater has no return used is still asked for
(``tests/test_unreadable_return.py``).
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

import pytest
from mail_helpers import mail_study, reply, run

from sheetflow.demo.simulate import fill_packs
from sheetflow.workbook import layout as L

ASKED = ("ask them to send", "cannot be used", "UNUSABLE", "with errors")


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> tuple[Path, bytes, str]:
    """A study whose three packs came back filled, EV-01's kept apart (bytes, name)."""
    root = mail_study(tmp_path_factory.mktemp("beside") / "s")
    files = fill_packs(root, seed=5)
    good = files[0].read_bytes()
    files[0].unlink()
    return root, good, files[0].name


def _fetched(base, tmp_path) -> Path:
    """The cut-off attachment, then the good one, fetched from EV-01's address."""
    root = tmp_path / "s"
    shutil.copytree(base[0], root)
    good, name = base[1], base[2]
    return _fetched_from_ev01(root, tmp_path, [(name, good[:len(good) // 2]), (name, good)])


def _fetched_from_ev01(root: Path, tmp_path: Path, files: list[tuple[str, bytes]]) -> Path:
    """Each (name, data) attached to a message of its own from EV-01's address, an
    hour apart from 9:00, fetched into ``root``."""
    mails = []
    for hour, (name, data) in enumerate(files, start=9):
        mail = tmp_path / f"{hour}.eml"
        mail.write_bytes(reply("ev01@example.org", [(name, data)],
                               when=dt.datetime(2026, 9, 16, hour, tzinfo=dt.UTC)))
        mails.append(str(mail))
    assert run("fetch", str(root), *mails).exit_code == 0
    return root


def _renamed(base, tmp_path) -> Path:
    """The cut-off file named like EV-01's pack, the good one under another name."""
    root = tmp_path / "s"
    shutil.copytree(base[0], root)
    good, name = base[1], base[2]
    (root / L.RETURNS_DIR / name).write_bytes(good[:6000])
    (root / L.RETURNS_DIR / "EV01-again.xlsx").write_bytes(good)
    return root


@pytest.mark.parametrize("make", [_fetched, _renamed])
def test_a_cut_file_beside_the_good_one_asks_nothing_of_the_rater(base, tmp_path, make):
    root = make(base, tmp_path)
    result = run("collect", str(root))
    assert result.exit_code == 1, result.output  # its error stands until it is removed
    out = result.stdout
    (cut,) = [ln.split(": ")[0] for ln in out.splitlines()
              if ln.endswith(", left out, 1 error, 1 warning, NOT USED")]
    assert any(": rater EV-01, 100% complete, 0 errors, " in ln and ln.endswith(", used")
               for ln in out.splitlines())
    assert "[unusable-beside-used] This file could not be read or identified (" in out
    assert "so this file is left out and nothing needs asking of EV-01. Remove it from " \
        "the returns folder" in out
    assert "could not be read, so its rater is unknown" not in out
    assert not any(a in out for a in ASKED), out
    assert out.splitlines()[-1].endswith(
        "; 1 file left out beside its rater's return used (remove it from returns/)")
    assert not list((root / "out" / "feedback").iterdir())  # no reply asking for it
    doc = json.loads(run("collect", str(root), "--json").stdout)
    (row,) = [r for r in doc["raters"] if r["rater_id"] == "EV-01"]
    assert row["state"] != "errors" and row["errors"] == 0, row

    status = run("status", str(root))
    assert status.exit_code == 1, status.output
    lines = status.stdout.splitlines()
    assert not any(a in status.stdout for a in ASKED), status.stdout
    at = next(i for i, ln in enumerate(lines) if ln.startswith(f"{cut}: This file could"))
    assert lines[at + 1].startswith(f"  error: {cut}: [corrupt-file]")
    assert lines[-1] == ("3 of 3 packs returned; 1 file left out beside its rater's "
                         "return used (remove it from returns/)")
    (root / L.RETURNS_DIR / cut).unlink()  # what the line says to do
    assert run("collect", str(root)).exit_code == 0


def _stripped(base, tmp_path) -> Path:
    """EV-01's workbook with its identity taken out, under a name no pack has, then the
    good one, both fetched from EV-01's address: read, but whose it is cannot be told."""
    import io

    import openpyxl

    from sheetflow.workbook import layout as L

    root = tmp_path / "s"
    shutil.copytree(base[0], root)
    wb = openpyxl.load_workbook(io.BytesIO(base[1]))
    for key in L.IDENTITY_KEYS:
        del wb.defined_names[L.identity_name(key)]
    wb.custom_doc_props.props = []
    del wb[L.IDENTITY_SHEET]
    stripped = io.BytesIO()
    wb.save(stripped)
    return _fetched_from_ev01(root, tmp_path, [("my-scores.xlsx", stripped.getvalue()),
                                               (base[2], base[1])])


def test_a_file_without_identity_beside_the_good_one_is_not_called_unreadable(base,
                                                                               tmp_path):
    """Its line said "could not be read, left out": it was read; it carries no identity."""
    root = _stripped(base, tmp_path)
    result = run("collect", str(root))
    assert result.exit_code == 1, result.output
    (line,) = [ln for ln in result.stdout.splitlines()
               if ln.split(": ")[0].endswith("-my-scores.xlsx")]  # fetch dates the name
    assert line.endswith(": it carries no identity, left out, 1 error, 1 warning, "
                         "NOT USED"), line
    assert "could not be read" not in line
    assert "[unusable-beside-used] This file could not be read or identified (it carries " \
        "no identity; it came from ev01@example.org, rater EV-01's address)" in result.stdout
    status = run("status", str(root))
    assert status.exit_code == 1, status.output
    assert "my-scores.xlsx: This file could not be read or identified (it carries no " \
        "identity;" in status.stdout
