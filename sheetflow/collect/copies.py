"""Answers that match another rater's too well: one workbook filled from another.

A pack's row ids bind a returned file to the pack, not to the person who filled it: a
rater who also holds another rater's blank pack (collusion, a forwarded e-mail) can
copy their own answers into it and return it as that rater, and every per-file check
passes. This cannot be prevented, so it is detected: after every file is checked,
the used files of every two different raters are compared on the answers both gave.

Answers are aligned without the key. Two raters see the same response under their
own labels and row ids, but the blinded manifest gives every answer row the
``locked_sha256`` of the text shown (prompt and response) and its card's item id, so
an answer is keyed by (item id, response digest, dimension, field). A preference
names labels (first wins, second wins, tied): it is compared as which response, by
digest, was preferred, so swapping the sides does not hide a copy. Confidences count
as answers; identical free text of :data:`LONG_TEXT` characters or more is named.

The reader child turns a file's answers into an :class:`AnswerPrint` (64-bit hashes,
some 17 bytes an answer); the parent compares all files at once with one-hot matrix
products (:func:`find_copies`), and :func:`warn_copies` warns on both files of a pair.

Rule
----
Warn when two files of different raters share at least :data:`MIN_SHARED` answers
(non-blank in both) and at least :data:`MIN_IDENTICAL` of them (95%) are identical.
Independent raters differ on counts, checklists, choices and confidences: the
simulated raters of :mod:`sheetflow.demo.simulate` (mild noise, a shared latent
quality per response) agree on at most 75% of their shared answers in every bundled
template and in every one of the 124,750 pairs of a 500-rater paired study (median
64%). A copied workbook agrees on all of them, and one with 25 of 500 answers changed
still on 95%. Real panels agree more than the simulation: PandaLM's three human
annotators agree on 91-93% of 999 three-way preferences, so the line cannot come down
without naming honest pairs, and a copy with more than about 5% of its answers changed
passes unnamed (``docs/integrity.md``). Twenty shared answers keep a handful of agreeing answers (a
short study-level submission) from counting as evidence. Free text counts like any
other answer: the simulated raters draw their notes from a few stock phrases (up to
three identical notes in an honest pair), so identical text alone is not evidence
enough; it is named in the warning.
"""

from __future__ import annotations

import hashlib
from array import array
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..spec.rubric import Dimension
from .validate import Issue, issue

MIN_SHARED = 20
"""Fewest answers two files must both give before their agreement is judged."""
MIN_IDENTICAL = 0.95
"""Share of the shared answers that must be identical for the warning."""
LONG_TEXT = 20
"""Characters from which an identical free-text answer is named in the warning."""
CODE = "answers-match-other-rater"
SMALL_PANEL = 40
"""Most files compared pair by pair with sets; more go to numpy's matrix products."""
SAVER_CODE = "saved-by-same-user"

_CELLS = 1 << 22  # one-hot block size (files x columns) per matrix product: 16 MB
_SEP = "\x1f"


@dataclass(frozen=True)
class AnswerPrint:
    """One file's answers, comparable across raters without the key (small, picklable).

    Attributes
    ----------
    keys : bytes
        Per answer, the 64-bit hash of (item id, response digest, dimension, field).
    answers : bytes
        Per answer, its key's hash XOR its value's: equal for two files when they gave
        the same answer to the same question (and otherwise but by a 2**-64 chance).
    texts : bytes
        Per answer, 1 for free text of :data:`LONG_TEXT` characters or more, else 0.
    """

    keys: bytes = b""
    answers: bytes = b""
    texts: bytes = b""

    def __len__(self) -> int:
        return len(self.texts)


def answer_print(rows: Sequence[tuple[str, ...]], pack: Mapping[str, Any],
                 dims: Mapping[str, Dimension], labels: Sequence[str]) -> AnswerPrint:
    """The :class:`AnswerPrint` of one file's rating rows (in the reader child).

    Parameters
    ----------
    rows : sequence of tuple
        The file's rating rows, fields as :data:`~sheetflow.collect.rows.ROW_FIELDS`.
    pack : mapping
        The pack's manifest entry (its cards' row ids, labels and digests).
    dims : mapping of str to Dimension
        The rubric's dimensions by id.
    labels : sequence of str
        The design's labels, first then second (a preference's first two choices).

    Returns
    -------
    AnswerPrint
        Blank answers, derived figures and batch times are left out, and so is a key
        given twice with different values (two responses of a card with one text).
    """
    digest = {r["row_id"]: r["locked_sha256"] for c in pack.get("cards", []) for r in c["rows"]}
    sides = {c["item_id"]: {r["label"]: r["locked_sha256"] for r in c["rows"]}
             for c in pack.get("cards", [])}
    found: dict[str, tuple[str, bool]] = {}
    clashes: set[str] = set()
    kinds = {d: dim.kind for d, dim in dims.items()}
    for case, row_id, _label, dim_id, part, value, _raw, confidence, cell in rows:
        kind = kinds.get(dim_id)
        if not cell or kind is None:  # derived points and totals, batch times
            continue
        where = _SEP.join((case, digest.get(row_id, ""), dim_id))
        if value:
            if kind == "preference":
                value = _preferred(value, dims[dim_id], sides.get(case, {}), labels)
            key = where + _SEP + part
            if found.setdefault(key, (value, kind == "text" and
                                      len(value.strip()) >= LONG_TEXT))[0] != value:
                clashes.add(key)
        if confidence:  # checklists repeat it on every question: one key
            key = where + _SEP + "confidence"
            if found.setdefault(key, (confidence, False))[0] != confidence:
                clashes.add(key)
    kept = [(k, v, long) for k, (v, long) in found.items() if k not in clashes]
    keys = array("Q", [_code(k, _KEY_CODES) for k, _, _ in kept])
    answers = array("Q", [code ^ _code(v, _VALUE_CODES)
                          for code, (_, v, _) in zip(keys, kept, strict=True)])
    return AnswerPrint(keys.tobytes(), answers.tobytes(), bytes(long for *_, long in kept))


_KEY_CODES: dict[str, int] = {}
_VALUE_CODES: dict[str, int] = {}
# a reader child checks many files of one study: their questions and values repeat
_CODES_KEPT = 1 << 18


def _code(text: str, codes: dict[str, int]) -> int:
    """The 64-bit code of ``text`` (its hash), from ``codes`` when seen before."""
    code = codes.get(text)
    if code is None:
        code = int.from_bytes(_hash(text), "little")
        if len(codes) < _CODES_KEPT:
            codes[text] = code
    return code


def _preferred(value: str, dim: Dimension, sides: Mapping[str, str],
               labels: Sequence[str]) -> str:
    """A preference as the digests of the response preferred and the other one."""
    choices = list(dim.choices)
    if len(choices) < 2 or value not in choices[:2] or len(labels) < 2:
        return value  # tied, or not a side
    first, second = sides.get(labels[0], labels[0]), sides.get(labels[-1], labels[-1])
    won, lost = (first, second) if value == choices[0] else (second, first)
    return f"{won}>{lost}"


def _hash(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()


# --------------------------------------------------------------------------- the parent


@dataclass(frozen=True)
class Match:
    """Two files (by index) whose answers match beyond independent rating."""

    first: int
    second: int
    shared: int
    identical: int
    texts: int
    """Identical free-text answers of :data:`LONG_TEXT` characters or more."""


def find_copies(prints: Sequence[AnswerPrint], raters: Sequence[str]) -> list[Match]:
    """Every pair of files of different raters that meets the rule (module notes).

    Parameters
    ----------
    prints : sequence of AnswerPrint
        One per file.
    raters : sequence of str
        Each file's rater id: files of one rater (two sittings) are not compared.

    Returns
    -------
    list of Match
        Ordered by file index.
    """
    if len(set(raters)) < 2:
        return []
    if len(prints) <= SMALL_PANEL:
        return _find_copies_by_sets(prints, raters)
    import numpy as np  # only here: collect needs it for no other step

    n = len(prints)
    files = np.repeat(np.arange(n), [len(p) for p in prints])
    keys = np.frombuffer(b"".join(p.keys for p in prints), dtype=np.uint64)
    answers = np.frombuffer(b"".join(p.answers for p in prints), dtype=np.uint64)
    long = np.frombuffer(b"".join(p.texts for p in prints), dtype=np.uint8).astype(bool)
    shared = _pair_counts(files, keys, n)
    same = _pair_counts(files, answers, n)
    _, who = np.unique(np.array(raters, dtype=str), return_inverse=True)
    pairs = np.triu(who[:, None] != who[None, :], 1)
    hits = pairs & (shared >= MIN_SHARED) & (same >= MIN_IDENTICAL * shared - 1e-9)
    if not hits.any():
        return []
    texts = _pair_counts(files[long], answers[long], n)
    return [Match(int(i), int(j), int(shared[i, j]), int(same[i, j]), int(texts[i, j]))
            for i, j in zip(*np.nonzero(hits), strict=True)]


def _find_copies_by_sets(prints: Sequence[AnswerPrint], raters: Sequence[str]
                         ) -> list[Match]:
    """:func:`find_copies` by set intersections, pair by pair: for a few files this is
    cheaper than importing numpy (which collect's parent needs for nothing else)."""
    keys = [_codes(p.keys) for p in prints]
    answers = [_codes(p.answers) for p in prints]
    long = [{a for a, flag in zip(_code_list(p.answers), p.texts, strict=True) if flag}
            for p in prints]
    out = []
    for i in range(len(prints)):
        for j in range(i + 1, len(prints)):
            if raters[i] == raters[j]:
                continue
            shared, same = len(keys[i] & keys[j]), len(answers[i] & answers[j])
            if shared >= MIN_SHARED and same >= MIN_IDENTICAL * shared - 1e-9:
                out.append(Match(i, j, shared, same, len(long[i] & long[j])))
    return out


def _code_list(blob: bytes) -> list[int]:
    """The 64-bit hashes of an :class:`AnswerPrint` field, in order."""
    return memoryview(blob).cast("Q").tolist() if blob else []


def _codes(blob: bytes) -> set[int]:
    return set(_code_list(blob))


def _pair_counts(files: Any, codes: Any, n: int) -> Any:
    """n x n: how many of the same codes each two files hold (each file holds a code
    at most once): X @ X.T for the one-hot file-by-code matrix X, built a block of
    columns at a time so memory stays bounded whatever the number of codes."""
    import numpy as np

    out = np.zeros((n, n), dtype=np.float64)
    _, column, held = np.unique(codes, return_inverse=True, return_counts=True)
    keep = held[column] > 1  # a code only one file holds pairs with no one
    files, column = files[keep], np.unique(column[keep], return_inverse=True)[1]
    if not column.size:
        return out.astype(np.int64)
    order = np.argsort(column, kind="stable")
    files, column = files[order], column[order]
    columns = int(column[-1]) + 1
    width = max(1, min(columns, _CELLS // n))
    for start in range(0, columns, width):
        lo, hi = np.searchsorted(column, (start, start + width))
        block = np.zeros((n, min(width, columns - start)), dtype=np.float32)  # exact < 2**24
        block[files[lo:hi], column[lo:hi] - start] = 1.0
        out += block @ block.T
    return np.rint(out).astype(np.int64)


class CheckedWork(Protocol):
    """What :func:`warn_copies` and :func:`warn_same_saver` need of one file in the
    collector."""

    name: str
    issues: list[Issue]
    answers: AnswerPrint | None
    saved_by: str

    @property
    def rater(self) -> str:
        """The file's rater id."""

    @property
    def used(self) -> bool:
        """Whether its ratings are used: identified, no error, not a duplicate."""


def _used(works: Sequence[CheckedWork]) -> list[CheckedWork]:
    """The files whose ratings are used: identified, no error, not a duplicate."""
    return [w for w in works if w.used and w.answers is not None]


def warn_same_saver(works: Sequence[CheckedWork]) -> None:
    """Add :data:`SAVER_CODE` to each used file last saved under the same user name as
    a used file of another rater.

    A fresh pack carries no such name; Excel writes the name of the account that saves
    the file. Two raters' returns saved under one name were saved by one account: one
    person's machine, or a shared one. That is said, with the name and the other
    files, for the coordinator to ask; the files are used as they are.
    """
    by_name: dict[str, list[CheckedWork]] = {}
    for w in _used(works):
        if w.saved_by:
            by_name.setdefault(w.saved_by.casefold(), []).append(w)
    for group in by_name.values():
        if len({w.rater for w in group}) < 2:
            continue
        for me in group:
            others = [w for w in group if w.rater != me.rater]
            named = ", ".join(f"{w.rater}'s {w.name}" for w in others[:3]) + \
                (f" and {len(others) - 3} more" if len(others) > 3 else "")
            me.issues.append(issue(SAVER_CODE, file=me.name, rater=me.rater,
                                   value=me.saved_by, detail=named))


def warn_copies(works: Sequence[CheckedWork]) -> None:
    """Add the :data:`CODE` warning to both files of every pair :func:`find_copies`
    finds, among the files whose ratings are used (no error, not a duplicate)."""
    used = _used(works)
    for m in find_copies([w.answers for w in used], [w.rater for w in used]):
        for me, other in ((used[m.first], used[m.second]), (used[m.second], used[m.first])):
            texts = (f", {m.texts} of them identical free texts of {LONG_TEXT}+ characters"
                     if m.texts else "")
            me.issues.append(issue(CODE, file=me.name, rater=me.rater, value=other.rater,
                                   detail=f"{m.identical} of {m.shared}",
                                   other_file=other.name, texts=texts))
