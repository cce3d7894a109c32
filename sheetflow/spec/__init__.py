"""The study spec: its data model, loading and checking, tables, and hash.

The public entry points are in :mod:`sheetflow.study`."""
