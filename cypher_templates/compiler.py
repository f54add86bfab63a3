"""QueryPlan step -> compiled query (allowlisted text + validated parameters), or a refusal.

The compiler never builds Cypher from values: it picks a manifest entry, renders the
structural variant the step's options name, validates the step's params against the
template's typed schema and derives the Neo4j parameter map. Refusals are `BadInput`
(exit 2) with one clear line.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, JsonValue, ValidationError

from cypher_templates.plan import EvidenceType, PlanStep, QueryPlan
from cypher_templates.registry import RowTimes, TemplateRefused, TemplateRegistry, TemplateSpec

# Lucene query syntax characters; each is backslash-escaped so user words are literal terms.
_LUCENE_SPECIAL = re.compile(r'([+\-&|!(){}\[\]^"~*?:\\/])')


# A config key as typed (`max_size`, `db.pool.max_size`): a letter, then letters and digits
# in parts joined by `_` or `.`. The analyzer keeps `db.pool.max_size` as one token, so its
# last part(s) typed alone match only as a suffix (`*max_size`). Nothing in it is Lucene syntax.
_CONFIG_KEY = re.compile(r"[a-z][a-z0-9]*(?:[._][a-z0-9]+)+")
CONFIG_KEY_MIN_LENGTH = 5  # "e.g" and "i.e" are no keys
CONFIG_KEY_MAX_LENGTH = 100
# Each suffix term scans the index's term dictionary (a leading wildcard): at most these many.
CONFIG_KEY_SUFFIX_TERMS = 2


def is_config_key(word: str) -> bool:
    """Whether `word` (lower case) is shaped like a config key: the compiler also asks the
    fulltext index for the tokens that end with it."""
    return (
        CONFIG_KEY_MIN_LENGTH <= len(word) <= CONFIG_KEY_MAX_LENGTH
        and _CONFIG_KEY.fullmatch(word) is not None
    )


def config_keys(text: str) -> list[str]:
    """The config-key-shaped words of `text`, lower case, each once, in order (a sentence's
    full stop after one is no part of it)."""
    found = (w.rstrip(".") for w in re.findall(r"[\w.]+", text.lower()))
    return list(dict.fromkeys(w for w in found if is_config_key(w)))


def lucene_literal(text: str, *, key_suffixes: bool = False) -> str:
    """Turn free text into a Lucene query of literal terms (operators and syntax inert).

    Lower-casing neutralises the AND/OR/NOT operators (the analyzer lower-cases anyway).
    With `key_suffixes` (fulltext_search 5) a config-key-shaped word (`max_size`) also gets a
    suffix term (`*max_size`), so it finds the key written whole (`db.pool.max_size`, one
    token to the analyzer); at most `CONFIG_KEY_SUFFIX_TERMS` of them.
    """
    escaped = _LUCENE_SPECIAL.sub(r"\\\1", text.lower())
    terms = escaped.split()
    if not terms:
        raise ValueError("the search text has no terms")
    if not key_suffixes:
        return " ".join(terms)
    keys = [w for w in dict.fromkeys(t.rstrip(".") for t in terms) if is_config_key(w)]
    return " ".join(terms + [f"*{k}" for k in keys[:CONFIG_KEY_SUFFIX_TERMS]])


def lucene_phrase(text: str) -> str:
    """Turn free text into one quoted Lucene phrase (only `"` and `\\` need escaping inside).

    A phrase that analyses to no terms matches nothing, which is the right answer.
    """
    inner = text.lower().replace("\\", "\\\\").replace('"', '\\"')
    return f'"{inner}"'


# Fuzzy terms: words of at least this many characters, at most this many words (each term
# expands to up to 50 index terms in Lucene), two edits from five characters, one below.
_FUZZY_MIN_LENGTH = 3
_FUZZY_MAX_TERMS = 8
_FUZZY_WORD = re.compile(r"[0-9a-z]+")


def _fuzzy_words(text: str) -> list[str]:
    return [w for w in _FUZZY_WORD.findall(text.lower()) if len(w) >= _FUZZY_MIN_LENGTH]


def lucene_fuzzy(text: str) -> str:
    """Turn typed text into Lucene fuzzy terms (`paymnet~2 api~1`): its lower-case letters and
    digits only, so no query syntax can reach Lucene, each word allowed one or two edits."""
    words = _fuzzy_words(text)
    if not words:
        raise ValueError(f"no word of {_FUZZY_MIN_LENGTH} or more letters or digits to match")
    unique = list(dict.fromkeys(words))[:_FUZZY_MAX_TERMS]
    return " ".join(f"{w}~{2 if len(w) >= 5 else 1}" for w in unique)


def lucene_prefix(text: str) -> str:
    """Turn typed text into Lucene prefix terms (`pay*`): the words `lucene_fuzzy` takes
    (lower-case letters and digits, three or more, at most eight), each matching the terms
    that start with it. No query syntax can reach Lucene."""
    words = _fuzzy_words(text)
    if not words:
        raise ValueError(f"no word of {_FUZZY_MIN_LENGTH} or more letters or digits to match")
    unique = list(dict.fromkeys(words))[:_FUZZY_MAX_TERMS]
    return " ".join(f"{w}*" for w in unique)


def has_fuzzy_terms(text: str) -> bool:
    """Whether `lucene_fuzzy` finds a word in `text` to match (else it refuses the text)."""
    return bool(_fuzzy_words(text))


_TRANSFORMS = {
    "lucene_phrase": lucene_phrase,
    "lucene_fuzzy": lucene_fuzzy,
    "lucene_prefix": lucene_prefix,
}


class CompiledQuery(BaseModel):
    """One executable template call. `parameters` is the plan's (JSON-safe, as recorded);
    `cypher_parameters` is what Neo4j receives besides the executor's subject parameters."""

    model_config = ConfigDict(frozen=True)

    template_id: str
    template_version: int
    template_hash: str
    text: str
    options: dict[str, str | int]
    parameters: dict[str, JsonValue]
    cypher_parameters: dict[str, Any]
    evidence_type: EvidenceType | None
    evidence_types: tuple[EvidenceType, ...]
    limit: int
    row_cap: int
    timeout_s: float
    # How the rows carry times (the template version's manifest setting): the executor reads
    # them back accordingly, and refuses a query whose setting is not its version's.
    row_times: RowTimes = "datetime"

    @property
    def ref(self) -> str:
        """`id@version`."""
        return f"{self.template_id}@{self.template_version}"


def _first_error(exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join(str(p) for p in err.get("loc", ())) or "params"
    return f"{where}: {err.get('msg', 'invalid')}"


def compile_params(
    spec: TemplateSpec, params: dict[str, Any]
) -> tuple[dict[str, JsonValue], dict[str, Any]]:
    """Validate `params` for `spec`; return (recorded JSON-safe params, Neo4j parameters)."""
    try:
        model = spec.params_model.model_validate(params)
    except ValidationError as exc:
        raise TemplateRefused(f"template {spec.ref}: parameter {_first_error(exc)}") from None
    recorded: dict[str, JsonValue] = model.model_dump(mode="json")
    cypher: dict[str, Any] = {}
    for name, pspec in spec.params.items():
        value = getattr(model, name)
        if pspec.type == "lucene" and value is not None:
            try:
                value = lucene_literal(value, key_suffixes=spec.key_suffixes)
            except ValueError as exc:
                raise TemplateRefused(f"template {spec.ref}: parameter {name}: {exc}") from None
        # Aware datetimes go as they are: the driver sends them as zoned DateTime.
        cypher[name] = value
    for name, derived in spec.derived.items():
        try:
            cypher[name] = _TRANSFORMS[derived.transform](getattr(model, derived.source))
        except ValueError as exc:
            raise TemplateRefused(
                f"template {spec.ref}: parameter {derived.source}: {exc}"
            ) from None
    return recorded, cypher


def compile_step(
    registry: TemplateRegistry, step: PlanStep, plan: QueryPlan | None = None
) -> CompiledQuery:
    """Compile one plan step (bounded by `plan.max_hops` when a plan is given)."""
    spec = registry.get(step.template_id, step.template_version)
    if step.evidence_type not in spec.evidence_types:
        raise TemplateRefused(
            f"template {spec.ref} does not supply evidence type {step.evidence_type!r} "
            f"(it supplies {', '.join(spec.evidence_types)})"
        )
    rendered = registry.render(spec, dict(step.options))
    hops = rendered.options.get("hops")
    if plan is not None and isinstance(hops, int) and hops > plan.max_hops:
        raise TemplateRefused(
            f"template {spec.ref}: hops={hops} exceeds the plan's max_hops={plan.max_hops}"
        )
    limit = step.limit if step.limit is not None else spec.row_cap
    if limit > spec.row_cap:
        raise TemplateRefused(
            f"template {spec.ref}: limit {limit} exceeds its row cap {spec.row_cap}"
        )
    recorded, cypher = compile_params(spec, dict(step.params))
    return CompiledQuery(
        template_id=spec.id,
        template_version=spec.version,
        template_hash=rendered.template_hash,
        text=rendered.text,
        options=rendered.options,
        parameters=recorded,
        cypher_parameters=cypher,
        evidence_type=step.evidence_type,
        evidence_types=spec.evidence_types,
        limit=limit,
        row_cap=spec.row_cap,
        timeout_s=spec.timeout_s,
        row_times=spec.row_times,
    )
