"""`--debug` adds a traceback and changes nothing else: the one-line error and the documented
exit code stay, on the warm path (a child of the warm process) and on the cold one.

Runs `investigator` as a user types it, from a private copy of the packages with its own
socket directory (the `install` fixture of tests/test_launcher.py).
"""

from __future__ import annotations

import socket

import pytest
from test_launcher import Install, demo_graph, install  # noqa: F401 (fixtures)

UNKNOWN = ["runs", "--subject", "acme/nobody"]
UNKNOWN_LINE = "error: unknown subject 'nobody' in tenant 'acme'\n"


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_debug_keeps_the_message_and_exit_code_of_an_expected_error(
    install: Install,  # noqa: F811
    warm: bool,
) -> None:
    if warm:
        install.start()
        assert install.wait_for(running=True)["running"] is True

    plain = install.run(*UNKNOWN, warm=warm)
    assert (plain.returncode, plain.stdout, plain.stderr) == (3, "", UNKNOWN_LINE)

    debug = install.run("--debug", *UNKNOWN, warm=warm)
    assert debug.returncode == 3, debug.stderr
    assert debug.stdout == ""
    assert debug.stderr.startswith("Traceback (most recent call last):")
    assert debug.stderr.endswith(UNKNOWN_LINE)  # the one line is still the last line

    if warm:
        assert int(install.status()["served"]) >= 2  # type: ignore[call-overload]


def test_debug_keeps_exit_4_when_neo4j_is_unreachable(install: Install) -> None:  # noqa: F811
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    install.env["NEO4J_URI"] = f"neo4j://127.0.0.1:{port}"
    for warm in (True, False):
        res = install.run("--debug", "runs", "--subject", "acme/user:bob", warm=warm)
        assert res.returncode == 4, res.stderr
        assert "Traceback" in res.stderr
        last = res.stderr.splitlines()[-1]
        assert last.startswith("error: Neo4j is unavailable")
