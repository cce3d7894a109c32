"""Names a package loads on first use (PEP 562), so importing it stays cheap."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, modules: dict[str, str],
                 namespace: dict[str, Any]) -> Callable[[str], Any]:
    """A module-level ``__getattr__`` for ``package``.

    Parameters
    ----------
    package : str
        The package's ``__name__``.
    modules : dict of str to str
        Each public name -> the submodule (relative to ``package``) that defines it.
    namespace : dict
        The package's ``globals()``: a name, once imported, is kept there, so the
        submodule is looked up once.
    """
    def __getattr__(name: str) -> Any:
        module = modules.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(f".{module}", package), name)
        namespace[name] = value
        return value

    return __getattr__


def lazy_dir(modules: dict[str, str], namespace: dict[str, Any]) -> Callable[[], list[str]]:
    """A module-level ``__dir__`` that lists the lazy names beside those loaded."""
    def __dir__() -> list[str]:
        return sorted([*namespace, *modules])

    return __dir__
