"""What every ``sheetflow`` command shares.

- One exit-code table (:data:`EXIT_CODES`), applied by :func:`command` to every
  library error: 0 ok, 1 data problems, 2 usage or a missing earlier step (naming the
  command to run), 3 could not run or the seal is broken.
- ``DIRECTORY`` defaulting to ``.``, checked before the command runs: a missing folder
  is a usage error naming it; a folder without ``study.toml`` names ``sheetflow init``
  (or the study folder above it).
- ``--json``: one JSON document on stdout, also when the command fails
  (``{"ok": false, "exit_code": ..., "errors": [...]}``); ``-q/--quiet``.
- Colour on a terminal only (``NO_COLOR`` honoured) and progress bars on stderr that
  appear only after a second of work and never when piped.

A command module imports only click and this module at the top; the library (and with
it pandas, openpyxl, xlsxwriter) is imported inside the command body, so
``sheetflow --help`` stays fast.
"""

from __future__ import annotations

import errno
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ..errors import (
    IncompleteError,
    MissingStepError,
    SealError,
    SheetflowError,
    SpecError,
    UsageError,
)
from ..hints import Typed
from ..interrupted import EXIT_INTERRUPTED, INTERRUPTED

if TYPE_CHECKING:
    from ..spec.study import Study

EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3
EXIT_CODES = {
    EXIT_OK: "ok",
    EXIT_DATA: "data problems: the spec, a returned workbook or the panel needs fixing "
               "(check, collect, status, analyze), a rater's reply whose workbook could "
               "not be saved, an attachment that cannot be decoded or a message the "
               "server broke off on (fetch, and remind, "
               "which names such a rater instead of drafting a reminder), a pack that "
               "came back only from another rater's address or no rater's, not marked "
               "read (remind), a second rater whose pack lock has still to write "
               "(status), no design of "
               "the grid meets the target (plan), or no pilot summary written without "
               "--execution-window (import-judges); each problem is named",
    EXIT_USAGE: "usage error, or an earlier step is missing (the message names the "
                "command to run)",
    EXIT_FAILED: "could not run, or the seal is broken (key, plan lock, spec or sealed "
                 "inputs changed after generate; a pack generate would write holds an "
                 "arm id)",
    EXIT_INTERRUPTED: INTERRUPTED,
}
SPEC_FILE = "study.toml"
_JSON_KEY = "sheetflow.json"
_PROGRESS_DELAY = 1.0  # seconds of work before a bar appears


class NonNegative(click.ParamType):
    """A finite number, 0 or more ('nan', 'inf' and negative values are refused).

    Parameters
    ----------
    name : str
        The type's name in the help.
    noun : str
        What a value that is no number is not ("a number of days").
    wanted : str
        What to give instead of a negative or infinite one ("a number of days, 0
        or more").
    """

    def __init__(self, name: str, noun: str, wanted: str) -> None:
        self.name, self.noun, self.wanted = name, noun, wanted

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> float:
        try:
            number = float(value)
        except (TypeError, ValueError):
            self.fail(f"{value!r} is not {self.noun}", param, ctx)
        if not math.isfinite(number) or number < 0:
            self.fail(f"{value!r}: give {self.wanted}", param, ctx)
        return number


def Days() -> NonNegative:  # named as a type, as click.IntRange is
    """A number of days: finite and not negative ('nan', 'inf' and -1 were taken)."""
    return NonNegative("days", "a number of days", "a number of days, 0 or more")


class Enough(click.IntRange):
    """A whole count with a floor below which the result would not mean what it says."""

    def __init__(self, minimum: int, why: str):
        super().__init__(min=minimum)
        self.why = why

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> int:
        number = click.INT.convert(value, param, ctx)
        if number < self.min:
            self.fail(f"{number} is too few: {self.why}; give {self.min} or more", param, ctx)
        return number


def colour_wanted() -> bool | None:
    """``False`` when ``NO_COLOR`` is set (any value); else ``None``: click decides (tty)."""
    return False if os.environ.get("NO_COLOR") else None


@dataclass
class Output:
    """How a command speaks: text (maybe coloured), quiet, or one JSON document."""

    as_json: bool = False
    quiet: bool = False
    warnings: list[str] = field(default_factory=list)

    def say(self, text: str = "", *, fg: str | None = None, bold: bool = False) -> None:
        """A line of the text report (stdout); nothing under ``--json`` or ``--quiet``."""
        if self.as_json or self.quiet:
            return
        if fg is None and not bold:
            click.echo(text, color=colour_wanted())
        else:
            click.secho(text, fg=fg, bold=bold, color=colour_wanted())

    def headline(self, text: str, *, fg: str | None = None) -> None:
        """A line that stays under ``--quiet`` (the result, in a word); not under ``--json``."""
        if not self.as_json:
            click.secho(text, fg=fg, bold=True, color=colour_wanted())

    def warn(self, text: str) -> None:
        """``warning: ...`` on stderr (kept under ``--quiet``; collected for JSON)."""
        self.warnings.append(text)
        click.secho(f"warning: {text}", fg="yellow", err=True, color=colour_wanted())

    def error(self, text: str) -> None:
        """``error: ...`` on stderr."""
        click.secho(f"error: {text}", fg="red", err=True, color=colour_wanted())

    def json(self, doc: dict[str, Any]) -> None:
        """Print ``doc`` as the command's one JSON document (only under ``--json``)."""
        if self.as_json:
            if self.warnings and "warnings" not in doc:
                doc = {**doc, "warnings": self.warnings}
            # a result that is not ok is a data problem unless the caller says otherwise
            doc = {"exit_code": EXIT_OK if doc.get("ok") else EXIT_DATA, **doc}
            click.echo(dumps(doc))

    def progress(self, label: str) -> Progress:
        """A progress callback ``(done, total)`` for the library (see :class:`Progress`)."""
        shown = not (self.as_json or self.quiet) and _is_terminal(sys.stderr)
        return Progress(label, enabled=shown)


def dumps(doc: Any) -> str:
    """The JSON text every command prints: indented, sorted keys, UTF-8 kept."""
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False, default=str)


def _is_terminal(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """click's own progress bar on stderr, shown only once the work passes a second.

    Call it as ``progress(done, total)``; the library calls it after each unit of work
    and never knows whether anything is shown.
    """

    def __init__(self, label: str, *, enabled: bool):
        self.label = label
        self.enabled = enabled
        self.start = time.monotonic()
        self.bar: Any = None
        self.done = 0

    def __call__(self, done: int, total: int) -> None:
        if not self.enabled:
            return
        if self.bar is None:
            if time.monotonic() - self.start < _PROGRESS_DELAY or done >= total:
                return
            self.bar = click.progressbar(length=total, label=self.label, file=sys.stderr,
                                         color=colour_wanted())
            self.bar.__enter__()
        self.bar.update(done - self.done)
        self.done = done
        if done >= total:
            self.close()

    def close(self) -> None:
        """End the bar's line (a no-op when no bar was shown)."""
        if self.bar is not None:
            self.bar.__exit__(None, None, None)
            self.bar = None


# --------------------------------------------------------------------------- errors


def exit_code_of(exc: BaseException) -> int:
    """The exit code of a library error, by the table in :data:`EXIT_CODES`."""
    if isinstance(exc, (SpecError, IncompleteError)):
        return EXIT_DATA
    if isinstance(exc, UsageError):
        return EXIT_USAGE
    if isinstance(exc, SealError):
        return EXIT_FAILED
    return EXIT_FAILED


def fail(code: int, messages: list[str], *, next_command: str | None = None,
         notes: list[str] | tuple[str, ...] = (), extra: dict[str, Any] | None = None,
         ) -> None:
    """Print ``messages`` as ``error:`` lines, then ``notes`` (what the failing step did
    all the same, e.g. the stale outputs it removed) as ``warning:`` lines (and the JSON
    document, with the keys of ``extra`` too: what the step did before it failed),
    exit ``code``."""
    ctx = click.get_current_context()
    out: Output = ctx.meta.get("sheetflow.out") or Output(ctx.meta.get(_JSON_KEY, False))
    for message in messages:
        out.error(message)
    for note in notes:
        out.warn(note)
    if out.as_json:
        doc: dict[str, Any] = {**(extra or {}), "ok": False, "exit_code": code,
                               "errors": messages}
        if next_command:
            doc["next"] = next_command
        out.json(doc)
    ctx.exit(code)


def warn_demo_seal(out: Output, directory: Path) -> None:
    """Warn when the study in ``directory`` is sealed with the demo's public secret.

    generate and send refuse such a study: they would draw or mail packs anyone who
    runs the demo can unblind. The commands that only read it (check, status, remind,
    analyze) warn instead, so the demo itself still runs through them; a study with
    real raters learns that its blinding hid nothing before anyone trusts its figures.
    """
    from ..packs.seal_check import demo_seal_line

    line = demo_seal_line(directory)
    if line:
        out.warn(line)


def stop_on_spec_drift(directory: Path, study: Study | None = None) -> Study:
    """The study in ``directory`` as generate sealed it, or stop with exit 3.

    Every command that reads the returns or sends a pack against the spec runs this
    first (check, status, collect, remind, send): a sealed input edited after generate
    (a :class:`~sheetflow.errors.SealError`) or a spec whose hash is no longer the
    sealed one (:func:`~sheetflow.packs.seal.spec_drift`) would have it read or send
    against a spec no pack was generated from.

    Parameters
    ----------
    directory : Path
        The study folder.
    study : Study, optional
        The study already loaded (``check`` prints it first); loaded here when not given.

    Returns
    -------
    Study
        The study, its spec the one generate sealed (or not generated yet).
    """
    from ..packs.seal import load_generated_study, spec_drift

    study = load_generated_study(directory) if study is None else study
    drift = spec_drift(directory, study)
    if drift:
        fail(EXIT_FAILED, [drift])
    return study


def _report(exc: BaseException) -> None:
    ctx = click.get_current_context()
    if ctx.find_root().params.get("debug"):
        traceback.print_exc()
    if isinstance(exc, OSError) and exc.filename is not None:
        fail(EXIT_FAILED, [os_error_line(exc)])
    if isinstance(exc, OSError) and exc.errno in _MENDS:  # no path: the output stream
        cause = (exc.strerror or type(exc).__name__).lower()
        fail(EXIT_FAILED, [f"writing the output: {cause}; {_MENDS[exc.errno]}, then run "
                           "again"])
    if isinstance(exc, (OSError, MemoryError)):
        fail(EXIT_FAILED, [f"{exc}; run again with --debug for details"])
    problems = [str(p) for p in getattr(exc, "problems", [exc])]
    # a command may attach what it did before the error (send: who got theirs)
    fail(exit_code_of(exc), problems, next_command=getattr(exc, "command", None),
         notes=getattr(exc, "__notes__", ()), extra=getattr(exc, "json_extra", None))


# what to do about the operating system's refusals a user can mend, by errno
_MENDS = {
    errno.EEXIST: "a file is where sheetflow needs a folder: move or rename it",
    errno.ENOTDIR: "a file is where sheetflow needs a folder: move or rename it",
    errno.EISDIR: "a folder is where sheetflow needs a file: move or rename it",
    # said of reading as of writing: the error does not tell which was refused
    errno.EACCES: "fix the permissions (or run as a user who may read and write there)",
    errno.EPERM: "fix the permissions (or run as a user who may read and write there)",
    errno.ENOSPC: "free some space",
    errno.EDQUOT: "free some space (the disk quota is reached)",
    errno.EROFS: "the disk is read-only: work on a copy elsewhere",
    errno.ENAMETOOLONG: "use a shorter folder or file name",
    errno.ELOOP: "a symbolic link leads back to itself: remove it",
}


def os_error_line(exc: OSError) -> str:
    """An operating-system error as one line: the path, the cause, what to do."""
    # a rename names both paths; the one in the way is where it was going
    path = os.fsdecode(exc.filename2 if exc.filename2 is not None else exc.filename)
    cause = (exc.strerror or type(exc).__name__).lower()
    mend = _MENDS.get(exc.errno or 0)
    return f"{path}: {cause}; {mend}, then run again" if mend else \
        f"{path}: {cause}; run again with --debug for details"


def reports_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into ``error:`` lines and the table's exit code."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except click.exceptions.Exit:
            raise
        except BrokenPipeError as exc:
            if _stdout_closed():
                _quit_quietly()
            _report(exc)
        except (SheetflowError, OSError, MemoryError) as exc:
            _report(exc)

    return wrapper


EXIT_STDOUT_CLOSED = 141  # 128 + SIGPIPE, what a shell reports for a reader gone away


def _stdout_closed() -> bool:
    """Whether standard output's reader has gone (``sheetflow analyze | head``), as
    against a broken pipe of the command's own work, which is an error like any."""
    import select

    if not hasattr(select, "poll"):  # Windows: no way to ask; report it as an error
        return False
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        events = poller.poll(0)
    except (OSError, ValueError):
        return False
    # the write end of a pipe whose reader has gone polls as an error
    return any(flags & select.POLLERR for _, flags in events)


def _quit_quietly() -> None:
    """End without another word: nobody reads standard output any more, and Python's
    exit would otherwise complain that it cannot flush it."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    sys.exit(EXIT_STDOUT_CLOSED)


# --------------------------------------------------------------------------- DIRECTORY


def check_directory(directory: Path, kind: str) -> Path:
    """Check DIRECTORY before a command runs; raise the error the table maps.

    ``kind`` is ``"study"`` (must exist and hold ``study.toml``), ``"folder"`` (must
    exist) or ``"new"`` (may be missing; must not be a file).
    """
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory}: is a file; give a folder")
    if kind == "new":
        return directory
    if not directory.exists():
        raise UsageError(f"{directory}: no such folder; give an existing study folder "
                         "(default: the current folder)")
    if kind == "study" and (directory / SPEC_FILE).exists() and \
            not (directory / SPEC_FILE).is_file():  # a folder: 'no study.toml here' was untrue
        raise UsageError(f"{directory / SPEC_FILE}: is a folder, not the study's spec; "
                         f"move it aside and put the study's {SPEC_FILE} there")
    if kind == "study" and not (directory / SPEC_FILE).is_file():
        command = f"sheetflow {click.get_current_context().info_name}"
        for up in ("..", "../.."):
            parent = Path(os.path.normpath(directory / up))
            if (parent / SPEC_FILE).is_file():
                raise UsageError(f"{directory}: no {SPEC_FILE} here; the study folder is "
                                 f"{parent}: run '{command} {parent}'")
        raise MissingStepError(f"{directory}: no {SPEC_FILE} here (not a study folder)",
                               f"sheetflow init {directory}")
    return directory


# --------------------------------------------------------------------------- commands


def command(name: str, *, directory: str | None = "study",
            directory_default: str = ".") -> Callable[[Callable[..., Any]], click.Command]:
    """Make a sheetflow command: click command, DIRECTORY, ``--json``, ``-q``, errors.

    The decorated function receives ``out`` (an :class:`Output`) first, then
    ``directory`` (when asked for) and its own options. Its docstring is the help text
    and should end with an example.

    Parameters
    ----------
    name : str
        The command name (kebab-case).
    directory : {"study", "folder", "new"} or None
        Whether the command takes DIRECTORY and what it must be (see
        :func:`check_directory`); ``None`` for no DIRECTORY.
    directory_default : str
        DIRECTORY's default (the current folder).
    """

    def decorate(func: Callable[..., Any]) -> click.Command:
        @wraps(func)
        @reports_errors
        def body(*args: Any, as_json: bool, quiet: bool, **kwargs: Any) -> Any:
            out = Output(as_json=as_json, quiet=quiet)
            click.get_current_context().meta["sheetflow.out"] = out
            if directory is not None:
                kwargs["directory"] = check_directory(kwargs["directory"], directory)
            if directory == "study":
                warn_recovered(out, kwargs["directory"])
            return func(out, *args, **kwargs)

        f: Any = click.option("-q", "--quiet", is_flag=True,
                              help="Print only the result line, warnings and errors.")(body)
        f = click.option("--json", "as_json", is_flag=True,
                         help="Print one JSON document on stdout (see docs/cli.md).")(f)
        if directory is not None:
            f = click.argument("directory", required=False, default=directory_default,
                               type=click.Path(path_type=Path))(f)
        return click.command(name)(f)

    return decorate


def warn_recovered(out: Output, folder: Path, *, whole_study: bool = True) -> None:
    """Roll back what a run stopped half-way through replacing its files left in
    ``folder`` (a study, or where ``--out`` put packs/ and sealed/), before anything
    there is read; say so, as a warning, for each."""
    from ..staging import recover_interrupted, recover_under
    from ..workbook.layout import OUT_DIR, RETURNS_DIR

    notes = (recover_under(folder, (OUT_DIR, RETURNS_DIR)) if whole_study
             else [n for n in [recover_interrupted(folder)] if n])
    for note in notes:
        out.warn(note)


_NOT_RERUN = frozenset({"as_json", "quiet", "yes", "directory"})
"""Left out of a rerun: how the output is printed, the confirmation (asked again on a
terminal) and the folder, which the hint names first."""


def typed_params(ctx: click.Context) -> list[Typed]:
    """The parameters of the command of ``ctx`` as the user gave them, for
    :func:`sheetflow.hints.typed_words` to spell the command again (the folder, the
    output's form and the confirmation left out).

    Parameters
    ----------
    ctx : click.Context
        The running command's context.

    Returns
    -------
    list of Typed
    """
    given = click.core.ParameterSource.COMMANDLINE
    return [Typed(ctx.params.get(param.name),
                  option="" if isinstance(param, click.Argument) else max(param.opts, key=len),
                  switch=isinstance(param, click.Option) and param.is_flag,
                  typed=ctx.get_parameter_source(param.name) is given)
            for param in ctx.command.params
            if param.name is not None and param.name not in _NOT_RERUN]


def json_requested(ctx: click.Context) -> bool:
    """Whether ``--json`` was on the command line (for errors raised while parsing)."""
    return bool(ctx.meta.get(_JSON_KEY))


def remember_json(ctx: click.Context, args: list[str]) -> None:
    """Note ``--json`` before parsing, so even a usage error prints a JSON document."""
    ctx.meta[_JSON_KEY] = "--json" in args
