"""The ``sheetflow`` command: thin click commands over the library.

Each command parses its options, calls one library function, renders the result and
turns a :class:`~sheetflow.errors.SheetflowError` into a one-line message. Exit codes:
0 ok, 1 ran but the data (spec or returned workbooks) has problems, 2 usage error,
3 could not run. ``--debug`` shows tracebacks.

Commands live in modules of this package, listed in ``_COMMAND_MODULES``; each
defines ``register(group)``.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from collections.abc import Callable
from functools import wraps
from typing import Any

import click

from .. import __version__
from ..errors import SheetflowError, SpecError, UsageError

EXIT_OK, EXIT_DATA, EXIT_USAGE, EXIT_FAILED = 0, 1, 2, 3

_COMMAND_MODULES = (
    "study_commands",
    "generate_commands",
    "collect_commands",
    "import_commands",
    "analyze_commands",
    "plan_commands",
)


class Failure(click.ClickException):
    """sheetflow could not run (exit 3)."""

    exit_code = EXIT_FAILED

    def show(self, file: Any = None) -> None:
        """Print the one-line message as it is (it already starts with ``error:``)."""
        click.echo(self.message, err=True)


def reports_errors(func: Callable[..., Any]) -> Callable[..., Any]:
    """Turn library errors into one-line messages with the right exit code."""

    @wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        ctx = click.get_current_context()
        try:
            return func(*args, **kwargs)
        except click.exceptions.Exit:
            raise
        except SpecError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            for problem in getattr(exc, "problems", [exc]):
                click.echo(f"error: {problem}", err=True)
            ctx.exit(EXIT_DATA)
        except UsageError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            click.echo(f"error: {exc}", err=True)
            ctx.exit(EXIT_USAGE)
        except SheetflowError as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            raise Failure(f"error: {exc}") from exc
        except (OSError, MemoryError) as exc:
            if ctx.obj and ctx.obj.get("debug"):
                traceback.print_exc()
            raise Failure(f"error: {exc}; run again with --debug for details") from exc

    return wrapper


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="sheetflow")
@click.option("--debug", is_flag=True, help="Show tracebacks for errors.")
@click.pass_context
def cli(ctx: click.Context, debug: bool) -> None:
    """Blinded human-rating studies through Excel.

    init -> check -> generate -> (raters fill in) -> status / collect -> analyze.
    """
    ctx.ensure_object(dict)
    ctx.obj["debug"] = debug


for _name in _COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}").register(cli)


def main() -> None:
    """Entry point of the ``sheetflow`` console script."""
    try:
        cli.main(prog_name="sheetflow", standalone_mode=True)
    except KeyboardInterrupt:
        click.echo("interrupted", err=True)
        sys.exit(130)
