{% import '_visibility.j2' as v %}{% import '_element.j2' as e -%}
// Fulltext over names, codes, titles and readable document text ($query is Lucene-escaped
// by the compiler) in the subject's tenant's own index ($fulltext_index, set by the executor),
// so scores and order never depend on another tenant's data; the visibility predicate runs on
// every hit before anything is returned.
CALL db.index.fulltext.queryNodes($fulltext_index, $query) YIELD node, score
WHERE {{ v.visible('node') }}{% if label != 'any' %} AND node:{{ label }}{% endif %}
  AND NOT node:Principal AND NOT node:Source
RETURN {{ e.node_element('node', "['document']") }} AS element,
       {} AS context,
       score AS score
ORDER BY score DESC, node.id
LIMIT $limit
