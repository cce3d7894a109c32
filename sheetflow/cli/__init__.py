"""The ``sheetflow`` command: thin click commands over the library.

Each command is a small module of this package listed in ``COMMAND_MODULES``; it
defines ``register(group)`` and builds its commands with :func:`.common.command`, which
adds DIRECTORY (default ``.``), ``--json``, ``-q`` and the exit-code table
(:data:`.common.EXIT_CODES`). Command bodies import the library inside the function, so
``sheetflow --help`` does not load pandas, openpyxl or xlsxwriter. ``--debug`` shows
tracebacks.
"""

from __future__ import annotations

import difflib
import importlib
from typing import Any, NoReturn

import click

from .. import __version__
from .common import (
    EXIT_CODES,
    EXIT_DATA,
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_USAGE,
    Output,
    command,
    dumps,
    json_requested,
    remember_json,
    reports_errors,
)

COMMAND_MODULES = (
    "study_commands",
    "generate_commands",
    "collect_commands",
    "coordinator_commands",
    "mail_commands",
    "import_commands",
    "analyze_commands",
    "plan_commands",
)

__all__ = ["EXIT_CODES", "EXIT_DATA", "EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK",
           "EXIT_USAGE", "Output", "cli", "command", "main", "reports_errors"]


class SheetflowGroup(click.Group):
    """A click group that suggests a close command name and answers usage errors in JSON."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        remember_json(ctx, args)
        try:
            return super().parse_args(ctx, args)
        except click.UsageError as exc:  # an unknown option before the command
            _usage_error_line(ctx, exc)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        name = click.utils.make_str(args[0]) if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            close = difflib.get_close_matches(name, self.list_commands(ctx), n=1, cutoff=0.6)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            ctx.fail(f"No such command '{name}'.{hint} Commands: "
                     f"{', '.join(self.list_commands(ctx))}.")
        return super().resolve_command(ctx, args)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except click.UsageError as exc:
            _usage_error_line(ctx, exc)
        except click.ClickException as exc:
            if json_requested(ctx):
                click.echo(dumps({"ok": False, "exit_code": exc.exit_code,
                                  "errors": [exc.format_message()]}))
            raise
        except KeyboardInterrupt as exc:
            # click would print "Aborted!" and exit 1, which the table keeps for data
            # problems; a script must be able to tell an interrupted run from those.
            # A command that knows better what to run again says so in ``line``
            # (send, demo)
            message = getattr(exc, "line", "") or EXIT_CODES[EXIT_INTERRUPTED]
            if json_requested(ctx):
                # what the command did before the interrupt (send: who got theirs)
                doc = {**getattr(exc, "json_extra", {}), "ok": False,
                       "exit_code": EXIT_INTERRUPTED, "errors": [message]}
                # the warnings printed before Ctrl-C, as every other document has them
                said = getattr(ctx.meta.get("sheetflow.out"), "warnings", None)
                if said:
                    doc["warnings"] = list(said)
                click.echo(dumps(doc))
            click.echo(f"\n{message}", err=True)
            raise click.exceptions.Exit(EXIT_INTERRUPTED) from None


def _usage_error_line(ctx: click.Context, exc: click.UsageError) -> NoReturn:
    """Answer a usage error in one line, as every other error, and exit with its code.

    click's own form takes four lines (usage, a pointer to --help, a blank line, the
    error).
    """
    if json_requested(ctx):
        click.echo(dumps({"ok": False, "exit_code": exc.exit_code,
                          "errors": [exc.format_message()]}))
    click.echo(f"error: {exc.format_message().rstrip('.')} ({_what_to_do(ctx, exc)})",
               err=True)
    raise click.exceptions.Exit(exc.exit_code) from None


def _what_to_do(ctx: click.Context, exc: click.UsageError) -> str:
    """Where to look after a usage error: the command's help, or for ``--debug`` after
    a command (sheetflow's own option, which click knows only before it), where it goes."""
    if exc.ctx is not None and exc.ctx is not ctx and isinstance(exc, click.NoSuchOption) \
            and exc.option_name == "--debug":
        return f"it goes before the command: {ctx.command_path} --debug {exc.ctx.info_name} ..."
    where = exc.ctx.command_path if exc.ctx is not None else ctx.command_path
    return f"see '{where} --help'"


@click.group(cls=SheetflowGroup, context_settings={"help_option_names": ["-h", "--help"]},
             epilog="Exit codes: " + "; ".join(f"{k} {v}" for k, v in EXIT_CODES.items()))
@click.version_option(__version__, prog_name="sheetflow")
@click.option("--debug", is_flag=True,
              help="Show tracebacks for errors (before the command: "
                   "sheetflow --debug collect ...).")
def cli(debug: bool) -> None:
    """Blinded human-rating studies through Excel.

    init -> check -> generate -> (raters fill in) -> status / remind / collect -> analyze.
    DIRECTORY is the study folder (default: the current folder).

    Example: sheetflow demo && sheetflow status sheetflow-demo
    """


for _name in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}").register(cli)


def main() -> None:
    """Entry point of the ``sheetflow`` console script (Ctrl-C exits 130:
    :meth:`SheetflowGroup.invoke`)."""
    cli.main(prog_name="sheetflow", standalone_mode=True)
