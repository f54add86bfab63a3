{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Fulltext over names, codes, titles and readable document text ($query is Lucene-escaped
// by the compiler) in the subject's tenant's own index ($fulltext_index, set by the executor),
// so scores and order never depend on another tenant's data; the visibility predicate runs on
// every hit before it is returned.
// Bounded (issue 12): Lucene hands over its $candidate_limit best hits (null: all of them),
// put in the final order (score, then id) before any filter, so the visibility predicate only
// runs until $limit rows are found. Each row names how many candidates there were and the
// lowest candidate score: the executor asks again with more candidates unless they prove that
// no hit left out could have been a row (cypher_templates/executor.py).
CALL db.index.fulltext.queryNodes($fulltext_index, $query, {limit: $candidate_limit}) YIELD node, score
WITH node, score
ORDER BY score DESC, node.id
WITH collect({node: node, score: score}) AS hits
UNWIND hits AS hit
WITH hit.node AS node, hit.score AS score, size(hits) AS candidates, hits[-1].score AS floor
WHERE {{ v.visible('node') }}{% if label != 'any' %} AND node:{{ label }}{% endif %}
  AND NOT node:Principal AND NOT node:Source
WITH node, score, candidates, floor
LIMIT $limit
RETURN {{ e.node_element('node', "['document']") }} AS element,
       {} AS context,
       score AS score,
       candidates AS candidates,
       floor AS floor
ORDER BY score DESC, node.id
