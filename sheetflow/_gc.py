"""Python's cyclic garbage collector paused over a bulk build of objects; the C
allocator's free pages handed back to the system after a large analysis."""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector during the block, then collect its cycles.

    Writing a pack or checking a returned one builds some 10^5 objects that live until
    the block ends, none of them garbage; as they pile up the collector would traverse
    them (and everything else alive) again and again, a fifth to a third of the time.
    Reference counting frees everything else as usual. Everything the block allocated
    is still in the youngest generation afterwards, so one young collection frees the
    cycles it left before the next block starts. The collector's previous state is
    restored.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
            gc.collect(0)


def release_free_memory() -> None:
    """Hand the C allocator's free pages back to the system (glibc; elsewhere nothing).

    glibc returns freed memory to the system only from the top of its heap: the pages
    of arrays freed below live ones stay in the process, counted in its resident size,
    until something of their size is allocated again. After an analysis of hundreds of
    raters that is some 20 MB, which the writing of its outputs would otherwise add
    its own temporaries to. ``malloc_trim(0)`` gives back every whole free page (a few
    milliseconds); Dask's workers do the same for the same reason.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
        return
    trim(0)
