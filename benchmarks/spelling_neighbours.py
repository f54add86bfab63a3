"""The English words one slip from the intent vocabulary: what `investigator.spelling.NOT_SLIPS`
keeps as typed.

A word list is read (Debian's `wamerican`, /usr/share/dict/american-english, by default: `apt-get
install wamerican`); each of its words, lower case and without a possessive, that the
spelling rule would read as a vocabulary word (`spelling._slip` against `INTENT_WORDS`) is
printed, one a line, sorted. Compare with `NOT_SLIPS` after changing the vocabulary or the rule:

    PYTHONPATH=$PWD .venv/bin/python benchmarks/spelling_neighbours.py [WORDLIST]
    PYTHONPATH=$PWD .venv/bin/python benchmarks/spelling_neighbours.py --missing

`--missing` prints only the words `NOT_SLIPS` lacks (none, when it is up to date). A measurement
tool, not a test: the list is not installed with the project.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from investigator.spelling import INTENT_WORDS, NOT_SLIPS, _slip


def neighbours(path: Path) -> list[str]:
    words = {
        w.strip().lower()
        for w in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if w.strip().isascii() and w.strip().isalpha()
    }
    return sorted(w for w in words - INTENT_WORDS if any(_slip(w, v) for v in INTENT_WORDS))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("wordlist", nargs="?", default="/usr/share/dict/american-english")
    parser.add_argument("--missing", action="store_true")
    args = parser.parse_args()
    found = neighbours(Path(args.wordlist))
    for word in found:
        if not args.missing or word not in NOT_SLIPS:
            print(word)


if __name__ == "__main__":
    main()
