"""Every command honours Ctrl-C, also a press that lands in a finalizer.

Python's handler raises KeyboardInterrupt wherever the interpreter is; in a finalizer (the
driver's `Workspace.__del__`, run by the GC at any allocation) it is printed as "Exception
ignored ... KeyboardInterrupt" and dropped. Until session 39 only the ingest's writer held
Ctrl-C (tests/test_interrupted_ingest_count.py): `schema apply`, `purge`, `investigate`, ...
then went on and ended 0 as if nothing was pressed. Now the CLI's dispatch holds Ctrl-C for
every command (graph_schema/ctrl_c.py): a press stops the command with exit 130 and the one
line `error: interrupted (Ctrl-C)`, at a safe point of its own (a run's finish, purge's
steps) or else at its end, and nothing is half-written: an interrupted run is recorded
`interrupted`, a purge stopped part way leaves its run `incomplete` (as a press that raised
does) and the same purge finishes it.

Here a finalizer presses Ctrl-C (`signal.raise_signal`) at a chosen moment, on the real
server: deterministic, where tests/test_interrupt_cli.py sends a real SIGINT at a moment it
cannot choose.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable
from typing import Any

import neo4j
import pytest
from test_purge import PURGED_DOC, _doc_texts, purge_world  # noqa: F401 (a fixture)

INTERRUPTED = "error: interrupted (Ctrl-C)\n"
QUESTION = "Was the 10:02 release of payment-api related to the PAY-4097 errors?"
AS_OF = ("--as-of", "2026-07-23T10:03:00Z")
AUDIT = ("--subject", "acme/user:alice", "--purpose", "audit")


class _PressesCtrlCWhenFreed:
    """An object whose finalizer presses Ctrl-C: the moment the GC frees a driver object."""

    def __del__(self) -> None:
        signal.raise_signal(signal.SIGINT)


def _pressing_once(real: Callable[..., Any], *, before: bool = False) -> Callable[..., Any]:
    """`real`, which on its first call presses Ctrl-C from a finalizer (after its work, or
    `before` it)."""
    pressed: list[bool] = []

    def call(*args: Any, **kwargs: Any) -> Any:
        if before and not pressed:
            pressed.append(True)
            _PressesCtrlCWhenFreed()  # freed at once: its finalizer runs here
        result = real(*args, **kwargs)
        if not pressed:
            pressed.append(True)
            _PressesCtrlCWhenFreed()
        return result

    return call


# -- schema apply, as the console script runs it ----------------------------------------------

_SCHEMA_APPLY = textwrap.dedent(
    """
    import signal, sys
    import investigator.cli.schema as schema

    class Presses:
        def __del__(self):
            signal.raise_signal(signal.SIGINT)

    real = schema.apply_schema

    def apply_schema(*args, **kwargs):
        report = real(*args, **kwargs)
        Presses()  # freed at once: its finalizer presses Ctrl-C
        return report

    schema.apply_schema = apply_schema
    from investigator.cli import main

    sys.argv = ["investigator", *sys.argv[1:]]
    main()
    """
)


def test_schema_apply_stops_on_a_ctrl_c_pressed_in_a_finalizer(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env
) -> None:
    for json_out in ([], ["--json"]):
        # The console script's own process: what the user's terminal shows.
        done = subprocess.run(
            [sys.executable, "-c", _SCHEMA_APPLY, "schema", "apply", *json_out],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "INVESTIGATOR_WARM": "0"},
            check=False,
        )
        # Before: "Exception ignored in: <function Presses.__del__ ...> ... KeyboardInterrupt"
        # on stderr, and exit 0.
        assert (done.returncode, done.stderr) == (130, INTERRUPTED), done
        if json_out:
            # Pressed once the schema was applied and said: stdout stays its one document.
            [line] = done.stdout.splitlines()
            assert "error" not in json.loads(line) and "present" in json.loads(line), done


def test_a_handler_the_caller_installed_keeps_its_ctrl_c(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    import investigator.cli.schema as schema

    monkeypatch.setattr(schema, "apply_schema", _pressing_once(schema.apply_schema))
    presses: list[int] = []

    def theirs(signum: int, _frame: object) -> None:
        presses.append(signum)

    previous = signal.signal(signal.SIGINT, theirs)
    try:
        res = invoke("schema", "apply")
        assert signal.getsignal(signal.SIGINT) is theirs
    finally:
        signal.signal(signal.SIGINT, previous)
    # Their handler had the press, and decided: not ours to stop the command.
    assert presses == [signal.SIGINT] and res.code == 0, res


# -- ingest, after its writer -----------------------------------------------------------------


def test_an_ingest_stops_on_a_ctrl_c_pressed_in_a_finalizer_after_its_writer(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import investigator.cli.ingest as ingest

    bundle = tmp_path / "synth.json"
    made = invoke("generate", "--services", "3", "--seed", "3", "--tenant", "synthqa",
                  "--out", str(bundle))  # fmt: skip
    assert made.code == 0 and invoke("schema", "apply").code == 0
    # Pressed while the ingest looks for elements an earlier ingest of the file held, once
    # every record is written. Before: exit 0.
    with monkeypatch.context() as patched:
        patched.setattr(
            ingest, "absent_since_last_ingest", _pressing_once(ingest.absent_since_last_ingest)
        )
        res = invoke("ingest", str(bundle))
    assert res.code == 130, res
    assert res.err.splitlines()[-1] == (
        "error: interrupted (Ctrl-C) after the import's records were written, while it noted "
        "which files it read: run the same ingest again to finish"
    ), res
    assert invoke("ingest", str(bundle)).code == 0


# -- investigate ------------------------------------------------------------------------------


def _runs_of(invoke, question: str) -> list[dict[str, object]]:  # type: ignore[no-untyped-def]
    listed = invoke("runs", *AUDIT, "--limit", "200", "--json")
    assert listed.code == 0, listed
    return [r for r in json.loads(listed.out)["runs"] if r["question"] == question]


def test_investigate_stops_on_a_ctrl_c_pressed_in_a_finalizer_and_records_it(  # type: ignore[no-untyped-def]
    demo_graph: neo4j.Driver, cli_env, invoke, monkeypatch: pytest.MonkeyPatch
) -> None:
    from investigator.session import RunSession

    question = f"{QUESTION} (Ctrl-C in a finalizer)"
    with monkeypatch.context() as patched:
        patched.setattr(RunSession, "begin_round", _pressing_once(RunSession.begin_round))
        res = invoke("investigate", question, "--subject", "acme/user:bob", *AS_OF, "--json")
    # Before: exit 0, the answer printed and the run recorded `complete`.
    assert res.code == 130, res
    assert res.err == INTERRUPTED, res
    assert json.loads(res.out)["error"]["code"] == "interrupted", res
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler  # restored
    [run] = _runs_of(invoke, question)
    assert (run["status"], run["stop_reason"]) == ("failed", "interrupted"), run


# -- purge ------------------------------------------------------------------------------------


def _purge_run_statuses(driver: neo4j.Driver) -> list[str]:
    records, _, _ = driver.execute_query(
        "MATCH (r:CtxRun {command: 'purge'}) RETURN r.status AS s ORDER BY s"
    )
    return [str(r["s"]) for r in records]


PURGE = ("purge", PURGED_DOC, "--tenant", "acme", "--subject", "user:counsel", "--reason", "x")


def test_purge_stops_on_a_ctrl_c_pressed_in_a_finalizer_and_the_same_purge_finishes_it(  # type: ignore[no-untyped-def]
    purge_world: tuple[neo4j.Driver, str],  # noqa: F811 (the fixture imported above)
    cli_env,
    invoke,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import investigator.cli.purge as purge

    driver, _ = purge_world
    # Pressed while the purge is authorized and checked: nothing is written, no run.
    with monkeypatch.context() as patched:
        patched.setattr(purge, "record_count", _pressing_once(purge.record_count))
        res = invoke(*PURGE)
    assert (res.code, res.out, res.err) == (130, "", INTERRUPTED), res
    assert _purge_run_statuses(driver) == [] and _doc_texts(driver) != []

    # Pressed while the KG's text is purged: stopped before the lineage, its run left
    # `incomplete` (as a press that raised there leaves it). Before: exit 0, run complete.
    with monkeypatch.context() as patched:
        patched.setattr(purge, "purge_content", _pressing_once(purge.purge_content))
        res = invoke(*PURGE)
    assert (res.code, res.out, res.err) == (130, "", INTERRUPTED), res
    assert _purge_run_statuses(driver) == ["incomplete"]

    # The same purge, not interrupted, finishes it.
    res = invoke(*PURGE)
    assert res.code == 0 and res.out.startswith(f"purged {PURGED_DOC} in tenant acme"), res
    assert _purge_run_statuses(driver) == ["complete", "incomplete"]
    assert _doc_texts(driver) == []
