{% import '_fulltext.j2' as f with context -%}
// Fulltext over names, codes, titles and readable document text ($query is Lucene-escaped
// by the compiler) in the subject's tenant's own index ($fulltext_index, set by the executor),
// so scores and order never depend on another tenant's data; the visibility predicate runs on
// every hit before it is returned.
// Bounded (issue 12): Lucene hands over its $candidate_limit best hits (null: all of them),
// put in the final order (score, then id) before any filter, so the visibility predicate only
// runs until $limit rows are found. Each row names how many candidates there were and the
// lowest candidate score: the executor asks again with more candidates unless they prove that
// no hit left out could have been a row (cypher_templates/executor.py).
{% if key_suffixes -%}
// $query also asks the tokens that end with each config key it names (`*max_size` finds
// `db.pool.max_size`, one token to the analyzer; cypher_templates/compiler.py).
{% endif -%}
{{ f.ranked_hits('$query', "['document']") }}
