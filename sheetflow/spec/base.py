"""The loader's base: collecting problems and reading typed values from TOML tables."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

from ..errors import SpecError
from .model import ID_RE
from .spelling import unknown_key
from .tables import read_table

REQUIRED_TABLES = {
    "study": ('id = "my-study" and title = "..."', "[study]"),
    "design": ('kind = "paired" (or "single"), seed = 20260915 and arms = [{ id = "...", '
               'column = "..." }, ...] (a single design names response_column and '
               "arm_column instead of each arm's column)", "[design]"),
    "items": ('file = "items.csv" and id_column = "id" (the items file and its column of '
              "item ids; the responses' columns are named in [design])",
              "[items], [raters], [files], [email]"),
    "analysis": ('run = ["alpha", "percent_agreement"] and seed = 20260915', "[analysis]"),
}
"""What each table every study needs must hold at least, and the section of
docs/spec.md that describes it: the message for a missing table says both."""


def missing_table(key: str) -> str:
    """The message for the required table ``key`` missing: what goes in it and where
    to read more, or to find a whole example.

    Parameters
    ----------
    key : str
        A key of :data:`REQUIRED_TABLES`, e.g. ``"items"``.

    Returns
    -------
    str
    """
    needs, section = REQUIRED_TABLES[key]
    return (f"the [{key}] table is missing; every study needs one: add [{key}] with "
            f"{needs}; see docs/spec.md, section '{section}', or run 'sheetflow init "
            "example' for a whole study.toml")


class LoaderBase:
    """Reads one study, collecting problems instead of stopping at the first."""

    def __init__(self, spec_path: Path, sealed_inputs: Mapping[str, str] | None = None):
        self.spec_path = spec_path
        self.root = spec_path.parent
        # the sha256 generate sealed of each input file (none: not generated, or not
        # asked): a file that differs is told as changed, its content not checked
        self.sealed_inputs = dict(sealed_inputs or {})
        # one line per sealed input file whose bytes differ from the sealed ones
        self.changed_inputs: list[str] = []
        # every problem names its file with the study folder as the user gave it
        # ("my-study/study.toml"), as the messages about its other files do
        self.file = str(spec_path)
        self.problems: list[SpecError] = []
        # problems that stop a spec being frozen (check, generate) but not the reading
        # of a study generated before the rule existed: its packs are out already
        self.deferred: list[SpecError] = []
        # true statements about the files that stop nothing (a column not read)
        self.warnings: list[str] = []
        # the sha256 of each input file generate seals, of the bytes the checks read
        self.input_sha256: dict[str, str] = {}
        # ids of dimensions that failed to load: not reported again where referenced
        self.broken: set[str] = set()
        # ids of dimensions loaded despite problems: their points are not to be trusted
        self.doubtful: set[str] = set()

    def shown(self, name: str) -> str:
        """The file ``name`` (relative to the study folder) as messages name it: with
        the study folder, e.g. ``my-study/items.csv``."""
        return str(self.root / name)

    def fail(self, message: str, where: str | None = None, file: str | None = None) -> None:
        """Report a problem in ``file`` (relative to the study folder; the spec when
        not given) at ``where``."""
        self.problems.append(SpecError(message, file=self.shown(file) if file else self.file,
                                       where=where))

    def fail_to_generate(self, message: str, where: str | None = None,
                         file: str | None = None) -> None:
        """A problem that ``check`` and ``generate`` refuse, collect and analyze do not
        (see :attr:`~sheetflow.spec.model.Study.generate_problems`)."""
        self.deferred.append(SpecError(message,
                                       file=self.shown(file) if file else self.file,
                                       where=where))

    # -- helpers -----------------------------------------------------------------------

    def _table(self, doc: dict, key: str, required: bool = True) -> dict:
        value = doc.get(key)
        if value is None:
            if required:
                self.fail(missing_table(key), f"[{key}]")
            return {}
        if not isinstance(value, dict):
            self.fail(f"must be a table ([{key}]), not {type(value).__name__}", key)
            return {}
        return value

    @staticmethod
    def _given(doc: dict, key: str) -> bool:
        """Whether ``doc`` holds ``key`` as a table (else :meth:`_table` reported it)."""
        return isinstance(doc.get(key), dict)

    def _unknown_keys(self, table: dict, allowed: Iterable[str], where: str) -> None:
        allowed = set(allowed)
        for key in table:
            if key not in allowed:
                self.fail(unknown_key(key, allowed), where)

    def _str(self, t: dict, key: str, where: str, required: bool = False,
             ident: bool = False, default: str = "") -> str:
        value = t.get(key, default)
        if value == "" and required:
            self.fail(f"'{key}' is required", where)
            return ""
        if not isinstance(value, str):
            self.fail(f"'{key}' must be text, not {value!r}", where)
            return ""
        if ident and value and not ID_RE.match(value):
            self.fail(f"'{key}' = {value!r} must start with a letter and use only letters, "
                      "digits, '_' and '-'", where)
        return value

    def _required_int(self, t: dict, key: str, where: str, why: str,
                      minimum: int | None = None) -> int:
        """A whole number that must be given: one problem when it is missing (``why``
        says what it is for), another when it is not a whole number or below
        ``minimum``; 0 after any of them."""
        if key not in t:
            self.fail(f"'{key}' is required ({why}); give a whole number, e.g. "
                      f"{key} = 20260915", where)
            return 0
        value = self._int(t, key, where, minimum=minimum)
        return 0 if value is None or (minimum is not None and value < minimum) else value

    def _int(self, t: dict, key: str, where: str, default: int | None = None,
             minimum: int | None = None) -> int | None:
        value = t.get(key, default)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(f"'{key}' must be a whole number, not {value!r}", where)
            return default
        if minimum is not None and value < minimum:
            self.fail(f"'{key}' = {value} must be at least {minimum}", where)
        return value

    def _bool(self, t: dict, key: str, where: str, default: bool) -> bool:
        value = t.get(key, default)
        if not isinstance(value, bool):
            self.fail(f"'{key}' must be true or false, not {value!r}", where)
            return default
        return value

    def _subtable(self, raw: object, keys: Iterable[str], where: str, needs: str,
                  ) -> dict | None:
        """An optional sub-table: None when absent, or (reported) when not a table.

        ``keys`` are the keys it may hold (others are reported); ``needs`` names the
        ones it must hold, for the message when it is not a table.
        """
        if raw is None:
            return None
        if not isinstance(raw, dict):
            self.fail(f"must be a table with {needs}", where)
            return None
        self._unknown_keys(raw, keys, where)
        return raw

    def _str_list(self, t: dict, key: str, where: str) -> tuple[str, ...]:
        value = t.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.fail(f"'{key}' must be a list of texts", where)
            return ()
        return tuple(value)


    def _inside(self, name: object, where: str) -> Path | None:
        """``name`` as a path inside the study folder, or None (reported) when it is not.

        Absolute paths, ``..`` and symbolic links leading out of the folder are refused,
        so a spec cannot copy a file from elsewhere into every pack.
        """
        if not isinstance(name, str) or not name.strip():
            self.fail(f"must be a file name (text), not {name!r}", where)
            return None
        path = self.root / name
        root = self.root.resolve()
        if Path(name).is_absolute() or not path.resolve().is_relative_to(root):
            self.fail(f"{name!r} is outside the study folder; put the file in the study "
                      "folder and name it relative to it", where)
            return None
        return path

    def _regular(self, path: Path, what: str, where: str) -> bool:
        """Whether ``path`` is a regular file; reported when it is missing or not a file.

        A directory or a FIFO named as a study file would fail to read, or block.
        """
        if path.is_file():
            return True
        if path.exists():
            self.fail(f"{what} is not a regular file (a folder, pipe or device); name a "
                      "CSV, XLSX or text file", where)
        else:
            self.fail(f"{what} not found next to {self.file}", where)
        return False

    def _read_named_table(self, name: object, what: str, where: str, max_bytes: int,
                          max_rows: int) -> tuple[list[str], list] | None:
        """Header and rows of the table file ``name`` (see :func:`read_table`), or None.

        The file must lie inside the study folder and be a regular file within the size
        limits; anything else is reported, naming it as ``what`` under ``where``.
        """
        path = self._inside(name, f"{where} file")
        if path is None or not self._regular(path, f"{what} file {name!r}", where):
            return None
        try:
            return read_table(path, max_bytes=max_bytes, max_rows=max_rows)
        except SpecError as exc:
            self.problems.append(exc)
            return None
