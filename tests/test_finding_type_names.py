"""Finding types as AWS GuardDuty writes them (`UnauthorizedAccess:EC2/SSHBruteForce`) read as
names wherever a responder types or pastes them. On a real Neo4j, through the CLI.

Before (e27-corpus findings 3, 4, 6): a pasted finding (its JSON, a Slack line, "GuardDuty
finding <type> on i-0abc123") answered "No runbook" or a tie "none named by it", though
`--alert <type>` found the page; `investigate` kept only the CamelCase tail (`SSHBruteForce`)
and said it "matched nothing visible"; `--alert SSHBruteForce` said "no visible id is close
to it". The pages here are written for the test, shaped like GuardDuty's (a title underlined
with `---`, filed under the type's parts joined by `-`).
"""

from __future__ import annotations

import json
from pathlib import Path

import neo4j
import pytest
from conftest import ingest_as, ingest_text

SUBJECT = "sec/user:oncall"

PRINCIPALS = """tenant: sec
sources:
  - {source_id: src:sec-iam, source_type: iam, owner_team: team:secops, classification: internal,
     trust: trusted, authority: 80, allowed_purposes: [incident_investigation, runbook_lookup],
     recorded_at: "2026-01-05T09:00:00Z"}
principals:
  - {id: user:oncall, name: Security on-call, labels: [internal, security],
     purposes: [incident_investigation, runbook_lookup], source_id: src:sec-iam,
     recorded_at: "2026-01-05T09:00:00Z"}
  - {id: user:dev, name: Developer, labels: [internal],
     purposes: [incident_investigation, runbook_lookup], source_id: src:sec-iam,
     recorded_at: "2026-01-05T09:00:00Z"}
"""


def _page(finding: str, summary: str, body: str, steps: str) -> str:
    return (
        f"{finding}\n{'-' * len(finding)}\n\n### {summary}\n\n**Default severity: Medium**\n\n"
        f"{body}\n\n**Remediation recommendations:**\n\n{steps}\n"
    )


PAGES = {
    "unauthorizedaccess-ec2-sshbruteforce.md": _page(
        "UnauthorizedAccess:EC2/SSHBruteForce",
        "A host took part in repeated password guessing over port 22.",
        "Many failed logins reached a Linux host, or the host sent them to another one.",
        "Allow port 22 only from the office range in the security group (step ssh-lockdown).",
    ),
    "unauthorizedaccess-ec2-rdpbruteforce.md": _page(
        "UnauthorizedAccess:EC2/RDPBruteForce",
        "A host took part in repeated password guessing over port 3389.",
        "Many failed logins reached a Windows host, or the host sent them to another one.",
        "Allow port 3389 only from the office range in the security group.",
    ),
    "recon-iamuser-maliciousipcaller.md": _page(
        "Recon:IAMUser/MaliciousIPCaller",
        "An API that lists resources was called from a known malicious address.",
        "An address on a threat list called an API that lists resources in the account.",
        "Rotate the caller's access key and review what it listed (step rotate-listing-key).",
    ),
    "recon-iamuser-maliciousipcaller-custom.md": _page(
        "Recon:IAMUser/MaliciousIPCaller.Custom",
        "An API that lists resources was called from an address on your own threat list.",
        "An address on a threat list you uploaded called an API that lists resources.",
        "Check the uploaded threat list, then rotate the caller's access key.",
    ),
    "unauthorizedaccess-iamuser-toripcaller.md": _page(
        "UnauthorizedAccess:IAMUser/TorIPCaller",
        "An API was called from a Tor exit node.",
        "A call reached the account from an address of the Tor network.",
        "Disable the caller's access key.",
    ),
    "unauthorizedaccess-ec2-toripcaller.md": _page(
        "UnauthorizedAccess:EC2/TorIPCaller",
        "A host received connections from a Tor exit node.",
        "Connections reached a host from an address of the Tor network.",
        "Block the address in the network ACL.",
    ),
}

FINDING_JSON = json.dumps(
    {
        "schemaVersion": "2.0",
        "accountId": "123456789012",
        "region": "us-east-1",
        "type": "UnauthorizedAccess:EC2/SSHBruteForce",
        "resource": {"resourceType": "Instance", "instanceDetails": {"instanceId": "i-0abc123"}},
        "severity": 2,
        "title": "203.0.113.9 is guessing passwords against i-0abc123.",
    }
)

SLACK = """:rotating_light: *GuardDuty Finding* | us-east-1 | Account: 123456789012
*Type:* Recon:IAMUser/MaliciousIPCaller
*Severity:* 5.0 (Medium)
*Title:* An API that lists resources was called from a known malicious address.
"""


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module: a re-import of the same path writes nothing new."""
    root = tmp_path_factory.mktemp("finding-pages")
    (root / "runbooks").mkdir()
    for name, text in PAGES.items():
        (root / "runbooks" / name).write_text(text, encoding="utf-8")
    return root


@pytest.fixture()
def findings(folder: Path, demo_graph: neo4j.Driver, cli_env: object, invoke) -> Path:  # type: ignore[no-untyped-def]
    """The demo dataset, and tenant sec's finding pages readable with the `security` label."""
    ingest_text(invoke, folder / "sec.yaml", PRINCIPALS)
    ingest_as(invoke, folder / "runbooks", "markdown-runbooks", "sec", acl="security")
    return folder


def _card(invoke, *args: str, subject: str = SUBJECT) -> dict:  # type: ignore[no-untyped-def,type-arg]
    result = invoke("runbook", *args, "--subject", subject, "--json")
    assert result.code in (0, 3), result
    return json.loads(result.out)  # type: ignore[no-any-return]


def _runbook_id(card: dict) -> str | None:  # type: ignore[type-arg]
    runbook = card.get("runbook")
    return None if runbook is None else str(runbook["id"])


@pytest.mark.parametrize(
    ("pasted", "expected"),
    [
        (FINDING_JSON, "runbook:unauthorizedaccess-ec2-sshbruteforce"),
        (SLACK, "runbook:recon-iamuser-maliciousipcaller"),
        (
            "GuardDuty finding UnauthorizedAccess:EC2/SSHBruteForce on i-0abc123",
            "runbook:unauthorizedaccess-ec2-sshbruteforce",
        ),
    ],
)
def test_a_pasted_finding_finds_the_page_headed_by_its_type(  # type: ignore[no-untyped-def]
    findings: Path, invoke, pasted: str, expected: str
) -> None:
    card = _card(invoke, pasted)
    assert _runbook_id(card) == expected, card.get("note")
    finding = "Recon:IAMUser/MaliciousIPCaller" if "Recon" in pasted else "UnauthorizedAccess"
    assert finding in card["note"] and "heads a section of" in card["note"]
    # Nobody without the `security` label, or of another tenant, learns of the page.
    for subject in ("sec/user:dev", "acme/user:bob"):
        hidden = _card(invoke, pasted, subject=subject)
        assert _runbook_id(hidden) is None
        shown = json.dumps([hidden["resolved"], hidden["text_matches"], hidden["note"]])
        assert "runbook:recon" not in shown and "runbook:unauthorizedaccess" not in shown
        assert hidden["suggestions"] == []


@pytest.mark.parametrize("typed", ["SSHBruteForce", "EC2/SSHBruteForce", "sshbruteforce"])
def test_a_finding_name_without_its_prefix_finds_the_one_type_ending_in_it(  # type: ignore[no-untyped-def]
    findings: Path, invoke, typed: str
) -> None:
    card = _card(invoke, "--alert", typed)
    assert _runbook_id(card) == "runbook:unauthorizedaccess-ec2-sshbruteforce", card.get("note")
    assert "UnauthorizedAccess:EC2/SSHBruteForce, the one finding type visible" in card["note"]
    hidden = _card(invoke, "--alert", typed, subject="sec/user:dev")
    assert _runbook_id(hidden) is None
    assert "sshbruteforce" not in json.dumps(hidden["suggestions"]).casefold()


def test_a_finding_name_several_types_end_in_offers_them(  # type: ignore[no-untyped-def]
    findings: Path, invoke
) -> None:
    card = _card(invoke, "--alert", "TorIPCaller")
    assert _runbook_id(card) is None
    assert card["suggestions"] == [
        "UnauthorizedAccess:EC2/TorIPCaller",
        "UnauthorizedAccess:IAMUser/TorIPCaller",
    ]
    assert "did you mean UnauthorizedAccess:EC2/TorIPCaller" in card["note"]
    assert _card(invoke, "--alert", "TorIPCaller", subject="sec/user:dev")["suggestions"] == []


def test_investigate_reads_the_whole_finding_type_not_its_camelcase_tail(  # type: ignore[no-untyped-def]
    findings: Path, invoke
) -> None:
    question = (
        "GuardDuty raised UnauthorizedAccess:EC2/SSHBruteForce on the bastion host. "
        "Which runbook applies?"
    )
    result = invoke("investigate", question, "--subject", SUBJECT)
    assert result.code == 0, result
    assert "'SSHBruteForce'" not in result.out
    assert "matched nothing visible" not in result.out
    assert "runbook:unauthorizedaccess-ec2-sshbruteforce" in result.out
    assert "found by its name alone" in result.out
    assert "found by the words of the question alone" not in result.out


RULES = """groups:
  - name: guardduty
    rules:
      - alert: GuardDutyBitcoinDNS
        expr: guardduty_findings{type="bitcoin"} > 0
        labels: {severity: warning}
        annotations:
          runbook_url: https://git.example.com/sec/pages/blob/main/runbooks/CryptoCurrency:EC2/BitcoinTool.B!DNS
"""


def test_a_runbook_url_ending_in_a_finding_type_gets_the_file_name_to_link(  # type: ignore[no-untyped-def]
    findings: Path, invoke
) -> None:
    (findings / "rules.yaml").write_text(RULES, encoding="utf-8")
    rules = ingest_as(invoke, findings / "rules.yaml", "prometheus-rules", "sec", acl="security")
    # Before: "here 'BitcoinTool.B!DNS', a file BitcoinTool.B!DNS.md", the `/` read as a folder.
    assert "a file BitcoinTool.B!DNS.md" not in rules.err
    assert (
        "here it ends in the finding type 'CryptoCurrency:EC2/BitcoinTool.B!DNS', whose `/` "
        "reads as a folder's; make runbook_url end with the page's file name as AWS files it "
        "(cryptocurrency-ec2-bitcointool-b-dns"
    ) in rules.err
