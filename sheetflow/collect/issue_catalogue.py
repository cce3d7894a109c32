"""The catalogue of issue codes: each code's severity, meaning and message template.

Every problem the collector finds is an :class:`~sheetflow.collect.validate.Issue`
with a code from :data:`CATALOGUE`; README.md and docs/issue-codes.md list the same
codes, severities and meanings (a test compares them).
"""

from __future__ import annotations

from dataclasses import dataclass

ERROR, WARNING = "error", "warning"


@dataclass(frozen=True)
class IssueType:
    """One entry of the catalogue: code, severity, meaning and message template."""

    code: str
    severity: str
    meaning: str
    template: str


def _t(code: str, severity: str, meaning: str, template: str) -> IssueType:
    return IssueType(code, severity, meaning, template)


LIBREOFFICE_XLSX = "Excel 2007\u2013365 (.xlsx)"
"""The .xlsx file type as LibreOffice Calc's Save As dialog lists it (an en dash)."""

# how to save a workbook .xlsx can be saved from in either program (a .xls or a Strict
# Open XML file may come from Excel or from LibreOffice Calc, whose Save As names the
# type otherwise): both menus are named
_SAVE_AS_XLSX = ("Open it and save it as .xlsx: in Excel, File > Save As > Excel Workbook "
                 "(.xlsx); in LibreOffice Calc, File > Save As, file type "
                 f"'{LIBREOFFICE_XLSX}'. Then send that file.")

# what to do about a returned file carrying something that acts when opened in Excel
# (the same words serve the coordinator and the reply drafted to the rater)
_CLEAN_COPY = (" Its ratings are not used. Do not open this file in Excel or LibreOffice: "
               "a clean copy is needed (the workbook as it was sent, with only the answer "
               "cells filled in and nothing pasted from other files).")

# what a warning of :data:`UNREAD_TEXT` adds to its meaning: it changes the exit code
_UNREAD_EXIT = ("; the ratings are used, but collect and status exit 1 while a return used "
                "holds it, until the coordinator marks the file read (collect --mark-read).")

# what a warning of :data:`SENDER_CHECK` adds to its meaning: it changes the exit code
_SENDER_EXIT = ("; the ratings are used, but collect and status exit 1 while a return used "
                "came so, until the coordinator has checked who sent it and marks the file "
                "read (collect --mark-read).")

_TYPES = (
    # -- the file as a whole (checked before any parser) -----------------------------------
    _t("file-unreadable", ERROR, "The file could not be opened for reading.",
       "The file could not be read ({detail}). Make sure the account running sheetflow "
       "can read it (permissions, a synced folder not yet downloaded), then run '{collect}' "
       "again."),
    _t("symlink-outside-study", ERROR, "A link to a file outside the study folder.",
       "This is a link to {detail}, outside the study folder; it was not followed. Copy "
       "the returned workbook itself into the returns folder."),
    _t("not-a-file", WARNING, "A folder, pipe, device or broken link; it was not read.",
       "This entry is a {detail}, not a workbook file; it was not read. Move returned "
       "workbooks into the returns folder itself."),
    _t("file-changed-while-collecting", ERROR,
       "The file changed between being listed and being read.",
       "The file changed while collect was reading it ({detail}); its ratings were not "
       "used. Leave the returns folder alone while collect runs, then run '{collect}' again."),
    _t("empty-file", ERROR, "The file has 0 bytes.",
       "The file is empty (0 bytes). Please attach the saved workbook again."),
    _t("file-too-large", ERROR, "The file is larger than the collector accepts.",
       "The file is {detail}, more than a rating workbook can be. Send the original "
       "workbook you received, filled in; tell the coordinator if it really is that big."),
    _t("encrypted-workbook", ERROR, "An Excel file encrypted with an opening password.",
       "The workbook is protected with an opening password. Remove it (Excel: File > Info > "
       "Protect Workbook > Encrypt with Password, clear the box) and send it again."),
    _t("legacy-xls", ERROR, "An old Excel 97-2003 (.xls) or other OLE file.",
       "This is an old Excel 97-2003 (.xls) file. " + _SAVE_AS_XLSX),
    _t("ods-file", ERROR, "An OpenDocument spreadsheet (.ods), not .xlsx.",
       "This is an OpenDocument spreadsheet (.ods). In LibreOffice use File > Save As and "
       f"choose '{LIBREOFFICE_XLSX}', then send that file."),
    _t("not-a-workbook", ERROR, "Not an Excel workbook at all (CSV, HTML, text, other).",
       "This file is not an Excel workbook ({detail}){name_says}. Please send the .xlsx "
       "workbook you received, filled in."),
    _t("zipped-workbook", ERROR, "A zip archive holding an .xlsx workbook (what is "
       "inside is not read).",
       "This file is a zip archive holding {detail}: unzip it and put the workbook itself "
       "in the returns folder (sheetflow does not read inside a zip archive)."),
    _t("corrupt-file", ERROR, "A damaged or truncated .xlsx (broken zip).",
       "The file is damaged or incomplete ({detail}); it may have been cut off in "
       "transfer. Please attach it again."),
    _t("macro-workbook", ERROR, "A macro-enabled workbook (.xlsm, a VBA project, or "
       "Excel 4.0 macro sheets).",
       "The workbook contains macros. Save it as a normal Excel Workbook (.xlsx) and "
       "send that file."),
    _t("zip-bomb", ERROR, "Parts that expand far beyond a rating workbook (zip bomb).",
       "Refused for safety: {detail}. Ask the rater to send the original workbook again, "
       "and tell the coordinator."),
    _t("xml-dtd", ERROR, "An XML part declares a DTD or entities (entity expansion).",
       "Refused for safety: {detail} declares XML entities, which Excel never writes. Ask "
       "the rater to send the original workbook again, and tell the coordinator."),
    _t("formula-hidden", ERROR, "A formula written where no spreadsheet program puts one.",
       "Refused: on {detail} a formula is written where Excel and LibreOffice never put "
       "one (after an XML comment or after the cell's value), so what the cell shows "
       "cannot be known. Ask the rater to send the workbook again, saved from Excel or "
       "LibreOffice, and tell the coordinator."),
    _t("strict-ooxml", ERROR, "A workbook saved as Strict Open XML, which sheetflow does not read.",
       "The workbook was saved as 'Strict Open XML Spreadsheet'. " + _SAVE_AS_XLSX),
    _t("unreadable-workbook", ERROR, "The workbook could not be parsed.",
       "The workbook could not be read ({detail}). Open it in Excel or LibreOffice, save "
       "it again as .xlsx, and send it."),
    _t("read-aborted", ERROR, "Reading stopped at the memory or time limit.",
       "Reading this workbook was stopped ({detail}). It holds far more than a rating "
       "workbook; send the original workbook again, filled in."),
    _t("content-outside-window", WARNING,
       "Cells far outside the scoring area; they were ignored" + _UNREAD_EXIT,
       "The sheet has content outside the scoring area ({detail}); it was ignored. Delete "
       "it if it was typed by mistake."),
    _t("text-outside-answers", WARNING,
       "Text where the workbook as sent had none, outside the answer cells (a note?); "
       "sheetflow does not read it" + _UNREAD_EXIT,
       "{what}. sheetflow reads only the answer cells: read it in the file, it may be a "
       "note from the rater (answers belong in the yellow cells)."),
    _t("sent-text-changed", WARNING,
       "A cell outside the answer cells no longer holds what the workbook as sent had "
       "there (the study's text typed over or deleted, a formula replaced by a value, a "
       "row of the hidden row table edited); sheetflow does not read it" + _UNREAD_EXIT,
       "{what}. sheetflow reads only the answer cells: read it in the file, it may be a "
       "note from the rater (answers belong in the yellow cells)."),
    _t("cell-comment", WARNING, "A comment (note) on a cell; sheetflow does not read it"
       + _UNREAD_EXIT,
       "{what}. sheetflow reads only the cells' values: read it in the file, it may "
       "explain a score (a remark meant for the study belongs in a notes cell)."),
    _t("drawing-text", WARNING, "Text in a text box or shape drawn on a sheet; sheetflow "
       "does not read it" + _UNREAD_EXIT,
       "{what}. sheetflow reads only the cells' values: read it in the file, it may "
       "explain a score (a remark meant for the study belongs in a notes cell)."),
    _t("property-text", WARNING, "Text in a document property (File > Properties) the "
       "workbook as sent did not hold; sheetflow does not read it" + _UNREAD_EXIT,
       "{what}. sheetflow reads only the cells' values: read it in the file, it may "
       "explain a score (a remark meant for the study belongs in a notes cell)."),
    _t("header-footer-text", WARNING, "Text in a page header or footer of a sheet (Page "
       "Setup); sheetflow does not read it" + _UNREAD_EXIT,
       "{what}. sheetflow reads only the cells' values: read it in the file, it may "
       "explain a score (a remark meant for the study belongs in a notes cell)."),
    _t("extra-part", WARNING, "Text in a part of the workbook file no sheet shows "
       "(customXml/); sheetflow does not read it" + _UNREAD_EXIT,
       "{what}. sheetflow reads only the cells' values: read it (the workbook file is a "
       "zip archive holding that part); it may be a note, or data a program added."),
    # -- what would act if the returned file were opened in Excel (see .hazards) ----------
    _t("formula-reaches-out", ERROR, "A formula that fetches or sends data, or calls a "
       "program (WEBSERVICE, FILTERXML, IMAGE, HYPERLINK, RTD, CALL, REGISTER, DDE).",
       "{what} holds a formula that {detail}: {value}. sheetflow never calculates a "
       "returned file's formulas, but Excel does when it opens the file." + _CLEAN_COPY),
    _t("external-reference", ERROR, "A link to another workbook, file or web address "
       "(a formula or name referring to another workbook, an xl/externalLinks part, a "
       "linked picture or object).",
       "{what} refers to something outside this workbook: {value}. Excel may follow "
       "the link when it opens the file, and fetch from there. sheetflow never follows "
       "it." + _CLEAN_COPY),
    _t("data-connection", ERROR, "A data connection or query (xl/connections.xml, a "
       "query table, a data model), which fetches or sends data when refreshed.",
       "{what} is a data connection or query, which fetches or sends data when it is "
       "refreshed, as Excel may do on opening the file. sheetflow never refreshes it."
       + _CLEAN_COPY),
    _t("embedded-object", ERROR, "An embedded object or package (xl/embeddings), which "
       "can start a program when opened.",
       "{what} is an embedded object, which starts another program, or runs what it "
       "holds, when it is opened in Excel. sheetflow never opens it." + _CLEAN_COPY),
    _t("activex-control", ERROR, "An ActiveX control (xl/activeX), which can run code "
       "in Excel.",
       "{what} is an ActiveX control, which Excel can load and run when it opens the "
       "file. sheetflow never loads it." + _CLEAN_COPY),
    # -- identity ------------------------------------------------------------------------
    _t("identity-missing", ERROR, "No sheetflow identity in the workbook.",
       "This workbook carries no sheetflow identity (study, rater), so it cannot be "
       "matched to a rater. Send the workbook you received, not a copy or a new file."),
    _t("identity-conflict", ERROR, "The identity stores in the workbook disagree.",
       "The workbook's identity is inconsistent ({detail}). Send the workbook you "
       "received, unedited apart from the answer cells."),
    _t("identity-mismatch", ERROR, "The identity names a rater of this study with a pack "
       "that is not theirs, or with another sitting than the pack's.",
       "The workbook's identity does not hold together ({detail}), so it cannot be matched "
       "to a pack. Send the workbook you received, unedited apart from the answer cells."),
    _t("identity-partial", WARNING, "Some identity stores are missing; the rest agree.",
       "Part of the workbook's identity is missing ({detail}); it was matched by the rest."),
    _t("schema-unsupported", ERROR, "The workbook layout version is not one this collector reads.",
       "This workbook has layout version {detail}, which this version of sheetflow "
       "cannot read. Ask the coordinator."),
    _t("wrong-study", ERROR, "The workbook belongs to another study.",
       "This workbook belongs to study {detail}, not to this study. Check that it was "
       "sent to the right coordinator."),
    _t("spec-hash-mismatch", ERROR,
       "The workbook was made from another version of the spec, or by another generate.",
       # a pack's own mark edited reads the same as another version's: both are said
       "This workbook was made from a different version of the study, or its identity was "
       "edited ({versions}). Ask the coordinator for the current workbook and copy your "
       "answers into it."),
    _t("unknown-rater", ERROR, "The rater named in the workbook is not in the manifest.",
       "The rater {detail} is not part of this study. Ask the coordinator."),
    _t("file-name-mismatch", WARNING, "The file name points to another rater (or sitting) "
       "than its contents.",
       # whether it counts for {rater} is for its rows to prove (it may count for nobody)
       "The file name suggests rater {detail}, but the workbook says it is rater {claimed}'s. "
       "Check who sent it."),
    _t("rows-from-other-rater", ERROR, "The rows match another rater's (or sitting's) "
       "workbook.",
       "The rows in this workbook are those of rater {detail}'s workbook, not of {claimed}'s. "
       "Each rater must fill in their own workbook."),
    _t("rows-not-this-rater", ERROR, "The hidden row ids match no rater's workbook.",
       "The hidden row ids on sheet '{sheet}' are not those of rater {rater}'s workbook "
       "(they were edited or come from elsewhere). Each rater must return their own "
       "workbook, changed only in the answer cells."),
    _t("rows-unproven", ERROR, "The workbook claims a rater but carries none of that "
       "rater's hidden row ids, while another file does.",
       "This workbook says it is rater {detail}'s, but none of its rows carries the hidden "
       "ids of {detail}'s workbook (its answer sheet or those ids were removed), while "
       "another file does; it was counted for nobody. Each rater must return their own "
       "workbook, changed only in the answer cells."),
    _t("claim-unproven", ERROR, "The workbook claims a rater but carries none of that "
       "rater's hidden row ids, and no other file does.",
       # the coordinator's to act on: no reply goes to the rater it claims
       "This workbook says it is rater {detail}'s, but none of its rows carries the hidden "
       "ids of {detail}'s workbook (its answer sheet or those ids were removed, and so was "
       "the hidden row table), so nothing shows it is theirs: it was counted for nobody "
       "and {detail}'s pack is still not returned. Ask {detail} whether they sent it; if "
       "they did, ask them for the workbook they received, changed only in the answer "
       "cells."),
    _t("duplicate-file", WARNING, "The same file (identical bytes) was given more than once.",
       "This file is an exact copy of {detail}; it was counted once."),
    _t("pack-as-sent", ERROR, "The workbook exactly as it was sent: nothing filled in.",
       "This is the workbook exactly as it was sent, with nothing filled in. Fill in the "
       "yellow cells, save the file and send that file back."),
    _t("pack-as-sent-again", WARNING, "The blank workbook came back beside the filled one.",
       "This is rater {rater}'s workbook exactly as it was sent, with nothing filled in; "
       "it came back beside their filled {beside}."),
    _t("blank-copy-again", WARNING,
       "A blank copy of the workbook, saved again, came back beside the filled one.",
       "This is a copy of rater {rater}'s workbook with nothing filled in, saved again "
       "after it was sent; it came back beside their filled {beside}."),
    _t("unusable-beside-used", WARNING,
       "A file that could not be read or identified, beside its rater's return used.",
       "This file could not be read or identified ({detail}); rater {rater}'s {beside} "
       "is used, so this file is left out and nothing needs asking of {rater}. Remove it "
       "from the returns folder (only if {rater} sent it after {beside} to replace it, "
       "ask them to attach it again)."),
    _t("superseded", WARNING, "An earlier file, replaced by one sent after the reply.",
       "{what}; it replaces this earlier file, which is not used."),
    _t("duplicate-rater", ERROR, "Two different files for one rater.",
       "Rater {rater} returned more than one different workbook ({detail}). Neither is "
       "used: remove the wrong one from the returns folder and run '{collect}' again.{caveat}"),
    _t("sender-unknown", WARNING, "The message carrying the file came from no rater's "
       "address, or had no single sender address (no From, several, or one that cannot "
       "be read)" + _SENDER_EXIT,
       "The message carrying this file came {what}. Check who sent it; if the rater wrote "
       "from another address, add it to the raters file or ask them to send from the "
       "address given there. Once you know who sent it, mark the file read (collect "
       "--mark-read)."),
    _t("sender-not-rater", WARNING, "The message carrying the file came from another "
       "rater" + _SENDER_EXIT,
       "The message carrying this workbook of rater {rater} came from {detail}. Check "
       "that each rater returns their own workbook; once you know this one is {rater}'s, "
       "mark the file read (collect --mark-read)."),
    _t("answers-match-other-rater", WARNING, "Of 20+ answers to the same responses as another "
       "rater's file, 95% or more are identical.", "{rater}'s answers equal {value}'s "
       "({other_file}) in {detail} answers to the same responses{texts}: one rater may have "
       "filled in the other's workbook. Ask both before using either."),
    _t("saved-by-same-user", WARNING, "Saved under the same user name as another rater's file.",
       "This workbook was last saved under the user name '{value}', as {detail}: one "
       "account saved the workbooks of different raters. Ask them before using either."),
    _t("mail-unreadable", ERROR, "A saved message (.eml or .mbox) could not be read.",
       "This saved message could not be read ({detail}). Save the message again from "
       "the mail program, or save its attachment into the returns folder."),
    _t("mail-no-spreadsheet", WARNING, "A saved message carries no spreadsheet attachment.",
       "This saved message carries no spreadsheet attachment ({detail}); nothing in it "
       "was collected. Save the attachment of the rater's message instead."),
    _t("attachment-too-large", ERROR, "A spreadsheet attachment is over the size limit.",
       "The attachment is {detail}, more than a rating workbook can be; it was not read. "
       "Ask the rater to send the workbook they received, filled in."),
    _t("attachment-undecodable", ERROR, "A spreadsheet attachment whose encoded text "
       "cannot be decoded: its bytes are not the file that was sent.",
       "This attachment arrived broken: its encoded text could not be decoded, so it was "
       "not read. Please attach the saved workbook again."),
    # -- the mail journal (no returned file: the study's mail.jsonl) ---------------------
    _t("journal-damaged", WARNING, "Lines of the mail journal (mail.jsonl) held no record "
       "when collect read it; the ratings are used, but collect exits 1 until it is mended.",
       "{caveat}"),
    # -- sheets and rows -----------------------------------------------------------------
    _t("sheet-missing", ERROR, "A sheet sheetflow needs was removed.",
       "The sheet '{sheet}' is missing. Use a fresh copy of the workbook; do not delete "
       "sheets."),
    _t("sheet-renamed", WARNING, "A sheet was renamed; it was found by its contents.",
       "The sheet '{sheet}' was renamed to '{detail}'; it was found by its contents."),
    _t("sheet-duplicated", ERROR, "A copy of the answer sheet; which answers count is unclear.",
       "The sheet '{sheet}' is a copy of '{detail}'. Only '{detail}' is read: move your "
       "final answers there, delete the copy, and send the workbook again."),
    _t("sheet-added", WARNING, "A sheet the workbook as sent did not have, with content in "
       "it; sheetflow does not read it" + _UNREAD_EXIT,
       "The sheet '{sheet}' was added to the workbook and holds {detail} with content, "
       "which sheetflow does not read. Read it in the file: move anything meant for the "
       "study into the answer cells (a remark into a notes cell), or ignore it."),
    _t("sheet-deleted", WARNING, "A sheet of instructions was deleted; no answer is read "
       "from it.",
       "The sheet '{sheet}' of the workbook as sent was deleted. No answer is read from "
       "it, so the ratings are used."),
    _t("sheet-visibility-changed", WARNING, "A sheet was hidden, or a hidden sheet shown; "
       "it is read as before.",
       "The sheet '{sheet}' was {detail} in the workbook as sent and is {what} now; it is "
       "read as before. Ask the rater why, if it matters."),
    _t("row-missing", ERROR, "A row of the workbook was deleted.",
       "{what}. Do not delete rows; copy your answers into a fresh copy of the workbook."),
    _t("row-unknown", ERROR, "A row that sheetflow did not write was added.",
       "Row {detail} ('{value}') is not one sheetflow wrote. Do not insert rows; remove it."),
    _t("row-ids-edited", ERROR, "Hidden row ids in column A name another case than the "
       "lines beside them.",
       "The hidden row ids in column A ({detail}) {what}. Answers would be read under "
       "the wrong case, so none is used. Undo the change (the lines and column A as they "
       "were sent), or copy your answers into a fresh copy of the workbook."),
    _t("row-duplicated", ERROR, "A row appears twice.",
       "Case {case} appears more than once. Remove the extra row."),
    _t("rows-reordered", WARNING, "Answer lines were sorted or moved; matched by hidden id.",
       "The answer lines are not in their original order; they were matched by their "
       "hidden row ids. Check that each answer is still beside its response."),
    _t("answer-line-moved", ERROR, "Answer lines were sorted, inserted or moved in a case.",
       "The line for '{detail}' in case {case} is not where it was: {cell} {what}. Rows "
       "were sorted, inserted or moved, so answers would be read under the wrong "
       "question and none is used. Undo that (or copy your answers into a fresh copy of "
       "the workbook), keeping every line where it was."),
    _t("row-inserted", WARNING, "Rows were inserted; answers were found by hidden id.",
       "Rows were inserted into the scoring sheet; the answers were found by their hidden "
       "row ids. Avoid inserting rows."),
    _t("column-inserted", ERROR, "Columns were inserted into the scoring sheet; no "
       "answer is read until they are deleted.",
       "{detail} {verb} inserted into sheet '{sheet}': everything right of {it} is "
       "{what} further right than where it is read, so no answer was read from this "
       "file. Delete the inserted {noun} and send the workbook again (anything typed in "
       "{it} that is meant for the study belongs in a notes cell)."),
    _t("column-deleted", ERROR, "A column of the scoring sheet was deleted; no answer is "
       "read from the file.",
       "{detail} of sheet '{sheet}' {verb} deleted: everything right of {it} is {what} "
       "further left than where it is read, so no answer was read from this file, and "
       "what the {noun} held is gone from it. Do not delete columns; copy your answers "
       "into a fresh copy of the workbook."),
    _t("locked-text-changed", ERROR, "A locked cell (id, prompt, response) was edited.",
       "The locked text in {cell} was changed. Use a fresh copy of the workbook and only "
       "fill in the answer cells."),
    # -- answer cells --------------------------------------------------------------------
    _t("answer-missing", ERROR, "A required answer cell is blank.",
       "{what} is blank; it needs {expected}."),
    _t("value-out-of-domain", ERROR, "A value that is not allowed (often pasted).",
       "{what}: '{value}' is not allowed; enter {expected}."),
    _t("value-not-whole", ERROR, "A fraction in a whole-number field.",
       "{what}: '{value}' is not a whole number; enter {expected}."),
    _t("too-many-decimals", ERROR, "A number with more decimals than its field allows.",
       "{what}: '{value}' has more decimals than allowed; enter {expected}."),
    _t("value-not-a-number", ERROR, "Text that is not a number in a number field.",
       "{what}: '{value}' is not a number; enter {expected}."),
    _t("number-after-space", ERROR, "A number typed after a space (' 4'): text, which "
       "the pack marks red too.",
       "{what}: '{value}' is text starting with a space, not a number: delete the space "
       "(enter {expected})."),
    _t("value-too-large", ERROR, "A number far larger than any answer (e.g. 1E+308).",
       "{what}: '{value}' is far too large; enter {expected}."),
    _t("error-value", ERROR, "An Excel error value (#DIV/0!, #N/A, ...) in an answer cell.",
       "{what} holds the error {value}, not an answer; enter {expected}."),
    _t("number-stored-as-text", WARNING, "A number stored as text; it was read as the number.",
       "{what}: the text '{value}' was read as the number {accepted}."),
    _t("label-normalised", WARNING,
       "A label differing only in case, spacing or hyphens, or a yes/no word for a yes/no "
       "label; it was read as the allowed label.",
       "{what}: '{value}' was read as '{accepted}'."),
    _t("date-in-answer", ERROR, "A date or time in an answer cell.",
       "{what} holds a date or time ('{value}'); enter {expected}. If Excel turned a number "
       "into a date, format the cell as General and type it again."),
    _t("bool-in-answer", ERROR, "TRUE/FALSE in an answer cell.",
       "{what} holds {value}; enter {expected}."),
    _t("formula-in-answer", ERROR, "A formula in an answer cell.",
       "{what} is a formula ({value}); type the value itself."),
    _t("text-word-count", WARNING, "A text answer outside its word range.",
       "{what} has {value} words; it should have {expected}."),
    _t("text-control-characters", WARNING, "A text answer held control characters (NUL, a "
       "bell, a unit separator); they were removed from the text kept.",
       "{what} held control characters, which do not show in the cell (pasted from "
       "another program); they were removed from the text kept (a vertical tab or form "
       "feed, Word's line break, is kept as a line break). Nothing to do unless the text "
       "now reads wrong."),
    _t("flag-note-missing", ERROR, "A flag is marked but the note it needs is blank.",
       "{what} is marked '{value}' but its {detail} is blank; write one line there "
       "saying why (the other ratings stay as they are)."),
    _t("consent-refused", ERROR, "The rater did not give the consent the study asks "
       "for; none of the file's ratings is used.",
       "{what} is answered '{value}', not '{expected}': without the rater's consent none "
       "of this file's ratings is used (they are kept out of ratings.csv and the "
       "analysis). Ask the rater whether they meant it."),
    _t("consent-refused-elsewhere", ERROR, "The rater did not give consent in their other "
       "file; none of this file's ratings is used either.",
       "Rater {rater} did not give the consent the study asks for in {detail}, so none of "
       "this file's ratings is used either (they are kept out of ratings.csv and the "
       "analysis)."),
    _t("verdict-off-band", WARNING, "A verdict that is not the band of its own scores.",
       "{what} is '{value}', but {detail}; the verdict follows from that mean, so check "
       "the scores and the verdict."),
    # -- batch times (protocol 001: a start and an end time per batch) -------------------
    _t("batch-not-scored", ERROR, "A batch with no time and no mark: never scored.",
       "Batch {detail} has no start or end time and no mark: it looks not scored yet. "
       "Score its items (a blank mark means No only in a batch you did), fill in its "
       "times, and send the workbook again."),
    _t("batch-time-missing", WARNING, "A batch start or end time is blank.",
       "The {detail} time is blank. Fill in the date and time the batch was started and "
       "finished (yyyy-mm-dd hh:mm), if you still know."),
    _t("batch-time-invalid", WARNING, "A batch start or end time that is not a date and time.",
       "The {detail} time '{value}' is not a date and time; type it as yyyy-mm-dd hh:mm, "
       "for example 2026-11-02 14:05."),
    _t("batch-time-no-date", WARNING, "A batch time without its date.",
       "The {detail} time '{value}' has no date, so the time between sittings cannot be "
       "checked; type the date too, as yyyy-mm-dd hh:mm."),
    _t("sitting-too-soon", WARNING,
       "A sitting-2 batch starts less than 24 hours after sitting 1 ended.",
       "{detail}; the protocol asks for at least 24 hours between the sittings. Report it "
       "as a deviation."),
    _t("batch-time-order", WARNING, "A batch ends before it starts.",
       "{detail}; check both times."),
    _t("batch-time-zero", WARNING, "A batch ends at the minute it starts.",
       "{detail}: a batch of items takes longer than that; check both times."),
    _t("batch-time-overlap", WARNING, "Two batches of one sitting overlap in time.",
       "{detail}; the protocol scores one batch at a time, with a break between: check "
       "the times, or report it as a deviation."),
    # -- self-checks (protocol 000 section 3.1) ------------------------------------------
    _t("totals-no-variance", WARNING, "Every total the rater gave is the same.",
       "All {detail} totals are {value}. Check that the scores really do not differ."),
    _t("totals-many-extreme", WARNING, "Many totals are at the extremes of the range.",
       "{detail} of totals are extreme ({expected}); extreme totals should be rare. "
       "Check them."),
    _t("confidence-low-share", WARNING, "Too few Medium/High confidence ratings.",
       "Only {detail} of confidence ratings are Medium or High (target {expected}). Report "
       "which dimensions are often Low in the methodology note."),
    _t("direction-all-same", WARNING, "Every direction judgement is the same.",
       "Every direction is '{value}' ({detail} cases); all one direction suggests a bias "
       "or a labelling error. Check them."),
    _t("direction-inconsistent", WARNING, "A direction contradicts the totals.",
       "Case {case}: {detail}, but the direction says '{value}'. Check the direction."),
)

CATALOGUE: dict[str, IssueType] = {t.code: t for t in _TYPES}
"""Every issue code, with severity, meaning and message template."""
