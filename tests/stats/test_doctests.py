"""Run the docstring examples of sheetflow.stats (several reproduce published values)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ["agreement", "alpha", "chance", "effects", "gwet", "hypothesis_tests", "icc",
           "intervals", "kappa", "proportions", "scores"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"sheetflow.stats.{name}")
    result = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0
    assert result.failed == 0
