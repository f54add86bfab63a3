{% import '_visibility.j2' as v %}{% import '_element.j2' as e -%}
// Resolve a user's words (id, name, alias, error code, alert name) to KG entities of the tenant.
MATCH (n:KG{% if label != 'any' %}:{{ label }}{% endif %})
WHERE (n.id = $text OR toLower(n.name) = toLower($text) OR n.code = $text OR n.alertname = $text
       OR toLower($text) IN [_a IN coalesce(n.aliases, []) | toLower(_a)])
  AND NOT n:Principal AND NOT n:Source
  AND {{ v.visible('n') }}
RETURN {{ e.node_element('n', "['entity']") }} AS element,
       {match: CASE WHEN n.id = $text THEN 'id' WHEN n.code = $text THEN 'code' WHEN n.alertname = $text THEN 'alertname' WHEN toLower(n.name) = toLower($text) THEN 'name' ELSE 'alias' END} AS context,
       null AS score
ORDER BY n.id, n.version
LIMIT $limit
