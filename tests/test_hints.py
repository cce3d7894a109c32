"""The one builder of the whole commands hints name: the folder as given, then the
parameters as the user typed them (an argument always, an option only when typed)."""

from __future__ import annotations

from pathlib import Path

from sheetflow.hints import Typed, command_line, typed_words


def test_a_command_names_the_folder_and_quotes_what_a_shell_reads_apart():
    assert command_line("collect", Path("studies/x")) == "sheetflow collect studies/x"
    assert command_line("send", "a b", "replies", "--rater", "R$1") == \
        'sheetflow send "a b" replies --rater "R\\$1"'


def test_the_words_of_a_rerun_are_the_parameters_as_typed():
    params = [Typed("reminders"), Typed(("a.eml", "b c.eml")),
              Typed(True, option="--dry-run", switch=True),
              Typed(False, option="--resend", switch=True),
              Typed(("EV-01", "EV-02"), option="--rater"),
              Typed(3.0, option="--min-days", typed=False),  # its default: not repeated
              Typed(2.0, option="--max-days"), Typed(None, option="--smtp")]
    assert typed_words(params) == ["reminders", "a.eml", "b c.eml", "--dry-run",
                                   "--rater", "EV-01", "--rater", "EV-02",
                                   "--max-days", "2"]
    assert command_line("fetch", "s", *typed_words([Typed(("b c.eml",))])) == \
        'sheetflow fetch s "b c.eml"'
