"""What the ``sheetflow`` command says when Ctrl-C stops it.

Kept apart from :mod:`sheetflow.cli` (which loads click and every command) so that the
entry point (:mod:`sheetflow.__main__`) can say the same while those are still loading.
"""

from __future__ import annotations

EXIT_INTERRUPTED = 130  # the shell's code for a process stopped by Ctrl-C (128 + SIGINT)
INTERRUPTED = "interrupted (Ctrl-C) before the end: run the same command again"
