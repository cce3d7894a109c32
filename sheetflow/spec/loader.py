"""Loading a whole study: the top level, items, raters, file naming and cross-checks."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import string
import tomllib
import unicodedata
from pathlib import Path

from ..errors import SpecError
from ..words import counted
from . import params, protocol_targets, verdicts
from .blanks import blank_rows, describe_rows
from .blinding import sequence_reveals_arms, shown_reveals_arm
from .design_loader import DesignLoader, label_problem
from .hashing import SPEC_FORMAT
from .internal import example_scores_warning, input_changed, internal_scores_problems
from .limits import (
    MAX_DEPTH,
    MAX_DIMENSIONS,
    MAX_ITEMS,
    MAX_SPEC_BYTES,
    MAX_TABLE_BYTES,
    nesting_depth,
)
from .mail import MailSettings, parse_mail
from .model import PLACEHOLDERS, SIZING_FILE, Design, Item, Plan, Rater, ShownField, Study
from .raters import RaterLoader, unsafe_char
from .rubric import Rubric, total_bounds
from .rubric_loader import RubricLoader
from .spelling import close_match
from .tables import control_char, invisible_char, read_capped, read_text_file

NO_DESIGN = Design("unknown", 0, ())
"""The design of a spec whose ``[design]`` table is missing (reported): nothing that
depends on the design is checked."""

ARM_PARAMS = ("improved_arm", "expected_winner", "control", "reference", "candidates")
"""The ``[analysis.params]`` settings whose values are arm ids."""


def pattern_problem(pattern: str) -> str:
    """Why a ``pack_name`` is no pattern :func:`str.format` can fill, in the reader's
    words; "" when it is one.

    Parameters
    ----------
    pattern : str
        The ``[files] pack_name`` as written.

    Returns
    -------
    str
        The brace without its partner or the placeholder that is not one of
        :data:`PLACEHOLDERS` (Python's own message, such as "Replacement index 0 out of
        range for positional args tuple", would not say which), else "".
    """
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(pattern) if f is not None]
    except ValueError:
        return "has a '{' or '}' without its partner (write a placeholder as {rater_id})"
    for field in fields:
        if field not in PLACEHOLDERS:
            return f"uses an unknown placeholder {{{field}}}"
    try:
        pattern.format(**{k: "x" for k in PLACEHOLDERS})
    except (IndexError, ValueError, AttributeError):  # a conversion or index after a name
        return "uses a placeholder with more than its name (write it as {rater_id})"
    return ""


class Loader(RubricLoader, DesignLoader, RaterLoader):
    """Reads one study, collecting problems instead of stopping at the first."""

    def load(self) -> Study | None:
        doc = self._parse()
        if doc is None:
            return None
        self._unknown_keys(
            doc,
            {
                "spec_format",
                "study",
                "design",
                "dimensions",
                "totals",
                "items",
                "raters",
                "files",
                "email",
                "mail",
                "analysis",
            },
            "top level",
        )
        fmt = doc.get("spec_format", SPEC_FORMAT)
        if fmt != SPEC_FORMAT:
            self.fail(f"spec_format {fmt!r} is not supported; this sheetflow reads {SPEC_FORMAT}",
                      "spec_format")
        meta = self._table(doc, "study")
        self._unknown_keys(meta, {
            "id", "title", "version", "date", "protocol", "instructions", "instructions_file",
        }, "[study]")
        self._one_line(meta)
        rubric = self._rubric(doc)
        # a table missing or not a table is reported once: what it would hold (a seed,
        # the items file's columns) is not reported missing again
        design_t = self._table(doc, "design")
        design = self._design(design_t) if self._given(doc, "design") else NO_DESIGN
        self._scatter_unshuffled(meta.get("protocol"), design)
        analysis_t = self._table(doc, "analysis")
        plan = self._plan(analysis_t) if self._given(doc, "analysis") else Plan((), 0)
        items_t = self._table(doc, "items")
        shown = self._shown(items_t)
        items, items_file = self._items(items_t, design, shown) \
            if self._given(doc, "items") else ((), str(items_t.get("file", "items.csv")))
        raters, raters_file = self._raters(self._table(doc, "raters", required=False))
        self._fixed_count(meta.get("protocol"), raters, raters_file)
        self._trio_mapping(meta.get("protocol"), plan.params, raters, raters_file)
        files = self._table(doc, "files", required=False)
        email = self._table(doc, "email", required=False)
        self._unknown_keys(files, {"pack_name"}, "[files]")
        self._email_texts(email)
        mail = self._mail(self._table(doc, "mail", required=False))
        self._deadline_used(email, mail)
        pack_name = self._pack_name(files)
        self._pack_collisions(pack_name, str(meta.get("id", "")), str(meta.get("date", "")),
                              raters, 2 if design.repeats else 1, raters_file)
        instructions = self._instructions(meta)
        self._instructions_plain(meta, instructions)
        self._batch_size_used(email, meta, instructions, design)
        self._cross_checks(rubric, design, plan, items, raters, items_file, raters_file)
        self._protocol_targets(str(meta.get("protocol", "")), plan,
                               given=self._given(doc, "analysis"))
        sizing = self._sizing()
        if self.problems:
            return None
        return Study(
            root=self.root,
            id=self._str(meta, "id", "[study]", required=True, ident=True),
            title=self._str(meta, "title", "[study]", required=True),
            version=str(meta.get("version", "1")),
            date=str(meta.get("date", "")),
            protocol=str(meta.get("protocol", "")),
            instructions=instructions,
            rubric=rubric,
            design=design,
            plan=plan,
            items=items,
            raters=raters,
            shown=shown,
            show_id=self._bool(items_t, "show_id", "[items]", False),
            pack_name=pack_name,
            email_subject=str(email.get("subject", "")),
            email_body=str(email.get("body", "")),
            items_file=items_file,
            raters_file=raters_file,
            sizing=sizing,
            mail=mail,
            generate_problems=tuple(self.deferred),
            file_warnings=tuple(self.warnings),
            input_sha256=dict(self.input_sha256),
        )

    def _parse(self) -> dict | None:
        """The TOML document, or None (reported) when it is unreadable, invalid or too big."""
        try:
            text = read_text_file(self.spec_path, MAX_SPEC_BYTES)
        except SpecError as exc:
            self.problems.append(exc)
            return None
        try:
            doc = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            self.fail(f"is not valid TOML ({exc}); check quotes, brackets and '=' signs")
            return None
        except RecursionError:
            doc = None  # nested far beyond MAX_DEPTH: the parser ran out of stack
        if doc is None or nesting_depth(doc) > MAX_DEPTH:
            self.fail(f"tables and arrays nest more than {MAX_DEPTH} levels deep; a study "
                      "spec needs far fewer (check for runaway brackets)")
            return None
        dims = doc.get("dimensions")
        if isinstance(dims, list) and len(dims) > MAX_DIMENSIONS:
            self.fail(f"has {len(dims)} dimensions; a rubric holds at most {MAX_DIMENSIONS}",
                      "[[dimensions]]")
            return None
        return doc

    def _one_line(self, meta: dict) -> None:
        """Title, version and date reach file names and mail subjects: one line each."""
        for key, kinds in (("version", (str, int, float)), ("date", (str, dt.date)),
                           ("protocol", (str,))):
            value = meta.get(key, "")
            if isinstance(value, bool) or not isinstance(value, kinds):
                # a table or a list went into pack names and the workbooks as Python text
                self.fail_to_generate(f"'{key}' must be text, not {value!r}", "[study]")
        for key in ("title", "version", "date"):
            bad = unsafe_char(str(meta.get(key, "")))
            if bad:
                self.fail(f"'{key}' contains {bad} (a control character or line separator); "
                          "it must be one line of plain text", "[study]")

    def _mail(self, table: dict) -> MailSettings:
        """The ``[mail]`` settings (not part of the spec hash), each problem reported."""
        problems: list[str] = []
        settings = parse_mail(table, problems)
        for problem in problems:
            self.fail(problem, "[mail]")
        return settings

    def _email_texts(self, email: dict) -> None:
        self._unknown_keys(email, {"subject", "body"}, "[email]")
        for key in ("subject", "body"):
            if not isinstance(email.get(key, ""), str):
                self.fail(f"'{key}' must be text", "[email]")
        bad = unsafe_char(str(email.get("subject", "")))
        if bad:
            self.fail(f"'subject' contains {bad} (a control character or line separator); "
                      "a mail subject is one line of plain text", "[email]")

    def _deadline_used(self, email: dict, mail: MailSettings) -> None:
        """A subject or body saying ``{deadline}`` needs a date to say (see
        :func:`sheetflow.packs.mail.fill`): without one the invitation would be sent with
        the placeholder in it."""
        if mail.deadline is not None:
            return
        for key in ("subject", "body"):
            if "{deadline}" in str(email.get(key, "")):
                self.fail(f"'{key}' uses {{deadline}} but [mail] sets no deadline; add "
                          "'deadline = yyyy-mm-dd' to [mail], or take {deadline} out",
                          "[email]")

    def _batch_size_used(self, email: dict, meta: dict, instructions: str,
                         design: Design) -> None:
        """A text saying ``{batch_size}`` needs batches to count (see
        :func:`sheetflow.packs.mail.fill`): without ``[design] batch_size`` the packs and
        the invitation would show the placeholder itself. Instructions are deferred, as
        a study generated so has its packs out already."""
        if design.batch_size is not None or design is NO_DESIGN:
            return
        mend = "add 'batch_size = N' to [design], or take {batch_size} out"
        for key in ("subject", "body"):
            if "{batch_size}" in str(email.get(key, "")):
                self.fail(f"'{key}' uses {{batch_size}} but [design] sets no batch_size; "
                          f"{mend}", "[email]")
        if "{batch_size}" in instructions:
            key = "instructions_file" if "instructions_file" in meta else "instructions"
            self.fail_to_generate(f"'{key}' uses {{batch_size}} but [design] sets no "
                                  f"batch_size; {mend}", "[study]")

    # -- items and raters --------------------------------------------------------------

    def _shown(self, t: dict) -> tuple[ShownField, ...]:
        out: list[ShownField] = []
        raw = t.get("show", [])
        if not isinstance(raw, list):
            self.fail("'show' must be a list of tables {column = \"...\", label = \"...\"}",
                      "[items] show")
            return ()
        for s in raw:
            if not isinstance(s, dict) or not s.get("column"):
                self.fail("each shown field is a table {column = \"...\", label = \"...\"}",
                          "[items] show")
                continue
            self._unknown_keys(s, {"column", "label", "optional"}, "[items] show")
            out.append(ShownField(str(s["column"]), str(s.get("label", s["column"])),
                                  self._bool(s, "optional", "[items] show", False)))
        return tuple(out)

    def _items(self, t: dict, design: Design,
               shown: tuple[ShownField, ...]) -> tuple[tuple[Item, ...], str]:
        where = "[items]"
        self._unknown_keys(t, {"file", "id_column", "show", "show_id"}, where)
        name = t.get("file", "items.csv")
        id_col = self._str(t, "id_column", where, default="id") or "id"
        table = self._read_named_table(name, "items", where, MAX_TABLE_BYTES, MAX_ITEMS)
        if table is None:
            return (), name
        header, rows = table
        needed = [id_col, *(s.column for s in shown)]
        if design.paired:
            needed += [a.column for a in design.arms if a.column]
        else:
            needed += [c for c in (design.response_column, design.arm_column) if c]
        if design.second_rater:
            needed += list(design.second_rater.strata)
        spare = [h for h in header if h and h not in needed]
        for col in dict.fromkeys(needed):
            if col not in header:
                meant = close_match(col, spare)
                hint = (f"; did you mean {meant!r}? Rename that column to {col!r}, or name "
                        f"{meant!r} in {self.file}") if meant else ""
                self.fail(f"column {col!r} named in {self.file} is missing; the file has: "
                          f"{', '.join(header)}{hint}", file=name, where="header")
        if any(col not in header for col in needed):
            return (), name
        self._column_roles(design, id_col, shown, header, name)
        self._blank_shown(rows, shown, name)
        items = self._item_rows(rows, id_col, name, design)
        self._shown_arms(design, shown, items, name)
        self._unshuffled_order(design, items, name)
        self._arms_without_items(design, items, name)
        return items, name

    def _column_roles(self, design: Design, id_col: str, shown: tuple[ShownField, ...],
                      header: list[str], name: str) -> None:
        """Each response has a column of its own: two arms reading one column were
        compared with themselves, a response read from the id column or from a shown
        field showed the rater that text twice, and all passed in silence. A scatter
        column the file lacks scattered nothing, also in silence."""
        roles = [(id_col, "the item id")]
        roles += [(f.column, f"shown as {f.label!r}") for f in shown]
        if design.paired:
            roles += [(a.column, f"arm {a.id!r}'s response") for a in design.arms if a.column]
        elif design.response_column:
            roles += [(design.response_column, "the response"),
                      *([(design.arm_column, "the arm")] if design.arm_column else [])]
        seen: dict[str, str] = {}
        for column, role in roles:
            other = seen.setdefault(column, role)
            if other != role and "response" in other + role:
                self.fail_to_generate(f"column {column!r} is both {other} and {role}; each "
                                      "response needs a column of its own", "[design]")
        scatter = design.scatter_column
        if scatter and scatter not in header:
            self.fail_to_generate(f"scatter_column {scatter!r} is not a column of "
                                  f"{self.shown(name)}; it has: {', '.join(header)}",
                                  "[design]")

    def _arms_without_items(self, design: Design, items: tuple[Item, ...], name: str) -> None:
        """A warning per arm of a single design that no item is in: its figure (001's
        yield) is undefined and every comparison with it says so; the study still runs,
        as a protocol's fewer items are reported, not hidden."""
        if design.paired or not design.arm_column or not items:
            return
        present = {it.fields.get(design.arm_column, "") for it in items}
        for arm in (a.id for a in design.arms if a.id not in present):
            self.warnings.append(
                f"{self.shown(name)}: arm {arm!r} of [design] arms has no item (no row has "
                f"it in column {design.arm_column!r}); analyze reports it as having no "
                "items: add its items, or remove it from [design] arms")

    def _shown_arms(self, design: Design, shown: tuple[ShownField, ...],
                    items: tuple[Item, ...], name: str) -> None:
        """A shown column must not tell a rater the arm: not the arm column itself, and
        not one whose values follow the arms (:func:`~.blinding.shown_reveals_arm`). In a
        paired design a shown column belongs to the case, the same beside both responses,
        and which side holds which arm is drawn per card: it cannot tell the arm."""
        if design.paired or not design.arm_column or not items:
            return
        arms = [it.fields.get(design.arm_column, "") for it in items]
        for field in shown:
            where = f"[items] show column={field.column!r}"
            if field.column == design.arm_column:
                self.fail_to_generate(
                    f"{field.column!r} is the design's arm_column: every card would show "
                    f"its arm as {field.label!r}; remove this entry from [items] show",
                    where)
                continue
            values = [it.fields.get(field.column, "") for it in items]
            reason = shown_reveals_arm(values, arms, seed=design.seed)
            if reason:
                self.fail_to_generate(
                    f"column {field.column!r} of {self.shown(name)} (shown as "
                    f"{field.label!r}) gives the arm away: {reason}; remove this entry from "
                    "[items] show, or show a column whose values do not follow the arms",
                    where)

    def _unshuffled_order(self, design: Design, items: tuple[Item, ...], name: str) -> None:
        """With ``shuffle = false`` every pack shows its cards in the items file's order,
        the same for every rater: an order that follows the arms (one system's rows
        first, or alternating) lets a rater group the answers by arm, so it is refused by
        the test item ids get (:func:`~.blinding.sequence_reveals_arms`). In a paired
        design each card holds both arms, on sides drawn per card whatever the order, so
        the order tells nothing."""
        if design.shuffle or design.paired or not design.arm_column or not items:
            return
        arms = [it.fields.get(design.arm_column, "") for it in items]
        if sequence_reveals_arms(arms, seed=design.seed):
            self.fail_to_generate(
                f"shuffle = false shows every rater the cards in the order of "
                f"{self.shown(name)}, and the arms in column {design.arm_column!r} follow a "
                "pattern in that order (in blocks, or alternating), so raters could group "
                f"the answers by arm; set shuffle = true, or put the rows of {name} in a "
                "random order that interleaves the arms", "[design] shuffle")

    def _blank_shown(self, rows: list[tuple[int, dict[str, str]]],
                     shown: tuple[ShownField, ...], name: str) -> None:
        """A shown field blank on some items is an error unless declared optional (the
        rule and its reasons: :mod:`sheetflow.spec.blanks`)."""
        for field in shown:
            blank = [] if field.optional else blank_rows(rows, field.column)
            if blank:
                self.fail_to_generate(
                    f"column {field.column!r} (shown to raters as {field.label!r}) is "
                    "empty, so raters would judge the response against nothing; fill it "
                    "in, or if it may be blank add optional = true to its entry in "
                    "[items] show", file=name, where=describe_rows(blank))

    def _item_rows(self, rows: list[tuple[int, dict[str, str]]], id_col: str, name: str,
                   design: Design) -> tuple[Item, ...]:
        items: list[Item] = []
        seen: dict[str, int] = {}
        arm_ids = {a.id for a in design.arms}
        for row_no, row in rows:
            item_id = row.get(id_col, "").strip()
            where = f"row {row_no}"
            if not item_id:
                self.fail(f"'{id_col}' is empty; every item needs an id", file=name, where=where)
                continue
            hidden = invisible_char(item_id)
            if hidden:
                self.fail(f"id {item_id!r} contains the invisible character {hidden}; remove "
                          "it (ids that differ only by such a character look the same to "
                          "everyone)", file=name, where=where)
                continue
            same = unicodedata.normalize("NFKC", item_id)
            if item_id in seen or same in seen:
                first = seen.get(item_id, seen.get(same))
                self.fail(f"duplicate id {item_id!r} (first at row {first}"
                          + ("" if item_id in seen else ", the same id in other characters")
                          + ")", file=name, where=where)
                continue
            seen[same] = row_no
            for col, value in row.items():
                bad = control_char(value)
                if bad:
                    self.fail(f"column {col!r} contains control character {bad}; remove it",
                              file=name, where=where)
            if not design.paired and design.arm_column and \
                    row.get(design.arm_column, "") not in arm_ids:
                self.fail(f"arm {row.get(design.arm_column)!r} is not one of the design's arms "
                          f"{sorted(arm_ids)}", file=name, where=where)
            items.append(Item(item_id, row, row_no))
        if not items and not self.problems:
            self.fail("has no items", file=name)
        return tuple(items)

    # -- the rest ----------------------------------------------------------------------

    def _sizing(self) -> dict | None:
        """The design recorded by ``sheetflow plan --record``, when the folder has one."""
        path = self.root / SIZING_FILE
        if not path.exists():
            return None
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            self.fail(f"cannot read it as JSON ({exc}); run sheetflow plan --record again "
                      "or delete it", file=str(path))
            return None
        if not isinstance(record, dict):
            self.fail("must hold one JSON object; run sheetflow plan --record again",
                      file=str(path))
            return None
        return record

    def _pack_name(self, files: dict) -> str:
        pattern = files.get("pack_name", "{study_id}-{rater_id}.xlsx")
        if not isinstance(pattern, str):
            self.fail(f"pack_name must be text, not {pattern!r}", "[files]")
            return "{study_id}-{rater_id}.xlsx"
        problem = pattern_problem(pattern)
        if problem:
            self.fail(f"pack_name {pattern!r} {problem}; allowed: "
                      + ", ".join("{" + p + "}" for p in PLACEHOLDERS), "[files]")
            # the checks on the names it gives cannot fill it: they see the default
            return "{study_id}-{rater_id}.xlsx"
        if not pattern.endswith(".xlsx"):
            self.fail(f"pack_name {pattern!r} must end in .xlsx", "[files]")
        if "{rater_id}" not in pattern and "{last_name}" not in pattern \
                and "{name}" not in pattern:
            self.fail("pack_name must contain {rater_id}, {name} or {last_name}, so each "
                      "rater's file has its own name", "[files]")
        return pattern

    def _instructions(self, meta: dict) -> str:
        if "instructions_file" in meta and "instructions" in meta:
            self.fail_to_generate("give either 'instructions' or 'instructions_file', not "
                                  "both: the packs show only the file's text", "[study]")
        if "instructions_file" in meta:
            path = self._inside(meta["instructions_file"], "[study] instructions_file")
            if path is None:
                return ""
            if not self._regular(path, f"instructions_file {meta['instructions_file']!r}",
                                 "[study]"):
                return ""
            try:
                return read_text_file(path, MAX_SPEC_BYTES)
            except SpecError as exc:
                self.problems.append(exc)
                return ""
        value = meta.get("instructions", "")
        if not isinstance(value, str):  # was dropped in silence: the packs said nothing
            self.fail_to_generate(f"'instructions' must be text, not {value!r}", "[study]")
        return value.replace("\r\n", "\n") if isinstance(value, str) else ""

    def _instructions_plain(self, meta: dict, text: str) -> None:
        """The instructions hold no control character (tabs and line breaks aside), as
        the title and the rubric's texts may hold none: it reached the packs unseen."""
        bad = control_char(text, "\t\n\r")
        if not bad:
            return
        line = text[:text.index(chr(int(bad[2:], 16)))].count("\n") + 1
        if "instructions_file" in meta:
            self.fail_to_generate(f"line {line} holds {bad}, a control character: take it "
                                  "out", file=str(meta["instructions_file"]))
        else:
            self.fail_to_generate(f"'instructions' holds {bad} on its line {line}, a "
                                  "control character: take it out", "[study]")

    def _arm_params(self, plan: Plan, design: Design) -> None:
        """Plan settings that name arms must name arms of the design: a misspelt one
        would make the decision compare nothing, or drop a candidate, in silence."""
        arms = {a.id for a in design.arms}
        for key in ARM_PARAMS:
            value = plan.params.get(key)
            values = value if isinstance(value, list) else [value]
            if value is None or not arms:
                continue
            for one in values:
                if one not in arms:
                    self.fail(f"{key} = {value!r}: {one!r} is not one of the design's arms "
                              f"{sorted(arms)}", "[analysis.params]")

    def _cross_checks(self, rubric: Rubric, design: Design, plan: Plan,
                      items: tuple[Item, ...], raters: tuple[Rater, ...],
                      items_file: str, raters_file: str = "") -> None:
        if design.kind == "single":
            for d in rubric.dimensions:
                if d.kind == "preference":
                    self.fail(f"dimension {d.id!r} is a preference, which needs a paired design",
                              f"[[dimensions]] id={d.id}")
        self._preference_labels(rubric, design)
        scores = plan.params.get("internal_scores_file")
        if scores is not None:
            where = "[analysis.params] internal_scores_file"
            path = self._inside(scores, where)
            # only against items that loaded cleanly: a broken items file says so itself
            if path is not None and self._regular(path, repr(scores), where) and \
                    items and not self.problems:
                self._internal_scores(path, str(scores), items, design, rubric)
        self._arm_params(plan, design)
        if verdicts.PARAM in plan.params:
            for problem in verdicts.problems(plan.params[verdicts.PARAM], rubric):
                self.fail(problem, "[analysis.params]")
        found = params.problems(plan.params, params.StudyParts(
            self.file, self.shown(items_file), items, frozenset(a.id for a in design.arms),
            frozenset(rubric.ids), frozenset(r.id for r in raters),
            plan.targets.get("alpha_test", 0.05)))
        self.problems += found.now
        self.deferred += found.deferred
        if design.repeats and items and design.repeats.count > len(items):
            self.fail(f"repeats count {design.repeats.count} exceeds the "
                      f"{counted(len(items), 'item')}",
                      "[design.repeats]")
        if design.second_rater and raters and not any(r.role == "second" for r in raters):
            self.fail("a second-rater subset is planned but no rater has role 'second'",
                      "[design.second_rater]")
        seconds = [r.id for r in raters if r.role == "second"]
        if seconds and not design.second_rater:
            # generate would give them a full pack and the analysis count them as
            # primary raters: what role 'second' does not say. Deferred: a study already
            # generated so stays collectable and analysable.
            self.fail_to_generate(
                f"{counted(len(seconds), 'rater')} ({', '.join(map(repr, seconds[:3]))}"
                f"{', ...' if len(seconds) > 3 else ''}) {'has' if len(seconds) == 1 else 'have'}"
                " role 'second', but the design plans no second-rater subset: a second "
                "rater would get a full pack and count as a primary rater; set the role "
                "to primary, or plan the subset in [design.second_rater]",
                "column role" if raters_file else "[[raters]] role", file=raters_file or None)
        if design.second_rater and raters and all(r.role == "second" for r in raters):
            # generate wrote no pack at all, and analyze reported an empty, complete panel
            self.fail("a second-rater subset is planned but no rater has role 'primary': the "
                      "second raters re-rate the primary raters' items", "[design.second_rater]")
        for name in plan.targets:
            if not isinstance(name, str):
                self.fail("target names must be text", "[analysis] targets")
        total_range = self._first_total(rubric)
        for problem in params.target_problems(plan.targets, total_range):
            self.fail_to_generate(problem, "[analysis.targets]")
        self.warnings += [f"{self.file}: [analysis.targets]: {warning}"
                          for warning in params.target_warnings(plan.targets, total_range)]

    def _protocol_targets(self, protocol: str, plan: Plan, *, given: bool) -> None:
        """The targets the protocol's decision needs must be in the plan, at the values
        it fixes: without one the decision is left undefined; against one, its
        consequence bands contradict the target. Deferred: a study generated with such
        a plan still analyses, and says which check it could not decide.

        Not checked when ``[analysis]`` is missing, or a target is already reported
        (misspelt, out of range): each problem is said once, the nearest first."""
        said = [p for p in (*self.problems, *self.deferred) if p.where == "[analysis.targets]"]
        if not given:
            return
        form = protocol_targets.icc_form_problem(protocol, plan.icc_form)
        if form:  # the ICC the protocol names would be reported as another form
            self.fail_to_generate(form, "[analysis] icc_form")
        if said:
            return
        for problem in protocol_targets.target_problems(protocol, plan.targets):
            self.fail_to_generate(problem.message, "[analysis.targets]")

    def _internal_scores(self, path: Path, name: str, items: tuple[Item, ...],
                         design: Design, rubric: Rubric) -> None:
        """Check the internal scores from one read of the file, and keep the sha256 of
        those very bytes for ``generate`` to seal: a file rewritten after the check
        (and before the seal) is then told by ``verify``, never sealed unchecked."""
        try:
            data = read_capped(path, MAX_SPEC_BYTES)
        except SpecError as exc:
            self.problems.append(exc)
            return
        self.input_sha256[name] = digest = hashlib.sha256(data).hexdigest()
        sealed = self.sealed_inputs.get(name)
        if sealed is not None and digest != sealed:
            # an edit after generate, whatever it holds: restoring the file is the fix
            self.changed_inputs.append(input_changed(self.shown(name), sealed, digest))
            return
        self.problems += internal_scores_problems(path, items, design, rubric, data=data)
        if not self.problems:
            self.warnings += filter(None, [example_scores_warning(path, data)])

    def _preference_labels(self, rubric: Rubric, design: Design) -> None:
        """A preference's choices must name the design's labels: the analysis reads
        the winner of ``A>B`` as the label before ``>`` and finds its arm by that
        label, so with labels X and Y the default ``A>B`` resolved no judgement (every
        direction undefined, in silence) while raters saw cards marked X and Y."""
        if not design.paired or len(design.labels) != 2:
            return
        first, second = (label.strip() for label in design.labels)
        if any(map(label_problem, design.labels)) or first.casefold() == second.casefold():
            return  # the labels themselves are reported
        want = [f"{first}>{second}", f"{second}>{first}"]
        for dim in rubric.dimensions:
            if dim.kind != "preference" or len(dim.choices) != 3:
                continue
            sides = [tuple(p.strip() for p in c.split(">")) for c in dim.choices[:2]]
            if sides != [(first, second), (second, first)] or ">" in dim.choices[2]:
                self.fail_to_generate(
                    f"choices {list(dim.choices)} do not name the design's labels "
                    f"{list(design.labels)}; give choices = [\"{want[0]}\", \"{want[1]}\", "
                    "\"Tied\"] (the winner is read as the label before '>')",
                    f"[[dimensions]] id={dim.id}")

    def _first_total(self, rubric: Rubric) -> tuple[float, float] | None:
        """The range of the rubric's first total, when its dimensions loaded cleanly."""
        first = rubric.totals[0] if rubric.totals else None
        if first is None or not first.of or first.method not in ("sum", "mean") or \
                self.doubtful.intersection(first.of) or not all(
                    d in rubric.ids and rubric.dimension(d).scores for d in first.of):
            return None
        return total_bounds(first, rubric)

