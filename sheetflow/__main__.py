"""``python -m sheetflow`` and the ``sheetflow`` command's entry point.

Loading click and the commands takes a few tenths of a second; Ctrl-C then ends as it
does during a command (one line, exit 130), not with a traceback.
"""

from __future__ import annotations

import json
import sys
from typing import NoReturn

from .interrupted import EXIT_INTERRUPTED, INTERRUPTED


def main() -> None:
    """Load the command line and run it."""
    try:
        from .cli import main as run
    except KeyboardInterrupt:
        _interrupted()
    run()


def _interrupted() -> NoReturn:
    """Say what a command stopped by Ctrl-C says (in JSON too, with ``--json``), exit 130.

    Nothing has run yet, so running the same command again is all there is to do.
    """
    if "--json" in sys.argv[1:]:
        doc = {"ok": False, "exit_code": EXIT_INTERRUPTED, "errors": [INTERRUPTED]}
        print(json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False))
    print(f"\n{INTERRUPTED}", file=sys.stderr)
    sys.exit(EXIT_INTERRUPTED)


if __name__ == "__main__":
    main()
