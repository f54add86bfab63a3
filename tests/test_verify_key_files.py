"""`verify` when the files kept outside the database are missing, replaced or hostile.

The chain key (`chain.key`) and this machine's record of each ledger head (`chain-heads/`)
live in the state folder (docs/context-graph.md, "Anchors and `verify`"). Whatever is put
there (nothing, a folder, a FIFO, a link to /dev/zero, a huge or deeply nested file, bytes
that are not UTF-8), `verify` answers with one line and exit 1, never a traceback, never a
hang, and never `verified: true` for anchors it could not check.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import invoke_process
from test_ledger import chain_dir, demo_runs  # noqa: F401  (fixtures)

AUDIT = ("--subject", "acme/user:auditor", "--purpose", "audit")


def _acme_head_file(folder: Path) -> Path:
    (head,) = (
        path
        for path in (folder / "chain-heads").iterdir()
        if json.loads(path.read_text(encoding="utf-8"))["name"].endswith("/acme")
    )
    return head


def _one_line_not_verified(res: object, says: str) -> None:
    code, out, err = res.code, res.out, res.err  # type: ignore[attr-defined]
    assert code == 1, res
    assert "verified:          true" not in out and '"verified":true' not in out
    assert err.count("\n") == 1 and err.startswith("error: "), err
    assert "Traceback" not in err and says in err, err


@pytest.mark.parametrize("kind", ["missing", "folder", "not utf-8", "huge"])
def test_a_missing_or_hostile_chain_key_is_one_line_never_verified(  # type: ignore[no-untyped-def]
    demo_runs: list[str],  # noqa: F811
    chain_dir: Path,  # noqa: F811
    cli_env,
    invoke,
    kind: str,
) -> None:
    alice = demo_runs[0]
    key = chain_dir / "chain.key"
    key.unlink()
    if kind == "folder":
        key.mkdir()
    elif kind == "not utf-8":
        key.write_bytes(b"\xff\xfe\xfd")
    elif kind == "huge":
        key.write_bytes(b"a" * 5_000_000)
    for args in ((alice, "--subject", "acme/user:alice"), AUDIT):
        res = invoke("verify", *args)
        _one_line_not_verified(res, "error: cannot read the chain key:")


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero"])
def test_a_chain_key_that_never_ends_is_refused_not_waited_on(  # type: ignore[no-untyped-def]
    demo_runs: list[str],  # noqa: F811
    chain_dir: Path,  # noqa: F811
    cli_env,
    kind: str,
) -> None:
    key = chain_dir / "chain.key"
    key.unlink()
    if kind == "fifo":
        os.mkfifo(key)
    else:
        key.symlink_to("/dev/zero")
    res = invoke_process("verify", demo_runs[0], "--subject", "acme/user:alice", timeout=60)
    _one_line_not_verified(res, "is not a regular file")


@pytest.mark.parametrize("kind", ["nested", "folder", "fifo", "/dev/zero", "another tenant's"])
def test_an_unreadable_ledger_head_record_is_a_problem_not_ignored(  # type: ignore[no-untyped-def]
    demo_runs: list[str],  # noqa: F811
    chain_dir: Path,  # noqa: F811
    cli_env,
    kind: str,
) -> None:
    head = _acme_head_file(chain_dir)
    kept = json.loads(head.read_text(encoding="utf-8"))
    head.unlink()
    if kind == "nested":
        head.write_text("[" * 60_000, encoding="utf-8")
    elif kind == "folder":
        head.mkdir()
    elif kind == "fifo":
        os.mkfifo(head)
    elif kind == "/dev/zero":
        head.symlink_to("/dev/zero")
    else:
        head.write_text(json.dumps({**kept, "name": "store/globex"}), encoding="utf-8")
    res = invoke_process("verify", *AUDIT, timeout=60)
    _one_line_not_verified(res, "ledger_head_unreadable: this machine's record of the ledger head")
    assert "verified:          false" in res.out


def test_a_fifo_or_device_swapped_in_for_a_listed_input_file_is_refused_not_waited_on(
    tmp_path: Path,
) -> None:
    """Every importer reads its listed files through `read_local_file`: a file replaced by
    a FIFO after it was listed (a file that changes while read) is refused, never waited on."""
    import subprocess
    import sys

    fifo = tmp_path / "runbook.md"
    os.mkfifo(fifo)
    probe = (
        "import sys; from pathlib import Path\n"
        "from graph_schema.local_files import read_local_file\n"
        "try:\n    read_local_file(Path(sys.argv[1]), 1000)\n"
        "except OSError as exc:\n    print('refused:', exc)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(fifo)], capture_output=True, text=True, timeout=30
    )
    assert done.stdout.strip() == f"refused: {fifo} is not a regular file", done
