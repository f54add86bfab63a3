{% import '_visibility.j2' as v %}{% import '_element.j2' as e -%}
// Fulltext over names, codes, titles and readable document text ($query is Lucene-escaped
// by the compiler); the visibility predicate runs on every hit before anything is returned.
CALL db.index.fulltext.queryNodes('kg_fulltext', $query) YIELD node, score
WHERE {{ v.visible('node') }}{% if label != 'any' %} AND node:{{ label }}{% endif %}
  AND NOT node:Principal AND NOT node:Source
RETURN {{ e.node_element('node', "['document']") }} AS element,
       {} AS context,
       score AS score
ORDER BY score DESC, node.id
LIMIT $limit
