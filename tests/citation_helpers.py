"""A Methods sheet's author-year citations, checked against its References.

Stricter than the library's matching (``sheetflow.citations``, first author and
year): a citation is listed only by a full entry with all its authors (or, for "et
al.", its first author and two or more others), their initials, the year, a title and
its source.
"""

from __future__ import annotations

import re

# "Krippendorff 2011", "Westfall & Young 1993", "Fleiss, Cohen & Everitt (1969)",
# "Landis & Koch (1977, p. 165)", "Name et al. (2004)"
_CITATION = re.compile(r"\b([A-Z][\w'-]*(?:(?:, | & | and )[A-Z][\w'-]*)*)( et al\.)? "
                       r"\(?((?:1[6-9]|20)\d\d)\b")
# an entry's authors with their initials and its year: "Koo, T. K., & Li, M. Y. (2016). "
_HEAD = re.compile(r"((?:[A-Z][\w'-]*, (?:[A-Z]\. ?)+,? (?:& )?)+)\((\d{4})\)\. ")


def cited(text: str) -> set[tuple[tuple[str, ...], str, bool]]:
    """Author-year citations in ``text``: (surnames, year, whether "et al.")."""
    return {(tuple(re.split(r", | & | and ", names)), year, bool(etal))
            for names, etal, year in _CITATION.findall(text)}


def listed(references: str) -> set[tuple[tuple[str, ...], str]]:
    """(surnames, year) of every full entry: authors with initials, (year), a title and
    its source; "Cohen, J. (1960) ...; Cohen, J. (1968) ..." are two entries."""
    text = " ".join(references.split())  # an entry may run over two rows of the sheet
    heads = list(_HEAD.finditer(text))
    out = set()
    for head, after in zip(heads, [*heads[1:], None], strict=True):
        body = text[head.end():after.start() if after else len(text)].strip("; ")
        # a title (which may name its edition, "(4th ed.)", or end in a question),
        # then its source
        if re.fullmatch(r"(?:[^.?]|\bed\.\))+[.?] \S.*\S", body):
            out.add((tuple(re.findall(r"([A-Z][\w'-]*), [A-Z]\.", head[1])), head[2]))
    return out


def missing(entries: list[tuple[str, str]]) -> list[str]:
    """The citations in the Methods ``entries`` (topic, text) with no full reference."""
    full = listed("\n".join(text for topic, text in entries if topic == "References"))
    text = " ".join(text for topic, text in entries if topic != "References")
    return [f"{', '.join(names)}{' et al.' if etal else ''} {year}"
            for names, year, etal in sorted(cited(text))
            if not any(year == y and same_authors(names, etal, authors)
                       for authors, y in full)]


def same_authors(names: tuple[str, ...], etal: bool, authors: tuple[str, ...]) -> bool:
    """Whether a citation's ``names`` (with "et al." or not) are the entry's authors."""
    if etal:  # "et al." stands for the authors after the first, at least two
        return len(authors) > 2 and authors[0] == names[0]
    return names == authors
