"""parse_value: every kind, and the text/number/date/formula distinctions."""

from __future__ import annotations

import datetime as dt

import pytest

from sheetflow.collect.content_checks import check_batch_times
from sheetflow.collect.values import Formula, parse_confidence, parse_time, parse_value
from sheetflow.spec.rubric import Bin, Dimension

LIKERT = Dimension("q", "Q", "scale", minimum=1, maximum=5, na_choices=("N/A",),
                   choices=("N/A",))
COUNT = Dimension("c", "C", "count", minimum=0, maximum=None,
                  bins=(Bin(0, 1, 0), Bin(2, None, 2)))
CAT = Dimension("k", "K", "categorical", choices=("Correct", "Partial", "Incorrect"))
CHECK = Dimension("e", "E", "checklist", questions=("a?",))
TEXT = Dimension("t", "T", "text", required=False)
HOURS = Dimension("h", "H", "number", minimum=0, maximum=40, decimals=2)


@pytest.mark.parametrize("dim,raw,value,code", [
    (LIKERT, 5.0, 5, None),
    (LIKERT, 3.0000000000000004, 3, None),  # 17 digits stored, 3 shown
    (LIKERT, 2.9999999999999996, 3, None),
    (LIKERT, 3.00000000001, None, "value-not-whole"),  # shown as 3.00000000001
    (LIKERT, "5", 5, "number-stored-as-text"),
    (LIKERT, "5 ", 5, "number-stored-as-text"),
    (LIKERT, "5.0", 5, "number-stored-as-text"),
    (LIKERT, "５", 5, "number-stored-as-text"),
    (LIKERT, "\uff14\uff0e\uff10", 4, "number-stored-as-text"),  # full-width "4.0"
    (HOURS, "\uff11\uff12.\uff15", 12.5, "number-stored-as-text"),
    (LIKERT, " five", None, "value-not-a-number"),
    (LIKERT, " 4", None, "number-after-space"),
    (LIKERT, "\u00a04", None, "number-after-space"),
    (LIKERT, "3,0", None, "value-not-a-number"),
    (LIKERT, 5.5, None, "value-not-whole"),
    (LIKERT, 6, None, "value-out-of-domain"),
    (LIKERT, "N/A", "N/A", None),
    (LIKERT, "n/a", "N/A", "label-normalised"),
    (LIKERT, dt.datetime(2026, 1, 5), None, "date-in-answer"),
    (LIKERT, True, None, "bool-in-answer"),
    (LIKERT, Formula("1+1"), None, "formula-in-answer"),
    (LIKERT, None, None, None),
    (COUNT, 250, 250, None),
    (COUNT, -1, None, "value-out-of-domain"),
    (CAT, "Correct", "Correct", None),
    (CAT, "partial ", "Partial", "label-normalised"),
    (CAT, "Wrong", None, "value-out-of-domain"),
    (CHECK, "Yes", "Yes", None),
    (CHECK, "Maybe", None, "value-out-of-domain"),
    (TEXT, "Évaluation 🙂", "Évaluation 🙂", None),
    # only control characters: blank, as the pack's CLEAN reads it (not a text of "\x07")
    (TEXT, "\x07", None, None),
    (TEXT, "\x01\x1f \x07\t", None, None),
    (CAT, "\x07", None, None),
    (TEXT, "\x7f\x9f", None, None),  # DEL and a C1 control: LibreOffice's CLEAN drops them
    (LIKERT, "3\x07", None, "value-not-a-number"),  # red in the pack too
    (TEXT, 42.0, "42", None),
    (HOURS, 12.25, 12.25, None),
    (HOURS, 0.30000000000000004, 0.3, None),  # 17 digits stored, 0.3 shown
    (HOURS, "12.250000000000001", 12.25, "number-stored-as-text"),
    (HOURS, 3.14159, None, "too-many-decimals"),
    (HOURS, "3.14159", None, "too-many-decimals"),
    (HOURS, 12.2500000001, None, "too-many-decimals"),  # shown so: the pack marks it red
    (HOURS, 40.5, None, "value-out-of-domain"),
])
def test_parse_value(dim, raw, value, code):
    parsed = parse_value(dim, raw)
    assert (parsed.value, parsed.code) == (value, code)


def test_confidence():
    assert parse_confidence("High").value == "High"
    assert parse_confidence("high").code == "label-normalised"
    assert parse_confidence("Very").code == "value-out-of-domain"


@pytest.mark.parametrize("raw,value,code", [
    (None, None, None),
    ("  ", None, None),
    (dt.time(14, 5), dt.time(14, 5), None),
    (dt.datetime(2026, 1, 5, 14, 5), dt.datetime(2026, 1, 5, 14, 5), None),
    (0.5, dt.time(12, 0), None),
    (dt.timedelta(hours=9, minutes=30), dt.time(9, 30), None),
    ("9:05", dt.time(9, 5), None),
    ("14:05:30 ", dt.time(14, 5, 30), None),
    ("１４:０５", dt.time(14, 5), None),
    ("２０２６-１１-０２\u3000１４：０５", dt.datetime(2026, 11, 2, 14, 5), None),
    # other digit forms are no time, as for a number (the pack hints at them)
    ("2026-11-0② 14:05", None, "batch-time-invalid"),
    ("⑭:05", None, "batch-time-invalid"),
    ("14:0⁵", None, "batch-time-invalid"),
    ("25:00", None, "batch-time-invalid"),
    ("after lunch", None, "batch-time-invalid"),
    (1.5, None, "batch-time-invalid"),
    (46328.5, dt.datetime(2026, 11, 2, 12, 0), None),  # a date-time serial, format lost
    ("2026-11-02 14:05", dt.datetime(2026, 11, 2, 14, 5), None),
    ("2026-11-02T14:05:30", dt.datetime(2026, 11, 2, 14, 5, 30), None),
    ("2026-02-30 14:05", None, "batch-time-invalid"),
    ("2026-11-02", None, "batch-time-invalid"),  # a date alone: the time is needed too
    (True, None, "batch-time-invalid"),
    (Formula("NOW()"), None, "batch-time-invalid"),
])
def test_parse_time(raw, value, code):
    parsed = parse_time(raw)
    assert (parsed.value, parsed.code) == (value, code)


def test_batch_times():
    codes = [(f.code, f.part) for f in check_batch_times(3, dt.time(9), dt.time(8))]
    assert codes == [("batch-time-no-date", "start"), ("batch-time-no-date", "end"),
                     ("batch-time-order", "end")]
    assert [(f.code, f.part) for f in check_batch_times(3, None, "x")] == [
        ("batch-time-missing", "start"), ("batch-time-invalid", "end")]
    assert check_batch_times(1, dt.datetime(2026, 1, 5, 23), dt.datetime(2026, 1, 6, 1)) == []
    assert [f.code for f in check_batch_times(1, dt.time(9), dt.datetime(2026, 1, 5, 10))] \
        == ["batch-time-no-date"]


PREF = Dimension("d", "D", "preference", choices=("A>B", "B>A", "Tied"))
KIND = Dimension("r", "R", "categorical", choices=("Appropriate", "Over-refusal",
                                                    "Under-refusal"))
FLAG = Dimension("g", "G", "flag", choices=("Y",), required=False)
ALIKE = Dimension("s", "S", "categorical", choices=("A-B", "A B", "C"))
NEAR = Dimension("n", "N", "categorical", choices=("A", "N", "B"))


@pytest.mark.parametrize("dim,raw,value,code", [
    (PREF, "A > B", "A>B", "label-normalised"),  # as the paired protocol writes it
    (PREF, " b >a", "B>A", "label-normalised"),
    (PREF, "AB", None, "value-out-of-domain"),
    (KIND, "Over refusal", "Over-refusal", "label-normalised"),
    (KIND, "under_refusal", "Under-refusal", "label-normalised"),
    (FLAG, "yes", "Y", "label-normalised"),
    (FLAG, "YES ", "Y", "label-normalised"),
    (FLAG, "no", None, "value-out-of-domain"),  # not a mark: never read as one
    (CHECK, "y", "Yes", "label-normalised"),
    (CHECK, "n", "No", "label-normalised"),
    (ALIKE, "a_b", None, "value-out-of-domain"),  # A-B or A B: refused, never a guess
    (ALIKE, "A  B", "A B", "label-normalised"),  # spaces alone still tell them apart
    (ALIKE, "c", "C", "label-normalised"),
    (NEAR, "no", None, "value-out-of-domain"),  # N is not a yes/no answer here
])
def test_a_label_typed_with_other_spacing_hyphens_or_yes_no_words(dim, raw, value, code):
    """Plain typed variants that can mean one label only are that label, with a note;
    two labels that would read the same are refused in the loose reading."""
    parsed = parse_value(dim, raw)
    assert (parsed.value, parsed.code) == (value, code)


def test_the_pack_reads_a_label_as_collect_does():
    """The pack's red test looks the cell up among the same keys collect accepts."""
    from sheetflow.packs.rules import invalid_formula

    pref = invalid_formula({"type": "list", "choices": list(PREF.choices)}, "D17")
    assert '{"a>b","b>a","tied"}' in pref and 'SUBSTITUTE(' in pref and '"-",""' in pref
    flag = invalid_formula({"type": "list", "choices": ["Y"]}, "D17")
    assert '{"y","yes"}' in flag
    alike = invalid_formula({"type": "list", "choices": list(ALIKE.choices)}, "D17")
    assert '{"c"}' in alike and '{"A-B","A B"}' in alike


def test_a_serial_batch_time_of_a_1904_workbook_counts_from_1904():
    """A date-time whose format was lost is a bare serial; in a workbook that counts
    dates from 1904 the same moment is 1,462 days smaller."""
    moment = dt.datetime(2026, 11, 2, 9, 0)
    assert parse_time(46328.375).value == moment
    assert parse_time(46328.375 - 1462, date1904=True).value == moment
    assert check_batch_times(1, 44866.375, 44866.5, date1904=True) == []


def test_the_reader_sees_the_1904_date_system():
    from sheetflow.collect.reader import _workbook_part

    def date1904(xml: str) -> bool:
        return _workbook_part(xml.encode())[2]

    main = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
    assert date1904(f'<workbook xmlns="{main}"><workbookPr date1904="1"/></workbook>')
    assert not date1904(f'<workbook xmlns="{main}"><workbookPr/></workbook>')


def test_the_pack_reads_full_width_letters_only_for_ascii_labels():
    """ASC reads Ｙｅｓ as Yes, as collect does; it would also make a katakana label's
    full-width letters half-width, so a label of them is compared as typed."""
    from sheetflow.packs.rules import invalid_formula

    assert "ASC(D17)" in invalid_formula({"type": "list", "choices": ["Yes", "No"]}, "D17")
    katakana = invalid_formula({"type": "list", "choices": ["\u30a4\u30a8\u30b9", "No"]}, "D17")
    assert "ASC(" not in katakana


@pytest.mark.parametrize("raw,value,code", [
    ("\uff13", 3, "number-stored-as-text"),  # full-width: ASC reads it, so does collect
    ("\uff0b\uff12", 2, "number-stored-as-text"),
    ("3\t", 3, "number-stored-as-text"),
    ("3\r\n", 3, "number-stored-as-text"),
    ("\u2462", None, "value-not-a-number"),  # circled, superscript, mathematical,
    ("\u00b3", None, "value-not-a-number"),  # subscript digits: red in the pack
    ("\U0001d7d1", None, "value-not-a-number"),
    ("\u2082", None, "value-not-a-number"),
    ("3\u3000", None, "value-not-a-number"),  # spaces the pack does not trim
    ("3\u2003", None, "value-not-a-number"),
    ("3\u2028", None, "value-not-a-number"),
    ("3\x0b", None, "value-not-a-number"),
    ("3\u200b", None, "value-not-a-number"),  # red in the pack, which keeps it
])
def test_a_number_as_text_is_read_only_as_the_pack_reads_it(raw, value, code):
    parsed = parse_value(LIKERT, raw)
    assert (parsed.value, parsed.code) == (value, code)


@pytest.mark.parametrize("raw,blank", [
    ("\u3000", True), ("\u200b \u00a0", True), ("\x07\x1f\x7f\x9f", True),
    ("\u2028", False), ("\u2029", False), ("\u2003", False), ("\u00ad", False),
])
def test_blank_is_the_packs_blank(raw, blank):
    """Only what the pack's blank test removes (spaces, ideographic and zero-width
    spaces, control characters) makes a cell blank: a line separator is filled there."""
    assert parse_value(TEXT, raw).blank is blank


@pytest.mark.parametrize("raw", ["High\u3000", "High\u2003", "High\u2028", "\u3000High"])
def test_a_label_with_a_space_the_pack_does_not_read_as_one_is_refused(raw):
    conf = Dimension("c", "C", "categorical", choices=("Low", "Medium", "High"))
    assert parse_value(conf, raw).code == "value-out-of-domain"


def test_a_text_answer_loses_its_control_characters_and_says_so():
    parsed = parse_value(TEXT, "A\x00B\x07C\x1c\x7f\x85 line\x0bnext\tcol\r\nend")
    assert parsed.value == "ABC line\nnext\tcol\r\nend"
    assert parsed.code == "text-control-characters"
    kept = parse_value(TEXT, "plain\ttext\r\nkept")
    assert (kept.value, kept.code) == ("plain\ttext\r\nkept", None)
