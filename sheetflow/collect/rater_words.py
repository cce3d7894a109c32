"""Which issues a rater's reply lists, and in what words (:mod:`.replies` writes them).

The Issues sheet is the coordinator's: every issue stays there in the coordinator's
words. A reply goes to one rater and asks only for what that rater can do to their
own file, in words addressed to them. The rule, per code:

- **every error** is listed: the file's answers are not used until it is fixed, so the
  rater must see it (a reply about several files is composed only for the rater's own);
- **warnings the rater can act on in their file** are listed under "Please also check":
  a blank confidence or batch time, a time that is no date, batch times out of order or
  too close, a text answer outside its word range, content typed outside the answer
  cells, an added sheet, a comment on a cell, a text box or shape holding text, text
  in a document property, a header or footer or a part no sheet shows
  (:data:`RATER_WARNINGS`). Batches that
  overlap, or a second sitting begun too soon, are put to the rater as a time to check
  for a typing slip and to leave as it is when it is right: a rater told the gap the
  protocol wants must not be nudged to change a true time (reporting the deviation is
  the coordinator's, on the Issues sheet);
- **every other warning stays off the reply** (:func:`in_reply`):

  * the protocol's self-checks across a rater's answers (``totals-no-variance``,
    ``totals-many-extreme``, ``confidence-low-share``, ``direction-all-same``,
    ``direction-inconsistent``, ``verdict-off-band``): a rater told a target share or
    that their directions look odd is nudged to change ratings to pass the check, which
    biases the study; a rater whose file has no error would get no reply at all, so
    quoting them also reaches raters unequally. The coordinator reads them and decides;
  * how a value was read ("was read as": ``label-normalised``,
    ``number-stored-as-text``): the answer is used as the rater meant it, nothing to do;
  * what only the coordinator acts on: the sender, the file's name, copies and earlier
    files, other raters' files, a sheet renamed, hidden or deleted, rows found by their
    hidden ids, the mail journal.

An issue whose coordinator's message speaks of the rater in the third person, names
the tool, or asks the coordinator to do something, has a text for the rater here
(:func:`reply_text`): an error about the hidden row ids (``rows-not-this-rater``,
``rows-unproven``) asks for the rater's own workbook, filled in afresh; any other issue
is quoted as the Issues sheet words it.
Nothing here writes or prints.
"""

from __future__ import annotations

from typing import Protocol

from ..workbook import layout as L

SELF_CHECKS = frozenset({"totals-no-variance", "totals-many-extreme", "confidence-low-share",
                         "direction-all-same", "direction-inconsistent", "verdict-off-band"})
"""The protocol's self-checks: for the coordinator's judgement, never quoted to a rater."""

RATER_WARNINGS = frozenset({
    "text-word-count", "batch-time-missing", "batch-time-invalid",
    "batch-time-no-date", "batch-time-order", "batch-time-zero", "batch-time-overlap",
    "sitting-too-soon", "text-outside-answers", "sent-text-changed", "cell-comment",
    "drawing-text",
    "sheet-added", "content-outside-window", "property-text", "header-footer-text",
    "extra-part"})
"""Warnings a reply lists: something in the rater's own file they can put right."""


class Quoted(Protocol):
    """What a reply needs of an :class:`~.validate.Issue`."""

    code: str
    severity: str
    message: str
    sheet: str
    cell: str
    label: str
    value: str


def in_reply(item: Quoted) -> bool:
    """Whether a rater's reply lists ``item`` (see the module notes for the rule)."""
    return item.severity == "error" or item.code in RATER_WARNINGS


# a cell holding something that acts when the file is opened: the rater's file is not
# used, and they are asked for a clean one (the coordinator's text tells the
# coordinator not to open the file and names the tool)
_CLEAN_COPY = ("so your answers in this file cannot be used. Please fill in a fresh copy "
               "of the workbook (attached), typing only in the answer cells and pasting "
               "nothing from other files, and send that file.")
_SEND_AGAIN = ("so it could not be read. Please send your workbook again, as you received "
               "it and saved from Excel or LibreOffice, filled in.")
_COPY_OVER = "Please copy your answers into the workbook attached and send that one."
_OUTSIDE = ("we read only the answer cells: if it was meant for us, put it in a notes "
            "answer cell if the workbook has one, or write it in your reply to this e-mail.")

_FIXED = {
    "zip-bomb": "The file holds parts far larger than a scoring workbook, " + _SEND_AGAIN,
    "xml-dtd": "The file holds something Excel never writes (XML entities), " + _SEND_AGAIN,
    "formula-hidden": "The file holds a formula where Excel and LibreOffice never put one, "
                      + _SEND_AGAIN,
    "file-too-large": "The file is far larger than a scoring workbook can be, " + _SEND_AGAIN,
    "attachment-too-large": "The attachment is far larger than a scoring workbook can be, "
                            + _SEND_AGAIN,
    "read-aborted": "The file holds far more than a scoring workbook, " + _SEND_AGAIN,
    "mail-unreadable": "Your message could not be read here. Please send your workbook "
                      "again, attached to a new message.",
    # the same file would be refused again: its answers go into the workbook attached
    "identity-missing": "This workbook is not the one you received (it carries none of "
                        "its hidden details), so it cannot be matched to you. " + _COPY_OVER,
    # their details name packs, maybe another rater's: none is quoted
    "identity-conflict": "The hidden part of this workbook that says whose it is was "
                         "changed, so it cannot be matched to you. " + _COPY_OVER,
    "identity-mismatch": "The hidden part of this workbook that says whose it is does not "
                         "match the workbook sent to you, so it cannot be matched to you. "
                         + _COPY_OVER,
    "schema-unsupported": "This workbook is of a layout this study cannot read. I will send "
                          "you a workbook that can be read; please wait for it.",
    "unknown-rater": "This workbook is not one of this study's. Please check that you sent "
                     "the workbook you received from me.",
    # a pack's own mark edited reads the same as another version's: both are said
    "spec-hash-mismatch": "The hidden part of this workbook that says which version of the "
                          "study it is was changed, or the workbook is from an earlier "
                          "version of the study. " + _COPY_OVER,
    "formula-reaches-out": "{where} holds a formula that fetches or sends data, or starts a "
                           "program, when the file is opened in Excel, " + _CLEAN_COPY,
    "external-reference": "{where} refers to another file or a web address, which Excel may "
                          "open or fetch from, " + _CLEAN_COPY,
    "data-connection": "The file holds a data connection or query, which fetches or sends "
                       "data when it is refreshed, " + _CLEAN_COPY,
    "embedded-object": "The file holds an embedded object, which starts another program "
                       "when it is opened, " + _CLEAN_COPY,
    "activex-control": "The file holds an ActiveX control, which Excel can run when it "
                       "opens the file, " + _CLEAN_COPY,
    "row-unknown": "{where} is a row that was not in the workbook as sent. Please delete "
                   "that row (do not insert rows).",
    "sheet-added": "You added the sheet '{sheet}', which holds text; " + _OUTSIDE,
    "consent-refused-elsewhere": "Your answer to the consent question, in your other "
                                 "workbook, does not give your consent, so the marks in "
                                 "this one cannot be used either. If you meant to give "
                                 "your consent, please change that answer in the other "
                                 "workbook and send it back.",
    "consent-refused": "Your answer to the consent question in {where} is {value}, so none of "
                       "your marks can be used, and none will be. If that is what you "
                       "meant, there is nothing more to do, and thank you for your time. If "
                       "you meant to give your consent, please change that answer and send "
                       "the file back.",
    # the coordinator's text says where to put the workbook unzipped: the rater sends it
    "zipped-workbook": "This file is a zip archive (a compressed file), which is not read "
                       "here. Please attach the workbook itself, not zipped.",
    "file-unreadable": "Your file arrived but could not be opened here. Please send it "
                       "once more.",
    # the coordinator's text quotes the zip or XML reader's own error, which tells the
    # rater nothing they can act on: they learn what happened and what to do
    "corrupt-file": "The file arrived damaged or incomplete (it may have been cut off on "
                    "the way), so it could not be opened here. Please check that your "
                    "workbook opens in Excel or LibreOffice, and attach it again.",
    "unreadable-workbook": "The file is a workbook, but it could not be read here. Please "
                           "open it in Excel or LibreOffice, save it again as an Excel "
                           "workbook (.xlsx), and send that file.",
}


# a time the protocol would not have: the rater checks it for a typing slip, and is
# told in as many words to leave a true time alone
_TIME_AS_IS = ("If a time was typed wrong, please correct it; if the times are right, "
               "leave them as they are.")
_TIMES = {
    "sitting-too-soon": "; the study asks for at least 24 hours between the two sittings. ",
    "batch-time-overlap": "; the batches are meant to be scored one at a time, with a "
                          "break between. ",
}

_OWN_ROWS = {
    "rows-not-this-rater": "The rows of the sheet '{sheet}' are not those of the workbook "
                           "sent to you (their hidden row ids were changed, or the rows "
                           "were copied from another workbook), so your answers in this "
                           "file cannot be used. ",
    # another file sent as theirs proves the pack and is used: this one is asked for
    # only if it holds the answers they meant to send
    "rows-unproven": "This workbook says it is yours, but none of its rows carries the "
                     "hidden ids of the workbook sent to you (its answer sheet or those ids "
                     "were removed), while another file sent as yours does: that file is "
                     "the one used, not this one. If this one holds the answers you meant "
                     "to send, ",
}
_OWN_COPY = ("Please fill in a fresh copy of your workbook (attached), changing only the "
             "answer cells, and send that file.")


def _drawn(item: Quoted) -> str:
    """A text box or shape holding text: its text quoted, or the line counting the
    rest, or that it could not be read (neither has a value of its own)."""
    at = f"at cell {item.cell} of the sheet '{item.sheet}'" if item.cell else \
        f"on the sheet '{item.sheet}'"
    if item.value:
        return f"Your workbook has a text box or shape {at} that says '{item.value}'"
    if item.sheet:
        return f"Your workbook has more text boxes or shapes holding text, from the one {at} on"
    return "Your workbook has text boxes or shapes whose text could not be read here"


def _outside(item: Quoted, where: str) -> str:
    """Text typed outside the answer cells, a comment, or a text box: one quoted, or
    the line counting the rest (no value of its own)."""
    if item.code == "drawing-text":
        said = _drawn(item)
    elif item.code == "cell-comment":
        said = f"Cell {item.cell} has a comment: '{item.value}'" if item.value else \
            f"There are comments on cells of the file ({where} and after)" if item.cell \
            else "There are comments on cells of the file"
    elif item.value:
        said = f"You typed '{item.value}' in {where}, outside the answer cells"
    else:
        said = (f"There is more text outside the answer cells, from {where} on" if item.cell
                else f"There is text outside the answer cells of the sheet '{item.sheet}'")
    return f"{said}; {_OUTSIDE}"


def _changed(item: Quoted) -> str:
    """A cell of the workbook as sent (not an answer cell) changed: one, or the line
    counting the rest, or a sheet whose cells could not be named."""
    if not item.cell:
        said = f"Cells of the sheet '{item.sheet}' that are not answer cells were changed"
    elif item.message.startswith("From "):
        said = f"More cells that are not answer cells were changed, from cell {item.cell} on"
    elif item.sheet == L.IDENTITY_SHEET:
        said = f"The hidden sheet '{L.IDENTITY_SHEET}' of your workbook was changed"
    else:
        now = f": it now holds '{item.value}'" if item.value else ": it is now empty"
        said = (f"Cell {item.cell} of the sheet '{item.sheet}' is not an answer cell, and it "
                f"was changed{now}")
    return f"{said}; {_OUTSIDE}"


# text outside every sheet's cells (:mod:`.part_text`): one quoted, or the line
# counting the rest or saying it could not be read (no value of its own)
_OUT_OF_CELLS = {
    "property-text": ("The document property {label} of your workbook (File > Properties) "
                      "says '{value}'", "There is text in the document properties of "
                      "your workbook (File > Properties)"),
    "header-footer-text": ("The {label} of the sheet '{sheet}' of your workbook (Page "
                           "Setup) says '{value}'", "There is text in the headers or "
                           "footers of your workbook (Page Setup)"),
    "extra-part": ("Your workbook file holds text no sheet shows (in its part {label}): "
                   "'{value}'", "Your workbook file holds text no sheet shows"),
}


def _out_of_cells(item: Quoted) -> str:
    """Text in a document property, a header or footer, or a part no sheet shows."""
    one, some = _OUT_OF_CELLS[item.code]
    said = one.format(label=item.label, sheet=item.sheet, value=item.value) \
        if item.value else some
    return f"{said}; {_OUTSIDE}"


def reply_text(item: Quoted) -> str:
    """``item`` in words addressed to the rater: :data:`_FIXED`'s text for its code,
    else the message the Issues sheet shows."""
    where = f"cell {item.cell}" if item.cell else "the file"
    if item.code in ("text-outside-answers", "cell-comment", "drawing-text"):
        return _outside(item, where)
    if item.code in _OUT_OF_CELLS:
        return _out_of_cells(item)
    if item.code == "sent-text-changed":
        return _changed(item)
    if item.code in _TIMES:
        # the message opens with the times compared, in sheetflow's words, up to the
        # first "; " (the coordinator's advice follows)
        return item.message.split("; ", 1)[0] + _TIMES[item.code] + _TIME_AS_IS
    if item.code in _OWN_ROWS:
        text = _OWN_ROWS[item.code].format(sheet=item.sheet)
        return text + (_OWN_COPY[0].lower() + _OWN_COPY[1:] if text.endswith(", ")
                       else _OWN_COPY)
    template = _FIXED.get(item.code)
    if template is None:
        return item.message
    text = template.format(where=where, sheet=item.sheet, value=f"'{item.value}'")
    return text[0].upper() + text[1:]
