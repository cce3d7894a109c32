"""``python -m sheetflow``: the same as the ``sheetflow`` command."""

from .cli import main

if __name__ == "__main__":
    main()
