"""The lazy patterns' compiled programs kept across processes (issue 12).

A new process that finds the programs kept by an earlier one parses none of the patterns it
uses again, and what it builds from them is `re.compile`'s pattern (equal program, same
matches); a damaged or foreign file, or the cache turned off, means compiling as `re` does.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SEED = (
    "Was the 10:02 release of payment-api related to the PAY-4097 errors? "
    "Who owned the service at that moment? Which runbook version applied?"
)

# Plans the seed question's intents in this new process, counting the patterns `re` parses
# for a lazy pattern (a parse with `lazy_pattern` among its callers).
_PLAN = """
import json, re, sys
from re import _parser
parsed = []
_parse = _parser.parse
def counting_parse(p, flags=0, *a):
    frame = sys._getframe(1)
    while frame is not None:
        if frame.f_code.co_filename.endswith("lazy_pattern.py"):
            parsed.append(str(p))
            break
        frame = frame.f_back
    return _parse(p, flags, *a)
_parser.parse = counting_parse
from investigator import planner
from investigator.lazy_pattern import _MADE
intents = sorted(str(i) for i in planner.detect_intents(sys.argv[1]))
used = [p for p in _MADE if p.is_compiled]
print(json.dumps({
    "intents": intents,
    "used": len(used),
    "lazy_parsed": len(parsed),
    "equal": all(p.compiled == re.compile(p.pattern, p.flags) for p in used),
}))
"""


def _plan(cache: str) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", _PLAN, SEED],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO,
        env={**os.environ, "INVESTIGATOR_PATTERN_CACHE": cache},
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_second_process_parses_none_of_the_lazy_patterns_the_first_compiled(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "patterns.marshal"
    first = _plan(str(cache))
    # (`re`'s own cache answers for a text some other code compiled first.)
    assert first["used"] > 20 and first["lazy_parsed"] > 20, first
    assert cache.is_file()

    second = _plan(str(cache))
    assert second["lazy_parsed"] == 0, second
    assert second["intents"] == first["intents"]
    assert second["used"] == first["used"]
    assert second["equal"] and first["equal"]


def test_a_damaged_file_or_the_cache_off_compiles_as_re_does(tmp_path: Path) -> None:
    off = _plan("off")
    assert off["lazy_parsed"] > 20 and off["equal"], off

    cache = tmp_path / "patterns.marshal"
    cache.write_bytes(b"\x00not a marshal file")
    damaged = _plan(str(cache))
    assert damaged["intents"] == off["intents"]
    assert damaged["lazy_parsed"] >= off["lazy_parsed"] and damaged["equal"], damaged
    # Rewritten whole by the process that found it damaged: the next one parses nothing.
    assert _plan(str(cache))["lazy_parsed"] == 0


def test_every_lazy_pattern_from_the_kept_program_equals_re_compile(tmp_path: Path) -> None:
    script = (
        "import re\n"
        "from investigator import planner, timeline, gate, ownership_history\n"
        "from investigator.lazy_pattern import _MADE, compile_all\n"
        "compile_all()\n"
        "bad = [p.pattern[:60] for p in _MADE if p.compiled != re.compile(p.pattern, p.flags)]\n"
        "print(len(_MADE), bad)\n"
    )
    env = {**os.environ, "INVESTIGATOR_PATTERN_CACHE": str(tmp_path / "p.marshal")}
    outs = [
        subprocess.run(
            [sys.executable, "-c", script],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=REPO,
            env=env,
            check=True,
        ).stdout.split(maxsplit=1)
        for _ in range(2)  # compiled by `re`, then built from the kept programs
    ]
    for made, bad in outs:
        assert int(made) > 100
        assert bad.strip() == "[]"
