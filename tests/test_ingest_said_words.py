"""What an ingest says of what it did not write. On a real Neo4j, through the CLI (a real
SIGINT to a real `investigator ingest` process).

Before: Ctrl-C while an import's files were read and checked said only `error: interrupted
(Ctrl-C)`, leaving the user to wonder what of the folder was in the graph; and an element
deleted from a bundle file, the file ingested again, stayed current without a word (only a
retraction ends a record, docs/contracts.md).
"""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path

import neo4j
import yaml
from test_interrupt_cli import _count, _interrupt_when, _process

TENANT = "readphase"
PAGE = "---\ntitle: Widget {n}\n---\n\n## Steps\n\n1. Restart widget {n}.\n2. Check widget {n}.\n"


def _reading(pid: int, folder: Path) -> bool:
    """Whether process `pid` has a file or the folder itself open under `folder`."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        return False
    for fd in fds:
        try:
            if os.readlink(f"/proc/{pid}/fd/{fd}").startswith(str(folder)):
                return True
        except OSError:
            continue
    return False


def test_ctrl_c_while_the_files_are_read_says_nothing_was_written(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, tmp_path: Path
) -> None:
    # The read phase is short: on a busy machine the poll may first look after it ended (the
    # ingest then finishes, exit 0). Each such miss tries again with twice the pages, in a
    # tenant of its own; what is asserted is what a Ctrl-C that lands while reading says.
    for attempt, pages in enumerate((3000, 6000, 12000)):
        tenant = f"{TENANT}{attempt}"
        folder = tmp_path / f"widgets-{attempt}"
        folder.mkdir()
        for n in range(pages):
            (folder / f"widget-{n}.md").write_text(PAGE.format(n=n), encoding="utf-8")
        proc = _process(
            "ingest",
            str(folder),
            "--format",
            "markdown-runbooks",
            "--tenant",
            tenant,
            "--acl",
            "sre",
        )
        code, out, err = _interrupt_when(proc, partial(_reading, proc.pid, folder))
        if code != 0:
            break
    assert code == 130, (code, out, err)
    assert err.splitlines() == [
        "error: interrupted (Ctrl-C) while the import's files were read and checked, before "
        "any record was written: nothing was written"
    ], err
    assert _count(clean_db, "MATCH (n:KG {tenant: $t}) RETURN count(n) AS c", t=tenant) == 0


SOURCE = {
    "source_id": "src:cmdb",
    "source_type": "cmdb",
    "trust": "trusted",
    "allowed_purposes": ["incident_investigation"],
}


def _bundle(path: Path, *services: str, tenant: str = "shop") -> Path:
    nodes = [
        {"id": f"svc:{name}", "label": "Service", "source_id": "src:cmdb", "props": {"name": name}}
        for name in services
    ]
    bundle = {"tenant": tenant, "sources": [SOURCE], "nodes": nodes}
    path.write_text(yaml.safe_dump(bundle, sort_keys=False), encoding="utf-8")
    return path


def _current(driver: neo4j.Driver, ident: str) -> int:
    return _count(
        driver,
        "MATCH (n:KG {tenant: 'shop', id: $id}) WHERE n.superseded_at IS NULL "
        "AND n.status = 'active' RETURN count(n) AS c",
        id=ident,
    )


def test_an_element_deleted_from_a_bundle_is_named_as_still_current(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    path = _bundle(tmp_path / "b.yaml", "e31-a", "e31-b", "e31-c")
    first = invoke("ingest", str(path))
    # The first tenant of an empty graph: no note of a new tenant (every graph starts so).
    assert first.code == 0 and "absent:" not in first.err and "new tenant" not in first.err

    _bundle(path, "e31-a")
    again = invoke("ingest", str(path))
    assert again.code == 0, again
    assert (
        "ingest: absent: 2 elements of tenant shop that an earlier ingest of this path "
        "held are not in it now: svc:e31-b, svc:e31-c; they stay current (only a retraction ends "
        "a record: add one to the bundle's `retractions`, docs/contracts.md)\n"
    ) in again.err, again.err
    assert _current(clean_db, "svc:e31-b") == 1  # as said: still current

    # Said again until retracted; one retracted by the next ingest is ended, not named.
    bundle = yaml.safe_load(path.read_text(encoding="utf-8"))
    bundle["retractions"] = [
        {"id": "svc:e31-b", "reason": "decommissioned", "at": "2026-07-01T00:00:00Z"}
    ]
    path.write_text(yaml.safe_dump(bundle, sort_keys=False), encoding="utf-8")
    retracted = invoke("ingest", str(path))
    assert retracted.code == 0, retracted
    assert _current(clean_db, "svc:e31-b") == 0
    assert (
        "absent: 1 element of tenant shop that an earlier ingest of this path held is not "
        "in it now: svc:e31-c; it stays current"
    ) in retracted.err, retracted.err


def test_a_first_ingest_into_a_tenant_of_no_records_says_so(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env, invoke, tmp_path: Path
) -> None:
    assert invoke("ingest", str(_bundle(tmp_path / "shop.yaml", "cart"))).code == 0
    # A typo'd tenant: written (a note, not a refusal), said in one line naming no other.
    typo = invoke("ingest", str(_bundle(tmp_path / "shpo.yaml", "cart", tenant="shpo")))
    assert typo.code == 0, typo
    said = [line for line in typo.err.splitlines() if "new tenant" in line]
    assert said == [
        "ingest: new tenant shpo: no records of it before this ingest (its records are "
        "written under that name: check it is the tenant you meant)"
    ], typo.err
    assert "shop" not in typo.err, typo.err
    # Its next ingest: the tenant has records now.
    again = invoke("ingest", str(_bundle(tmp_path / "shpo.yaml", "cart", "till", tenant="shpo")))
    assert again.code == 0 and "new tenant" not in again.err, again
