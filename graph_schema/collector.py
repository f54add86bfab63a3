"""Python's cyclic garbage collector, paused while a bundle is generated, written, loaded or
ingested.

These allocate millions of containers: models, drafts, rows, the driver's packing. Their count
triggers full collections, and each full collection walks every live container, the loaded
bundle's included. On 101,565 elements that was 2 s of a 4.3 s load and 2.5-3.5 s of a
15-17 s first ingest (docs/benchmarks.md), holding the interpreter while Neo4j waited for the
next batch. Reference counting still frees everything as it goes; only reference cycles wait.
The one large source of cycles is the neo4j driver: each statement's parameters, a batch's
rows, stay in a cycle with its result. The writer hands them back after every write with a
young collection (`collect_young`), which walks only what was allocated since the last one;
a tenant's first ingest empties each batch's list of rows after its write instead.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_pauses = 0  # pauses in progress, in any thread
_enabled_before = False


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Disable the cyclic collector for the block (or the decorated call).

    Pauses may overlap, in one thread or several: the collector is enabled again when the last
    one ends, and only if it was enabled when the first began.
    """
    global _pauses, _enabled_before
    with _lock:
        if _pauses == 0:
            _enabled_before = gc.isenabled()
            gc.disable()
        _pauses += 1
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _enabled_before:
                gc.enable()


def collect_young() -> None:
    """During a pause that disabled the collector, free the reference cycles made since the
    last collection (a collector its caller disabled is left alone).

    The neo4j driver keeps each statement's parameters in a reference cycle between its result
    and its transaction. Left to the pause's end, an ingest's written rows piled up: 1.6 GB more
    at a peak of 5.3 GB when a tenant grew to a million elements (docs/benchmarks.md).
    """
    if _pauses and _enabled_before:
        gc.collect(0)
