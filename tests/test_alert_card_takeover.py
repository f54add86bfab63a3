"""A runbook whose file name matches an alert only ignoring letter case does not take the
alert's card from the runbook named exactly after it, through the real CLI on a real Neo4j."""

from __future__ import annotations

from pathlib import Path

import neo4j
from conftest import ingest_oncall_principals

RULES = """groups:
  - name: cart
    rules:
      - alert: CartHighErrorRate
        expr: sum(rate(http_requests_total{job="cart",code=~"5.."}[5m])) > 0.05
        annotations:
          summary: cart 5xx above 5 percent
"""

SUBJECT = ("--subject", "acme/user:oncall")


def _folder(root: Path, name: str, files: dict[str, str]) -> Path:
    folder = root / name
    folder.mkdir()
    for file, text in files.items():
        (folder / file).write_text(text, encoding="utf-8")
    return folder


def _ingest_markdown(invoke, folder: Path):  # type: ignore[no-untyped-def]
    args = ("--format", "markdown-runbooks", "--tenant", "acme", "--acl", "sre")
    result = invoke("ingest", str(folder), *args)
    assert result.code == 0, result
    return result


def test_a_case_only_look_alike_does_not_take_the_alert_card(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    ingest_oncall_principals(invoke, tmp_path, "acme")
    exact = (
        "# CartHighErrorRate\n\nAlert CartHighErrorRate fires.\n\n"
        "## Steps\n1. Look at the cart dashboard.\n"
    )
    _ingest_markdown(invoke, _folder(tmp_path, "cartbooks", {"CartHighErrorRate.md": exact}))
    (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
    rules = invoke(
        "ingest", str(tmp_path / "rules.yaml"), "--format", "prometheus-rules",
        "--tenant", "acme", "--acl", "sre",
    )  # fmt: skip
    assert rules.code == 0, rules
    twin = "# carthigherrorrate\n\n## Steps\n1. Lowercase twin: scale cart.\n"
    codes = _folder(tmp_path, "codes", {"carthigherrorrate.md": twin})
    later = _ingest_markdown(invoke, codes)
    out = later.out + later.err
    assert "linked: runbook:carthigherrorrate" not in out, out
    assert (
        f"skipped: {codes / 'carthigherrorrate.md'}: not linked to alert:CartHighErrorRate: the "
        "file name 'carthigherrorrate' matches it only ignoring letter case, and "
        "runbook:CartHighErrorRate already has it"
    ) in out, out
    for ask in (
        ("runbook", "--alert", "CartHighErrorRate"),
        ("runbook", "CartHighErrorRate is firing, what do I do"),
        (
            "runbook",
            "[FIRING:1] CartHighErrorRate (cart critical)\nsummary: cart 5xx above 5 percent",
        ),
    ):
        card = invoke(*ask, *SUBJECT)
        assert card.code == 0, card
        assert "[runbook:CartHighErrorRate" in card.out, card.out
        assert "Lowercase twin" not in card.out, card.out


def test_the_page_that_names_an_error_code_wins_over_an_alert_page(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    ingest_oncall_principals(invoke, tmp_path, "acme")
    pages = {
        "cart-500.md": "# CART-500 checkout failures\n\n## Steps\n1. Check cart pods.\n",
        "CartHighErrorRate.md": (
            "# CartHighErrorRate\n\nAlert CartHighErrorRate fires when cart 5xx > 5%.\n\n"
            "## Steps\n1. Look at the cart dashboard.\n"
        ),
    }
    _ingest_markdown(invoke, _folder(tmp_path, "cartbooks", pages))
    card = invoke("runbook", "CART-500", *SUBJECT)
    assert card.code == 0, card
    assert card.out.startswith("Runbook   CART-500 checkout failures  [runbook:cart-500"), card.out
    assert "alike" not in card.out, card.out
    assert "first by id only" not in card.out, card.out


def test_a_linked_look_alike_goes_under_also_when_a_page_is_named_exactly(  # type: ignore[no-untyped-def]
    clean_db: neo4j.Driver, cli_env: object, invoke, tmp_path: Path
) -> None:
    ingest_oncall_principals(invoke, tmp_path, "acme")
    (tmp_path / "rules.yaml").write_text(RULES, encoding="utf-8")
    rules = invoke(
        "ingest", str(tmp_path / "rules.yaml"), "--format", "prometheus-rules",
        "--tenant", "acme", "--acl", "sre",
    )  # fmt: skip
    assert rules.code == 0, rules
    exact = "# CartHighErrorRate\n\n## Steps\n1. Look at the cart dashboard.\n"
    _ingest_markdown(invoke, _folder(tmp_path, "cartbooks", {"CartHighErrorRate.md": exact}))
    # Linked on purpose by its front matter: still a look-alike of the exactly named page.
    twin = (
        "---\nalerts: [CartHighErrorRate]\n---\n# carthigherrorrate\n\n"
        "## Steps\n1. Lowercase twin: scale cart.\n"
    )
    _ingest_markdown(invoke, _folder(tmp_path, "codes", {"carthigherrorrate.md": twin}))
    for ask in (
        ("runbook", "--alert", "CartHighErrorRate"),
        ("runbook", "[FIRING:1] CartHighErrorRate (cart critical)\nsummary: cart 5xx"),
    ):
        card = invoke(*ask, *SUBJECT)
        assert card.code == 0, card
        lines = card.out.splitlines()
        assert lines[0].startswith("Runbook   CartHighErrorRate  [runbook:CartHighErrorRate"), card
        assert (
            "Note      runbook:CartHighErrorRate is named exactly after alert:CartHighErrorRate "
            "and is shown; runbook:carthigherrorrate, linked to it, is named like it in letter "
            "case only (under Also)"
        ) in card.out, card.out
        assert "Also      carthigherrorrate  [runbook:carthigherrorrate]" in lines, card.out
