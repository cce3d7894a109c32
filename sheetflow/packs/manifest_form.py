"""The manifest's compact form on disk (``manifest_format`` 2) and its inflation.

Every reader gets each pack entry in the *full* form that
:mod:`sheetflow.workbook.layout` documents; only the file is compact. In the full form
each answer cell repeats its sheet, kind and validation (with the choices and checklist
questions), and each rater's pack repeats the sha256 of every locked text it shares
with the other packs: a 123-rater study of 350 items had a manifest four times the
size of all its packs. On disk a card is instead a short list::

    [shape, row, card, item_id, batch, code, tags, hashes]

* ``shape``: an index into the top-level ``shared.shapes``: the card without the
  values below, every ``cell`` and ``cells`` entry written relative to the card's title
  row (``"C+9"``: column C, nine rows below the title). Cards laid out alike (the same
  number of text chunks per field) share one shape, so each dimension's kind,
  validation and questions are written once per shape, and the answer positions of a
  card are one row number plus the shape's offsets.
* ``row``: the title row (1-based); ``card``, ``item_id``, ``batch``, ``code``: as in
  the full form.
* ``tags``: per answer row, the 12 hex digits after ``#`` of its ``row_id``, which is
  ``<code, or item id when no code>[/<label>]#<tag>``
  (:func:`~sheetflow.workbook.layout.keyed_row_id`).
* ``hashes``: indexes into ``shared.hashes`` of each locked field's sha256, the card's
  fields then each row's, in order; every row's ``item_id`` is the card's and its
  ``locked_sha256`` is :func:`~sheetflow.workbook.layout.row_digest` of its fields.

A card that this form would not give back exactly is stored whole (an object, as in
format 1): :meth:`Compactor.card` inflates each card it writes and compares, so the
form is lossless by construction. A format-1 manifest (every card whole) reads
unchanged.
"""

from __future__ import annotations

import json
import re
from typing import Any

from ..workbook import layout as L

_HEAD = ("card", "item_id", "batch", "code")
_ROW_OWN = ("row_id", "item_id", "locked_sha256", "locked")
_DIGITS = "0123456789"
_RECENT = 4  # layouts tried before a card's own is serialised
_ONE_CELL = re.compile(r'"([A-Z]{1,3})([0-9]+)"')
_CELLS = re.compile(r'"cells?":(?:"[A-Z]{1,3}[0-9]+"|\[(?:"[A-Z]{1,3}[0-9]+",)*'
                    r'"[A-Z]{1,3}[0-9]+"\])')
_MARK = "\x00"
_MARK_JSON = "\\u0000"  # how json.dumps writes _MARK

Template = tuple[str, list[int]] | dict[str, Any]


class Compactor:
    """Turns full pack entries into compact ones, collecting the shared tables.

    One compactor serves a whole manifest: shapes and hashes seen in one pack are
    referred to by every later pack.
    """

    def __init__(self) -> None:
        self.shapes: list[dict[str, Any]] = []
        self.hashes: list[str] = []
        self._shape_at: dict[str, int] = {}
        self._hash_at: dict[str, int] = {}
        self._templates: dict[str, Template] = {}
        self._recent: list[tuple[int, Template]] = []  # last shapes used, newest first

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        """``entry`` with each of its cards compact (see :meth:`card`)."""
        return {**entry, "cards": [self.card(c) for c in entry.get("cards", [])]}

    def card(self, card: dict[str, Any]) -> list[Any] | dict[str, Any]:
        """The compact list of one full card, or the card itself if the list would not
        inflate back to exactly it."""
        try:
            shape, row, head, tags, hashes = _split(card)
            at = self._shape(card, shape, row, head, tags, hashes)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError):
            at = None
        if at is None:
            return card
        return [at, row, *head, tags, [self._hash(h) for h in hashes]]

    def _shape(self, card: dict[str, Any], shape: dict[str, Any], row: int, head: list[Any],
               tags: list[str], hashes: list[str]) -> int | None:
        """The index of the card's shape (registered if new), or None if no shape gives
        the card back exactly.

        Most cards are laid out like one of the last few: those are tried first, as
        the check every card passes anyway; only a new layout is serialised.
        """
        for k, (at, template) in enumerate(self._recent):
            if _build(template, row, head, tags, hashes) == card:
                self._recent.insert(0, self._recent.pop(k))
                return at
        key = _relative_text(shape, row)
        template = self._templates.get(key)
        new = template is None
        if new:
            template = _template(json.loads(key))
        if _build(template, row, head, tags, hashes) != card:
            return None
        if new:
            self._shape_at[key] = len(self.shapes)
            self.shapes.append(json.loads(key))
            self._templates[key] = template
        self._recent = [(self._shape_at[key], template), *self._recent[:_RECENT - 1]]
        return self._shape_at[key]

    def _hash(self, digest: str) -> int:
        at = self._hash_at.setdefault(digest, len(self.hashes))
        if at == len(self.hashes):
            self.hashes.append(digest)
        return at

    def shared(self) -> dict[str, Any]:
        """The top-level ``shared`` tables the compact cards refer to."""
        return {"hashes": self.hashes, "shapes": self.shapes}


class Inflater:
    """Gives back full pack entries from compact ones, given the ``shared`` tables.

    Parameters
    ----------
    shared : dict or None
        The manifest's top-level ``shared`` (None or empty for format 1).
    """

    def __init__(self, shared: dict[str, Any] | None) -> None:
        shared = shared if isinstance(shared, dict) else {}
        self.shapes: list[Any] = shared.get("shapes") or []
        self.hashes: list[Any] = shared.get("hashes") or []
        self._templates: dict[int, Template] = {}

    def entry(self, entry: dict[str, Any]) -> dict[str, Any]:
        """The full form of one pack entry (the entry itself when every card is whole).

        Raises
        ------
        ValueError
            A compact card does not match the shared tables.
        """
        cards = entry.get("cards")
        if not isinstance(cards, list) or not any(isinstance(c, list) for c in cards):
            return entry
        try:
            full = self._cards(cards)
        except (IndexError, KeyError, TypeError, ValueError, AttributeError) as exc:
            raise ValueError(f"a compact card does not match the shared tables ({exc})"
                             ) from None
        return {**entry, "cards": full}

    def _cards(self, cards: list[Any]) -> list[dict[str, Any]]:
        """Every card whole; the shapes of all compact cards decoded in one go."""
        texts = []
        for c in cards:
            if not isinstance(c, list):
                continue
            if len(c) != 8 or not isinstance(c[0], int) or not isinstance(c[1], int):
                raise ValueError(f"malformed compact card {c[:6]!r}")
            template = self._templates.get(c[0])
            if template is None:
                template = self._templates[c[0]] = _template(self.shapes[c[0]])
            texts.append(_text(template, c[1]))
        bodies = iter(json.loads("[" + ",".join(texts) + "]"))
        return [c if not isinstance(c, list) else
                _completed(next(bodies), c[2:6], c[6], [self.hashes[h] for h in c[7]])
                for c in cards]


# --------------------------------------------------------------------------- one card


def _split(card: dict[str, Any]) -> tuple[dict[str, Any], int, list[Any], list[str],
                                         list[str]]:
    """A card's shape (cells still where they are), title row, head values, row-id tags
    and locked hashes."""
    row = _row_of(card["title"]["cell"])
    hashes: list[str] = []

    def locked(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
        hashes.extend(f["sha256"] for f in fields)
        return [{k: v for k, v in f.items() if k != "sha256"} for f in fields]

    shape = {k: v for k, v in card.items() if k not in _HEAD and k not in ("locked", "rows")}
    shape["locked"] = locked(card["locked"])
    rows, tags = [], []
    for r in card["rows"]:
        tags.append(r["row_id"].rpartition("#")[2])
        rows.append({**{k: v for k, v in r.items() if k not in _ROW_OWN},
                     "locked": locked(r["locked"])})
    shape["rows"] = rows
    return shape, row, [card[k] for k in _HEAD], tags, hashes


def _relative_text(shape: dict[str, Any], row: int) -> str:
    """The shape as compact JSON (sorted keys), every cell's row counted from ``row``."""
    text = json.dumps(shape, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    # quotes inside a JSON string are escaped: these can only be "cell"/"cells" values
    return _CELLS.sub(lambda m: _ONE_CELL.sub(
        lambda c: f'"{c[1]}{int(c[2]) - row:+d}"', m[0]), text)


def _build(template: Template, row: int, head: list[Any], tags: list[str],
           hashes: list[str]) -> dict[str, Any]:
    """The full card (keys sorted, as ``json.loads`` of the full form gives them)."""
    return _completed(json.loads(_text(template, row)), head, tags, hashes)


def _completed(card: dict[str, Any], head: list[Any], tags: list[str],
               hashes: list[str]) -> dict[str, Any]:
    """A shape filled at its row, completed with the card's own values."""
    card.update(zip(_HEAD, head, strict=True))
    todo = iter(hashes)

    def locked(fields: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [dict(sorted({**f, "sha256": next(todo)}.items())) for f in fields]

    card["locked"] = locked(card["locked"])
    own = [f["sha256"] for f in card["locked"]]
    shown_as = card["code"] or card["item_id"]
    rows = []
    for r, tag in zip(card["rows"], tags, strict=True):
        label = r.get("label")
        fields = locked(r["locked"])
        r.update(row_id=f"{shown_as}/{label}#{tag}" if label else f"{shown_as}#{tag}",
                 item_id=card["item_id"], locked=fields,
                 locked_sha256=L.row_digest([*own, *(f["sha256"] for f in fields)]))
        rows.append(dict(sorted(r.items())))
    card["rows"] = rows
    if next(todo, None) is not None:
        raise ValueError("more hashes than locked fields")
    return dict(sorted(card.items()))


def _template(shape: dict[str, Any]) -> Template:
    """The shape as JSON text with a ``%d`` for each cell's row, to fill in with one
    ``%`` and decode at ``json.loads`` speed.

    Returns the text and each cell's row offset, in order; a shape whose own text
    holds a NUL (the mark cells are cut at) stays a tree, filled by :func:`_moved`.
    """
    offsets: list[int] = []

    def cut(cell: str, _: int) -> str:
        at = max(cell.find("+"), cell.find("-"))
        offsets.append(int(cell[at:]))
        return f"{_MARK}{cell[:at]}{_MARK}"

    if _MARK_JSON in json.dumps(shape, separators=(",", ":")):
        return shape
    text = json.dumps(_moved(shape, 0, cut), separators=(",", ":"),
                      ensure_ascii=False).replace("%", "%%")
    parts = text.split(_MARK_JSON)  # a column letter between two marks
    if len(parts) != 2 * len(offsets) + 1:
        return shape
    return "".join(p + "%d" if i % 2 else p for i, p in enumerate(parts)), offsets


def _text(template: Template, row: int) -> str:
    """The JSON text of a shape with every cell at ``row`` plus its offset."""
    if isinstance(template, dict):
        return json.dumps(_moved(template, row, _absolute), separators=(",", ":"))
    text, offsets = template
    return text % tuple([row + offset for offset in offsets])


def _moved(node: Any, by: int, move: Any) -> Any:
    """A copy of ``node`` with every ``cell`` and ``cells`` entry moved by ``move``."""
    if isinstance(node, dict):
        return {k: (move(v, by) if k == "cell" else [move(c, by) for c in v]
                    if k == "cells" else _moved(v, by, move)) for k, v in node.items()}
    if isinstance(node, list):
        return [_moved(v, by, move) for v in node]
    return node


def _row_of(cell: str) -> int:
    return int(cell[len(cell.rstrip(_DIGITS)):])


def _absolute(cell: str, by: int) -> str:
    """``"C+12"`` moved by 5 -> ``"C17"``."""
    at = max(cell.find("+"), cell.find("-"))
    return f"{cell[:at]}{int(cell[at:]) + by}"


def card_items(cards: list[Any]) -> dict[str, str]:
    """Card code (the item id where there is none) -> item id, for one pack's cards in
    either form, without inflating them (a seal check reads every pack's)."""
    out = {}
    for card in cards:
        if isinstance(card, list):  # [shape, row, card, item_id, batch, code, ...]
            out[card[5] or card[3]] = card[3]
        elif isinstance(card, dict):
            out[card.get("code") or card.get("item_id")] = card.get("item_id")
    return out
