"""Loading raters.csv: ids and roles, plain one-line fields, one e-mail address each,
and a pack file name of their own.

A rater's name and address reach file names, the mailing list and the ``To:`` header of
the mail drafts, so every field must be one line of plain text: control characters,
line breaks and Unicode line or paragraph separators are refused at ``check``, before
anything is written.
"""

from __future__ import annotations

import re
import unicodedata
from email.headerregistry import Address
from email.utils import getaddresses

from .base import LoaderBase
from .limits import MAX_RATERS, MAX_RATERS_BYTES
from .model import ID_RE, Rater, pack_file_name
from .spelling import close_match

RATER_COLUMNS = ("rater_id", "name", "last_name", "email", "role")
"""The columns of the raters file sheetflow reads; any other is not read at all."""

FIXED_RATERS = {
    "002": (2, "protocol 002's plan freezes two pseudonymous rater IDs (a primary rater "
            "on every item, a second rater on the second-rating subset)"),
}
"""Protocols whose text fixes the number of raters: (count, where it says so)."""


def protocol_number(protocol: object) -> str:
    """"002" of a protocol named "002 Blinded action-plan ..."; "" without one."""
    match = re.match(r"\s*(\d{3})\b", str(protocol or ""))
    return match.group(1) if match else ""

# bidirectional embeddings, overrides and isolates: they make a name read differently
_BIDI = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
_DOMAIN_LABEL = re.compile(r"^(?!-)[\w-]{1,63}(?<!-)$", re.UNICODE)


def unsafe_char(text: str) -> str:
    """The first character of ``text`` that cannot stand in a one-line field, as a
    code point such as ``U+000A``.

    Control characters (tab, CR, LF and NUL included), line and paragraph separators
    and bidirectional controls are unsafe; the empty string means none.
    """
    for ch in text:
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI:
            return f"U+{ord(ch):04X}"
    return ""


def email_problem(value: str) -> str:
    """Why ``value`` is not exactly one plain e-mail address (empty when it is)."""
    if len(getaddresses([value])) != 1:
        return "holds more than one address"
    if any(ch.isspace() for ch in value):  # the parser joins 'a @b.org' into one address
        return "holds a space"
    try:
        address = Address(addr_spec=value)
    except Exception:  # the parser raises ValueError, IndexError or header defects
        return "is not a valid address"
    labels = address.domain.split(".")
    if not address.username or len(labels) < 2 or not all(map(_DOMAIN_LABEL.match, labels)):
        return "is not a valid address"
    return ""


# names Windows keeps for devices, whatever the extension (CON.xlsx cannot be created)
_RESERVED = frozenset({"con", "prn", "aux", "nul", *(f"com{i}" for i in range(10)),
                       *(f"lpt{i}" for i in range(10))})
MAX_NAME_BYTES = 200
"""Longest pack file name (UTF-8 bytes): file systems allow 255, the drafts add ``.eml``."""


def _unusable_file_name(file: str) -> str:
    """Why ``file`` cannot be a file name on every system (empty when it can)."""
    if len(file.encode("utf-8")) > MAX_NAME_BYTES:
        return f"is longer than {MAX_NAME_BYTES} bytes"
    if file.split(".")[0].casefold() in _RESERVED:
        return "starts with a name Windows reserves for a device"
    if file.startswith("."):  # hidden: collect (and a file browser) passes it over
        return "starts with '.', which hides the file"
    return ""


class RaterLoader(LoaderBase):
    """The raters file named in ``[raters]``."""

    def _raters(self, t: dict) -> tuple[tuple[Rater, ...], str]:
        self._unknown_keys(t, {"file"}, "[raters]")
        name = t.get("file", "raters.csv")
        table = self._read_named_table(name, "raters", "[raters]", MAX_RATERS_BYTES, MAX_RATERS)
        if table is None:
            return (), name
        header, rows = table
        if "rater_id" not in header:
            meant = close_match("rater_id", [h for h in header if h])
            hint = f"; did you mean {meant!r}? Rename it to 'rater_id'" if meant else ""
            self.fail(f"has no 'rater_id' column; the file has: {', '.join(header) or 'nothing'}"
                      f"{hint}", file=name, where="header")
            return (), name
        self._unread_columns(header, name)
        raters: list[Rater] = []
        seen: dict[str, int] = {}
        folded: dict[str, tuple[str, int]] = {}
        addresses: dict[str, tuple[str, int]] = {}
        for row_no, row in rows:
            rid = row.get("rater_id", "").strip()
            where = f"row {row_no}"
            if not rid:
                self.fail("'rater_id' is empty; every rater needs a pseudonymous id",
                          file=name, where=where)
                continue
            if not ID_RE.match(rid):
                self.fail(f"rater_id {rid!r} must start with a letter and use only letters, "
                          "digits, '_' and '-'", file=name, where=where)
            if rid in seen:
                self.fail(f"duplicate rater_id {rid!r} (first at row {seen[rid]})",
                          file=name, where=where)
                continue
            seen[rid] = row_no
            other = folded.setdefault(rid.casefold(), (rid, row_no))
            if other[0] != rid:  # out/feedback/<rater_id>.eml: one file on most disks
                self.fail_to_generate(f"rater_id {rid!r} differs from {other[0]!r} (row "
                                      f"{other[1]}) only in case; files named by rater id "
                                      "would be one file on Windows and macOS: give ids that "
                                      "differ in letters", file=name, where=where)
            role = row.get("role", "").strip() or "primary"
            if role not in ("primary", "second"):
                self.fail(f"role {role!r} is not allowed; use primary or second",
                          file=name, where=where)
            if not self._plain_fields(row, name, where):
                continue
            email = row.get("email", "").strip()
            if email:
                self._email(email, name, where)
                other = addresses.setdefault(email.casefold(), (rid, row_no))
                if other[0] != rid:
                    self.fail(f"email {email!r} is also rater {other[0]}'s (row {other[1]}); "
                              "a return is told apart by its sender, so each rater needs an "
                              "address of their own (leave it blank for packs handed over by "
                              "hand)", file=name, where=where)
            raters.append(Rater(rid, row.get("name", "").strip(), email,
                                row.get("last_name", "").strip(), role, row_no))
        if not raters and not any(p.file == self.shown(name) for p in self.problems):
            self.fail("lists no raters", file=name)
        return tuple(raters), name

    def _fixed_count(self, protocol: object, raters: tuple[Rater, ...], name: str) -> None:
        """A protocol that fixes its number of raters (:data:`FIXED_RATERS`) gets that
        many: the analysis it plans (002's ICC of two raters) is for them alone.
        Deferred: a study already generated so stays collectable and analysable."""
        fixed = FIXED_RATERS.get(protocol_number(protocol))
        if fixed is None or not raters or len(raters) == fixed[0]:
            return
        count, why = fixed
        listed = ", ".join(r.id for r in raters[:4]) + (", ..." if len(raters) > 4 else "")
        self.fail_to_generate(f"lists {len(raters)} raters ({listed}), but {why}; list "
                              f"exactly {count} raters, or name the protocol the study follows "
                              "in [study] protocol", file=name)

    def _trio_mapping(self, protocol: object, params: dict, raters: tuple[Rater, ...],
                      name: str = "") -> None:
        """Protocol 004's locked trio is three judges, each filling its own workbook.

        The analysis takes the trio from ``[analysis.params.jsonl] judges`` (judge ->
        rater id), or, without that mapping (judges scoring by hand), from every rater
        listed: either way it must be three distinct raters, or the verdicts count 2 of
        2 judges, 3 of 4, or one workbook twice. People rating beside a mapped trio are
        not judges and are not counted. Deferred, as :meth:`_fixed_count`."""
        if protocol_number(protocol) != "004" or not raters:
            return
        jsonl = params.get("jsonl")
        judges = jsonl.get("judges") if isinstance(jsonl, dict) else None
        why = ("protocol 004's judge ensemble is a locked trio (Claude Opus 4.7, GPT-5.4, "
               "MiniMax M2.7), and its verdicts count 2 of 3 judges")
        if not isinstance(judges, dict) or not judges:
            if len(raters) != 3:  # every rater is a judge
                listed = ", ".join(r.id for r in raters[:4]) + (", ..." if len(raters) > 4
                                                                else "")
                self.fail_to_generate(
                    f"lists {len(raters)} raters ({listed}) and no [analysis.params.jsonl] "
                    f"judges line names the trio, so every rater is a judge; but {why}: "
                    "list exactly 3 raters, or map the three judges to raters there",
                    file=name or None)
            return
        named = [str(v) for v in judges.values()]
        if not set(named) <= {r.id for r in raters}:
            return  # a judge mapped to no rater is said by the params check
        twice = sorted({v for v in named if named.count(v) > 1})
        where = "[analysis.params.jsonl] judges"
        if twice:
            self.fail_to_generate(f"maps {named.count(twice[0])} judges to rater "
                                  f"{twice[0]!r}; each judge of protocol 004's locked trio "
                                  "fills its own rater's workbook: map each judge to a "
                                  "rater of its own", where)
        elif len(named) != 3:
            self.fail_to_generate(f"maps {len(named)} judges ({', '.join(judges)}), but "
                                  f"{why}: map each of the three judges to a rater", where)

    def _unread_columns(self, header: list[str], name: str) -> None:
        """Name each column sheetflow does not read. One that looks like a column it
        reads and the file lacks is an error: an 'e-mail' column dropped every address
        in silence, and every draft then said the rater had none."""
        for column in header:
            if not column or column in RATER_COLUMNS:
                continue
            meant = close_match(column, [c for c in RATER_COLUMNS if c not in header])
            if meant:
                self.fail(f"column {column!r} is not read; did you mean {meant!r}? Rename "
                          f"it (the columns read are {', '.join(RATER_COLUMNS)})",
                          file=name, where="header")
            else:
                self.warnings.append(f"{self.shown(name)}: header: column {column!r} is not "
                                     f"read (the columns read are {', '.join(RATER_COLUMNS)}); its "
                                     "values reach no pack, draft or analysis")

    def _plain_fields(self, row: dict[str, str], name: str, where: str) -> bool:
        ok = True
        for column, value in row.items():
            bad = unsafe_char(value)
            if bad:
                self.fail(f"column {column!r} contains {bad} (a control character or line "
                          "separator); a rater field must be one line of plain text",
                          file=name, where=where)
                ok = False
        return ok

    def _email(self, value: str, name: str, where: str) -> None:
        problem = email_problem(value)
        if problem:
            self.fail(f"email {value!r} {problem}; give one address such as "
                      "name@example.org (one rater per row)", file=name, where=where)

    def _pack_collisions(self, pattern: str, study_id: str, date: str,
                         raters: tuple[Rater, ...], sittings: int, name: str) -> None:
        """Refuse two packs whose file names differ only in case or Unicode form."""
        seen: dict[str, Rater] = {}
        for rater in raters:
            for sitting in range(1, sittings + 1):
                try:
                    file = pack_file_name(pattern, study_id, date, rater, sitting)
                except (KeyError, IndexError, ValueError):
                    return  # the pattern itself is reported by _pack_name
                bad = _unusable_file_name(file)
                if bad and file.startswith(".") and not pattern.startswith("{"):
                    self.fail(f"pack_name {pattern!r} gives file names starting with '.' "
                              f"(such as {file!r}), which hides them from collect and from "
                              "a file browser; start it with a letter", "[files]")
                    return  # the pattern's fault, the same for every rater
                if bad:
                    mend = "start [files] pack_name with a letter" if file.startswith(".") \
                        else "shorten the name or put {rater_id} in [files] pack_name"
                    self.fail(f"rater {rater.id}'s pack file {file!r} {bad}; {mend}",
                              file=name, where=f"row {rater.row}")
                    break
                key = unicodedata.normalize("NFC", file).casefold()
                other = seen.setdefault(key, rater)
                if other is not rater:
                    self.fail(f"raters {other.id} (row {other.row}) and {rater.id} (row "
                              f"{rater.row}) would both get the pack file {file!r} (file names "
                              "are compared without case); give them different last_name/"
                              "name values, or put {rater_id} in [files] pack_name",
                              file=name, where=f"rows {other.row} and {rater.row}")
                    break
