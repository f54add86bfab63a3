{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Resolve a user's words (id, name, alias, error code, alert name) to KG entities of the tenant.
// Each branch is an index seek (id, name, code, alertname, or the fulltext index for
// case-insensitive names and aliases, in the tenant's own index), so the cost does not grow
// with the graph.
CALL () {
  MATCH (n:KG {id: $text})
  WHERE {{ v.visible('n') }}
  RETURN n
  UNION
  MATCH (n:KG {name: $text})
  WHERE {{ v.visible('n') }}
  RETURN n
  UNION
  MATCH (n:KG:ErrorCode {code: $text})
  WHERE {{ v.visible('n') }}
  RETURN n
  UNION
  MATCH (n:KG:Alert {alertname: $text})
  WHERE {{ v.visible('n') }}
  RETURN n
  UNION
  CALL db.index.fulltext.queryNodes($fulltext_index, $text_phrase) YIELD node AS n
  WHERE (toLower(n.name) = toLower($text) OR toLower($text) IN [_a IN coalesce(n.aliases, []) | toLower(_a)])
    AND {{ v.visible('n') }}
  RETURN n
}
WITH n
WHERE NOT n:Principal AND NOT n:Source{% if label != 'any' %} AND n:{{ label }}{% endif %}
RETURN {{ e.node_element('n', "['entity']") }} AS element,
       {match: CASE WHEN n.id = $text THEN 'id' WHEN n.code = $text THEN 'code' WHEN n.alertname = $text THEN 'alertname' WHEN toLower(n.name) = toLower($text) THEN 'name' ELSE 'alias' END} AS context,
       null AS score
ORDER BY n.id, n.version
LIMIT $limit
