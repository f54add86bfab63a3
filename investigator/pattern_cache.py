"""The lazy patterns' compiled programs, kept across processes (issue 12).

Python's `re` parses a pattern and builds its matcher program in Python code: a cold seed
`investigate` spent about a tenth of its client CPU doing so for the planner's, the time
words' and the gate's patterns, the same ones in every new process. The program depends only
on the pattern's text, its flags and the interpreter (`sys.version`, `_sre.MAGIC`), so it is
kept in a file and handed back to `_sre.compile` (what `re.compile` itself ends with) in
later processes; `_sre.compile` validates the program it is given. A pattern whose text or
flags change is a new key and is compiled again; a file from another interpreter, an
unreadable or damaged one, or any error on this path means "compile as `re` does".

The file is a cache of what `re` would compute, never an input of its own: the compiled
pattern equals `re.compile(pattern, flags)` (`re.Pattern`'s equality compares the program),
which `tests/test_pattern_cache.py` checks for every lazy pattern. It lives where the
interpreter's own bytecode cache would (the user's cache directory) and is read with
`marshal`, as `.pyc` files are. Location: `INVESTIGATOR_PATTERN_CACHE` (`off` disables it),
else `$XDG_CACHE_HOME/graph-investigator/patterns.marshal`. Written once, when the process
ends (atexit, which the CLI's exit runs too), and only when it compiled a pattern the file
did not hold.
"""

from __future__ import annotations

import array
import atexit
import contextlib
import marshal
import os
import re
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

from cypher_templates.proofs import cache_file_path

PATTERN_CACHE_ENV = "INVESTIGATOR_PATTERN_CACHE"
_FORMAT = 1
# Bound (the code has about 220), so patterns from older versions of the code do not pile up:
# past it, only the programs this process used are kept.
MAX_PATTERNS = 1024

try:  # CPython's internals; anything else compiles as `re` does
    import _sre
    from re import _compiler, _parser  # type: ignore[attr-defined]

    _INTERPRETER: str | None = f"{sys.version}|{_sre.MAGIC}"
except (ImportError, AttributeError):  # pragma: no cover - not CPython 3.11+
    _INTERPRETER = None

# (pattern, flags) -> (flags, code, groups, groupindex, indexgroup): `_sre.compile`'s
# arguments, the code as 32-bit words in bytes (SRE's code unit; one copy, not an int each).
_Program = tuple[int, bytes, int, dict[str, int], tuple[str | None, ...]]

_lock = threading.Lock()
_kept: dict[tuple[str, int], _Program] | None = None
_used: set[tuple[str, int]] = set()
_fresh = False  # compiled a pattern the file does not hold, not yet written
_registered: list[object] = []


def default_pattern_cache_path() -> Path | None:
    """Where the programs are kept (None: not kept)."""
    return cache_file_path(PATTERN_CACHE_ENV, "patterns.marshal")


def _load() -> dict[tuple[str, int], _Program]:
    global _kept
    if _kept is not None:
        return _kept
    _kept = {}
    path = default_pattern_cache_path()
    if path is None or _INTERPRETER is None:
        return _kept
    try:
        # The user's own cache, read as the interpreter reads its `.pyc` files.
        raw = marshal.loads(path.read_bytes())  # noqa: S302
    except (OSError, ValueError, EOFError, TypeError):
        return _kept  # absent or damaged: compile again
    if (
        isinstance(raw, dict)
        and raw.get("format") == _FORMAT
        and raw.get("interpreter") == _INTERPRETER
        and isinstance(raw.get("programs"), dict)
    ):
        _kept = raw["programs"]
    return _kept


def compile_pattern(pattern: str, flags: int) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, its program taken from the file when it holds it."""
    global _fresh
    if _INTERPRETER is None or default_pattern_cache_path() is None:
        return re.compile(pattern, flags)
    key = (pattern, int(flags))
    with _lock:
        program = _load().get(key)
    if program is not None:
        try:
            compiled: re.Pattern[str] = _sre_compile(pattern, program)
        except Exception:  # a damaged entry: compile as `re` does
            return re.compile(pattern, flags)
        with _lock:
            _used.add(key)
        return compiled
    try:
        program = _program_of(pattern, int(flags))
        compiled = _sre_compile(pattern, program)
    except Exception:  # an error `re` reports in its own words
        return re.compile(pattern, flags)
    with _lock:
        assert _kept is not None
        _kept[key] = program
        _used.add(key)
        if not _fresh:
            if not _registered:
                _registered.append(atexit.register(_write))
            _fresh = True
    return compiled


def _sre_compile(pattern: str, program: _Program) -> re.Pattern[str]:
    flags, code, groups, groupindex, indexgroup = program
    words = array.array("I")
    words.frombytes(code)
    compiled: re.Pattern[str] = _sre.compile(
        pattern, flags, words.tolist(), groups, groupindex, indexgroup
    )
    return compiled


def _program_of(pattern: str, flags: int) -> _Program:
    # `re._compiler.compile`'s steps, keeping the arguments it hands to `_sre.compile`.
    parsed: Any = _parser.parse(pattern, flags)
    code = array.array("I", _compiler._code(parsed, flags)).tobytes()
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    return (
        int(flags | parsed.state.flags),
        code,
        parsed.state.groups - 1,
        groupindex,
        tuple(indexgroup),
    )


def write_new() -> None:
    """Write the file now if this process compiled a pattern it did not hold (the warm
    process, before it forks: its children then have nothing new to write)."""
    _write()


def _write() -> None:
    global _fresh
    path = default_pattern_cache_path()
    with _lock:
        if path is None or not _fresh:
            return
        _fresh = False
        programs = dict(_kept or {})
        if len(programs) > MAX_PATTERNS:
            programs = {k: v for k, v in programs.items() if k in _used}
    # A cache: a write that fails (read-only home, full disk) is compiled again next time.
    with contextlib.suppress(OSError, ValueError):
        data = marshal.dumps({"format": _FORMAT, "interpreter": _INTERPRETER, "programs": programs})
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".patterns-", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(data)
            os.replace(tmp, path)
        except OSError:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
