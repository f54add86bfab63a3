"""What a hurried on-call types into `investigator runbook`, on a file of one `###` section
per alert (Mimir's runbooks page) and the alert rules that point at it, on a real Neo4j.

- The page's text pasted, its `{{ $labels.x }}` filled in by Alertmanager, reaches the
  alert's section. Before, the label values (cluster, pod) made every alert fall short of
  covering the query, and the lookup answered "no runbook fits" (27 of 83 Mimir alerts found
  their section).
- A section that only says it is the same as another ("Same as VaultX") shows that one's
  steps, saying so; text that lands on the file's opening names the closest sections.
- A typo in `--alert` suggests the alert names the subject may see, section headings of
  the runbooks it may read included, never a hidden runbook's.
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
import yaml
from conftest import ingest_as, runbook_json

FIXTURES = Path(__file__).parent / "fixtures"
CATALOG = FIXTURES / "runbooks" / "catalogs" / "acme.yaml"

# Written for these tests, in the style of a page of one section per alert.
_RUNBOOKS = """# Vault store runbooks

This page says what to look at for each alert of the vault store. It assumes the store
runs with three zones and a bucket per tenant.

## Alerts

### VaultIngesterUnhealthy

This alert goes off when a vault ingester is marked unhealthy in the ring.

How to **fix** it:

- Restart the unhealthy ingester pod, then watch the ring page until it is active.

### VaultRouteErrors

This alert goes off when a route of the vault gateway answers with server errors.

How to **fix** it:

- Read the gateway logs of the route and roll back the last gateway deploy.

### VaultBlocksNotUploaded

This alert goes off when a vault writer has uploaded no block for hours.

How to **fix** it:

- Check the writer's bucket credentials and its upload error counter.

### VaultBlocksNotUploadedSinceStart

Same as [`VaultBlocksNotUploaded`](#VaultBlocksNotUploaded).

### VaultQuotaExceeded

This alert goes off when a tenant writes more series than its quota allows.

How to **fix** it:

- Raise the tenant's series quota after asking its owners.
"""

# A runbook the on-call may not read (another label): its headings are never suggested.
_HIDDEN = """# Vault key runbooks

Only the security team reads this page.

### VaultSigningKeysRotated

The signing keys were rotated by hand.

### VaultSigningKeysExpired

The signing keys expired before rotation.
"""

_URL = "https://docs.example.com/vault/runbooks/vault.md#"
_WHERE = "{{ $labels.cluster }}/{{ $labels.namespace }}"


def _rule(alert: str, severity: str, message: str) -> dict[str, object]:
    return {
        "alert": alert,
        "expr": f"vault_{severity}_condition > 0",
        "labels": {"severity": severity},
        "annotations": {"message": message, "runbook_url": _URL + alert.lower()},
    }


_ROUTE_ERRORS = (
    "The route {{ $labels.route }} in " + _WHERE + ' is experiencing {{ printf "%.2f" $value '
    "}}% errors."
)
_RULES = {
    "groups": [
        {
            "name": "vault",
            "rules": [
                _rule(
                    "VaultIngesterUnhealthy",
                    "critical",
                    "Vault cluster " + _WHERE + ' has {{ printf "%f" $value }} unhealthy '
                    "ingester(s).",
                ),
                # One alert, two rules (one per severity), one message.
                _rule("VaultRouteErrors", "warning", _ROUTE_ERRORS),
                _rule("VaultRouteErrors", "critical", _ROUTE_ERRORS),
                _rule(
                    "VaultBlocksNotUploaded",
                    "critical",
                    "Vault writer {{ $labels.pod }} in " + _WHERE + " has uploaded no block "
                    "in the last 4 hours.",
                ),
            ],
        }
    ]
}


@pytest.fixture()
def vault(driver: neo4j.Driver, cli_env: object, invoke, tmp_path: Path) -> Path:  # type: ignore[no-untyped-def]
    from test_runbook_lookup import wipe

    wipe(driver)
    assert invoke("ingest", str(CATALOG)).code == 0
    (tmp_path / "runbooks").mkdir()
    (tmp_path / "runbooks" / "vault.md").write_text(_RUNBOOKS)
    (tmp_path / "rules.yaml").write_text(yaml.safe_dump(_RULES, sort_keys=False))
    (tmp_path / "hidden").mkdir()
    (tmp_path / "hidden" / "vault-keys.md").write_text(_HIDDEN)
    for path, fmt, acl, source in (
        (tmp_path / "runbooks", "markdown-runbooks", "internal", "src:vault-runbooks"),
        (tmp_path / "rules.yaml", "prometheus-rules", "internal", "src:vault-rules"),
        (tmp_path / "hidden", "markdown-runbooks", "security", "src:vault-keys"),
    ):
        ingest_as(invoke, path, fmt, "acme", "--source-id", source, acl=acl)
    return tmp_path


@pytest.mark.parametrize(
    ("page", "section"),
    [
        (
            "Vault cluster prod-eu-1/vault-store has 2.000000 unhealthy ingester(s).",
            "vault.md#vaultingesterunhealthy",
        ),
        # Two rules of one alert (one per severity) are one alert, not two matching alike.
        (
            "The route api_v1_push in prod-eu-1/vault-store is experiencing 3.41% errors.",
            "vault.md#vaultrouteerrors",
        ),
        (
            "Vault writer writer-zone-b-2 in prod-eu-1/vault-store has uploaded no block in "
            "the last 4 hours.",
            "vault.md#vaultblocksnotuploaded",
        ),
    ],
)
def test_a_pasted_page_reaches_its_alerts_section(  # type: ignore[no-untyped-def]
    vault: Path, invoke, page: str, section: str
) -> None:
    doc = runbook_json(invoke, page)
    assert doc["runbook"] is not None, doc["note"]
    assert doc["runbook"]["id"] == "runbook:vault"
    assert doc["runbook"]["steps_locator"] == section
    assert doc["text_matches"][0]["fits_by"] == "alert"


def test_a_section_that_is_the_same_as_another_shows_that_ones_steps(  # type: ignore[no-untyped-def]
    vault: Path, invoke
) -> None:
    # Before: the card showed "Same as VaultBlocksNotUploaded." and no step.
    runbook = runbook_json(invoke, "--alert", "VaultBlocksNotUploadedSinceStart")["runbook"]
    assert runbook["steps_locator"] == "vault.md#vaultblocksnotuploaded"
    assert runbook["steps"] == [
        "How to fix it:",
        "- Check the writer's bucket credentials and its upload error counter.",
    ]
    assert runbook["steps_note"] == (
        "the section VaultBlocksNotUploadedSinceStart only refers to VaultBlocksNotUploaded "
        "('Same as'): the steps shown are those of VaultBlocksNotUploaded"
    )
    card = invoke(
        "runbook", "--alert", "VaultBlocksNotUploadedSinceStart", "--subject", "user:oncall"
    )
    assert card.code == 0, card
    assert "- Check the writer's bucket credentials" in card.out


def test_text_landing_on_the_opening_names_the_closest_sections(  # type: ignore[no-untyped-def]
    vault: Path, invoke
) -> None:
    # Words of one section's text, none of its heading: the file fits, no section is chosen.
    runbook = runbook_json(invoke, "gateway logs deploy")["runbook"]
    assert runbook["id"] == "runbook:vault"
    assert runbook["steps_locator"] is None
    assert runbook["steps_note"] == (
        "the runbook has 5 sections headed by an alert's name and the lookup named none of them: "
        "the steps shown are its opening text; closest sections: VaultRouteErrors "
        "(--alert NAME shows one)"
    )


def test_a_typo_in_alert_suggests_the_names_the_subject_may_see(  # type: ignore[no-untyped-def]
    vault: Path, invoke
) -> None:
    # A section heading with no rule behind it answers `--alert` exactly ...
    assert runbook_json(invoke, "--alert", "VaultQuotaExceeded")["runbook"]["steps_locator"] == (
        "vault.md#vaultquotaexceeded"
    )
    # ... so a letter missing gets it as a suggestion. Before: "no visible id is close to it".
    typo = runbook_json(invoke, "--alert", "VaultQuotaExceded")
    assert typo["runbook"] is None
    assert typo["suggestions"] == ["VaultQuotaExceeded"]
    assert typo["note"].endswith("did you mean VaultQuotaExceeded?")
    # Two rules of one alert (one per severity) are one suggestion, by the name --alert takes.
    assert (
        runbook_json(invoke, "--alert", "VaultRouteError")["suggestions"][0] == "VaultRouteErrors"
    )
    card = invoke("runbook", "--alert", "VaultQuotaExceded", "--subject", "user:oncall")
    assert card.code == 0, card
    assert "did you mean VaultQuotaExceeded?" in card.out


def test_a_typo_never_suggests_a_hidden_runbooks_heading(  # type: ignore[no-untyped-def]
    vault: Path, invoke
) -> None:
    # vault-keys.md is labelled `security`, which user:oncall lacks: its headings are as
    # unknown to the suggestions as the file is to the lookup.
    for typed in ("VaultSigningKeysRotate", "VaultSigningKeysExpire"):
        result = invoke("runbook", "--alert", typed, "--subject", "user:oncall", "--json")
        assert result.code == 0, result
        for hidden in ("VaultSigningKeysRotated", "VaultSigningKeysExpired", "vault-keys"):
            assert hidden not in result.out
        assert json.loads(result.out)["suggestions"] == []
