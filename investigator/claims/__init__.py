"""Deterministic claim rules: statements bound to pack evidence, with a verdict.

Every claim carries an epistemic status (`fact` for what a record states, `inference` for
what follows from several records, `hypothesis` for what would need more evidence) and the
ids of the pack evidence it rests on; a claim without evidence is never emitted. For a
correlation question the verdict is `confirmed`, `likely`, `uncertain` or `refuted`, about
the change the question names (else the release closest before the first error):
"happened after" gives at most `likely`; only mechanism evidence naming the change can
confirm it, and mechanism evidence ruling it out refutes it; another change in the same
window (a confounder) lowers the verdict one step, two or more that no mechanism record
rules out one step more (no verdict stronger than `uncertain`), and an unresolved conflict
one step.

The modules, in the order they build on each other: `model` (Claim, ClaimSet, the verdict),
`wording` (the phrases every rule shares), the topics (`incidents`, `runbooks`, `ownership`,
`releases` with alert firings, `mechanisms`, `candidates`, `reports`, `errors`, `causes`,
`changes`, `dependencies`, `status`: a service's state now and incidents of a period), and
`derive` (`derive_claims`, which runs them over a pack and
assembles the gaps). This package re-exports what the rest of the investigator imports.
"""

from investigator.claims.dependencies import (
    capped_walks,
    dependency_depth_notes,
    dependency_retractions,
)
from investigator.claims.derive import NO_ERRORS_NAMED, derive_claims
from investigator.claims.model import (
    CauseAssessment,
    Claim,
    ClaimSet,
    Confounder,
    EpistemicStatus,
    Verdict,
    keep_claims_in_pack,
)
from investigator.claims.releases import fired_on_reads, firing_list_notes, firing_list_reads
from investigator.claims.runbooks import NO_RUNBOOK_AT_AS_OF, states_at_as_of
from investigator.claims.status import cut_incident_lists, status_reads
from investigator.claims.wording import READ_FAILED, _claim

__all__ = [
    "NO_ERRORS_NAMED",
    "NO_RUNBOOK_AT_AS_OF",
    "READ_FAILED",
    "CauseAssessment",
    "Claim",
    "ClaimSet",
    "Confounder",
    "EpistemicStatus",
    "Verdict",
    "_claim",
    "capped_walks",
    "cut_incident_lists",
    "dependency_depth_notes",
    "dependency_retractions",
    "derive_claims",
    "fired_on_reads",
    "firing_list_notes",
    "firing_list_reads",
    "keep_claims_in_pack",
    "states_at_as_of",
    "status_reads",
]
