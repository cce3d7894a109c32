"""The workbook contract both sides import: where every cell of a pack is (:mod:`.layout`).

The writer side is in :mod:`sheetflow.packs`, the reader side in :mod:`sheetflow.collect`."""
