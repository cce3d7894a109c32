"""The whole commands sheetflow's messages tell the user to type next.

Every hint names a command to type as shown: ``sheetflow <step> <folder> <what
follows>``, with the study folder as the user gave it (a hint without it runs on the
current folder, or fails). This module is the one place such a command is spelled:

- :func:`command_line` spells a command from its step, the folder and the words that
  follow it; :func:`import_judges_line` the import of the judges' outputs, whose file
  only the user can name (:data:`JUDGE_OUTPUTS` stands for it);
- :func:`typed_words` gives the words that followed the folder on the command the user
  ran, from its parameters as the command line parsed them (:class:`Typed`; the CLI
  turns its own context into them), so that a hint names the whole command to run
  again.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_SHELL_SAFE = re.compile(r"[\w@%+=:,./-]+")


def command_line(step: str, study_dir: str | Path, *options: str) -> str:
    """A sheetflow command to type as shown: ``sheetflow <step> <folder> <options>``.

    ``command_line("send", root, "replies")`` is ``"sheetflow send my-study replies"``.
    A folder or option with characters a shell reads apart (a space, ``<``) is put in
    double quotes.

    Parameters
    ----------
    step : str
        The command, e.g. ``"collect"``.
    study_dir : str or Path
        The study folder, as the user named it.
    *options : str
        What follows the folder, e.g. ``"replies"``, ``"--rater"``, ``"R1"``.

    Returns
    -------
    str
    """
    return " ".join(["sheetflow", step, *map(_shell_word, [str(study_dir), *options])])


JUDGE_OUTPUTS = "OUTPUTS.jsonl"
"""What a hint names the judges' JSONL output file by (protocol 004): a name in capitals
for the user to replace with their own file's, as ``generate``'s next step shows it."""


def import_judges_line(study_dir: str | Path, *options: str) -> str:
    """``'sheetflow import-judges DIR OUTPUTS.jsonl ...' (OUTPUTS.jsonl: ...)``: the
    command quoted, and what its :data:`JUDGE_OUTPUTS` stands for, said once (the file
    is the user's to name: "JSONL" alone read as a word to type).

    Parameters
    ----------
    study_dir : str or Path
        The study folder, as the user named it.
    *options : str
        What follows the outputs file, e.g. ``"--force"``.

    Returns
    -------
    str
    """
    return (f"'{command_line('import-judges', study_dir, JUDGE_OUTPUTS, *options)}' "
            f"({JUDGE_OUTPUTS}: your file of the judges' JSONL outputs)")


def _shell_word(word: str) -> str:
    """``word`` as typed in a shell: in double quotes when a shell would read it apart
    (a space, ``<``, ``$``), the characters special inside them escaped."""
    if _SHELL_SAFE.fullmatch(word):
        return word
    return '"' + re.sub(r'(["\\$`])', r"\\\1", word) + '"'


@dataclass(frozen=True)
class Typed:
    """One parameter of the command the user ran, as the command line parsed it.

    Parameters
    ----------
    value : object
        Its value; a tuple for an argument taking several values, or an option given
        more than once. ``None``, ``()`` and ``False`` (a switch not given) are no words.
    option : str
        The option's long name (``"--rater"``); ``""`` for an argument, whose value is
        always repeated (a default one too: it says what the command does, e.g. the
        kind ``send`` sends).
    switch : bool
        An option taking no value (``--dry-run``): named alone.
    typed : bool
        Whether the user typed it: an option left at its default is not repeated.
    """

    value: Any
    option: str = ""
    switch: bool = False
    typed: bool = True


def typed_words(params: Iterable[Typed]) -> list[str]:
    """The words that followed the study folder on the command the user ran, to type
    again: each argument's value, then each option the user gave, as typed.

    Parameters
    ----------
    params : iterable of Typed
        The command's parameters in their order, the folder and whatever is not to be
        repeated (how the output is printed, a confirmation) left out by the caller. No
        password is ever among them: passwords come from the environment only.

    Returns
    -------
    list of str
        E.g. ``["replies", "--smtp", "mail.example.org:587"]``.
    """
    words: list[str] = []
    for param in params:
        if param.value is None or param.value == () or param.value is False:
            continue
        if not param.option:
            words += [str(v) for v in _values(param.value)]
        elif param.typed:
            words += _option_words(param)
    return words


def _values(value: Any) -> list[Any]:
    """Each value of a parameter given more than once (a tuple), else the one."""
    return list(value) if isinstance(value, tuple) else [value]


def _option_words(param: Typed) -> list[str]:
    """An option as typed: its long name, then its value (each value of one given
    more than once); a switch alone."""
    if param.switch:
        return [param.option]
    return [word for v in _values(param.value) for word in (param.option, _as_typed(v))]


def _as_typed(value: Any) -> str:
    """A parsed option value as the user could type it (``3.0`` days as ``3``)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)
