"""Author-year citations in a text, matched to the reference entries they name.

A citation names its authors' surnames and a year: "Gwet 2014", "Westfall & Young
1993", "Fleiss, Cohen & Everitt (1969)", "Landis & Koch (1977, p. 165)", "Flack et
al. (1988)". An entry of a References list begins with its authors and their initials
and the year in brackets: "Koo, T. K., & Li, M. Y. (2016). A guideline ...". An
entry may list two works, "Cohen, J. (1960). ...; Cohen, J. (1968). ...". A citation
and an entry match on the first author's surname and the year.

Both the analysis workbook's and the plan workbook's Methods sheets list a reference
when their text cites it. An entry both lists hold is written here, once, and so is a
method both texts describe with its sources (:data:`UNIT_BOOTSTRAP`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

GWET_2014 = ("Gwet, K. L. (2014). Handbook of Inter-Rater Reliability, 4th ed. Advanced "
             "Analytics.")
"""Gwet's handbook: the non-null variance of Fleiss' kappa, Gwet's AC."""

FLEISS_COHEN_EVERITT_1969 = (
    "Fleiss, J. L., Cohen, J., & Everitt, B. S. (1969). Large sample standard errors of "
    "kappa and weighted kappa. Psychol. Bull. 72, 323-327.")
"""The large-sample (non-null) variance behind Cohen's kappa's normal-theory interval."""

ZAPF_2016 = ("Zapf, A., Castell, S., Morawietz, L., & Karch, A. (2016). Measuring "
             "inter-rater reliability for nominal data: which coefficients and confidence "
             "intervals are appropriate? BMC Med. Res. Methodol. 16, 93.")
"""The unit bootstrap behind alpha's interval."""

HAYES_KRIPPENDORFF_2007 = (
    "Hayes, A. F., & Krippendorff, K. (2007). Answering the call for a standard "
    "reliability measure for coding data. Commun. Methods Meas. 1, 77-89.")
"""The KALPHA macro's bootstrap (of pairs of values), which alpha's interval is not."""

UNIT_BOOTSTRAP = ("each drawn unit bringing all its values (the unit bootstrap of Zapf et "
                  "al. 2016, not the KALPHA macro's resampling of pairs of values, Hayes & "
                  "Krippendorff 2007, which covers far less often than its nominal level)")
"""How alpha's bootstrap resamples, with its sources: analyze's Methods text and the
plan's, whose simulated intervals are analyze's, say it in the same words."""

# the first author and the year of a citation
_CITATION = re.compile(r"\b([A-Z][\w'-]*)(?:(?:, | & | and )[A-Z][\w'-]*)*(?: et al\.)? "
                       r"\(?((?:1[6-9]|20)\d\d)\b")
# the first author and the year of each work an entry lists
_ENTRY_HEAD = re.compile(r"(?:^|; )([A-Z][\w'-]*), [A-Z]\.[^()]*?\((\d{4})\)")


def citations(text: str) -> set[tuple[str, str]]:
    """The works ``text`` cites.

    Parameters
    ----------
    text : str

    Returns
    -------
    set of (str, str)
        (first author's surname, year) of every author-year citation in ``text``.
    """
    return {(m[1], m[2]) for m in _CITATION.finditer(text)}


def entry_works(entry: str) -> set[tuple[str, str]]:
    """The works a reference entry lists.

    Parameters
    ----------
    entry : str
        One entry of a References list (it may list works one after another, each
        after "; ").

    Returns
    -------
    set of (str, str)
        (first author's surname, year) of each work.
    """
    return {(m[1], m[2]) for m in _ENTRY_HEAD.finditer(entry)}


def cited_entries(texts: Iterable[str], entries: Sequence[str]) -> list[str]:
    """The entries the ``texts`` cite, in the order of ``entries``.

    Parameters
    ----------
    texts : iterable of str
        The texts that cite (a Methods sheet's entries).
    entries : sequence of str
        Reference entries to choose from.

    Returns
    -------
    list of str
        Each entry that lists a work some text cites.
    """
    cited = set().union(*(citations(text) for text in texts))
    return [entry for entry in entries if cited & entry_works(entry)]
