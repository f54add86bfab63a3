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
  WHERE (toLower(n.name) = toLower($text) OR toLower($text) IN [_a IN coalesce(n.aliases, []) | toLower(_a)]
{%- if release_versions %}
    // A release named by its version alone (dotted numbers, `2026.07.23.4`): its `release`,
    // else the version ending its name or id (`risk-engine-2026.07.22.3`).
    OR (n:Deployment AND $text =~ '[0-9]+([.][0-9]+)+'
        AND (n.release = $text OR toLower(n.name) ENDS WITH ('-' + $text)
             OR toLower(n.name) ENDS WITH (' ' + $text) OR n.id ENDS WITH ('-' + $text)))
{%- endif %})
    AND {{ v.visible('n') }}
  RETURN n
}
WITH n
WHERE NOT n:Principal AND NOT n:Source{% if label != 'any' %} AND n:{{ label }}{% endif %}
{% if missing_files -%}
// A record whose rule (an alert) or file the last import of its source did not have
// (graph_schema/importers/missing_files.py): since when, as known at known_at.
OPTIONAL MATCH (gone:MissingFile {tenant: $tenant, id: n.id})
WHERE {{ v.visible('gone') }} AND gone.source_id = n.source_id
WITH n, max(gone.recorded_at) AS missing_since
{% if linked_first -%}
// Many rules may share one alert name (GitLab's 65 saturation rules): those a visible runbook
// or policy APPLIES_TO come first, so the row cap keeps them; every row counts the matches.
OPTIONAL MATCH (n)<-[l:APPLIES_TO|GOVERNED_BY]-(rb:KG:Document)
WHERE (rb:Runbook OR rb:Policy)
  AND {{ v.visible_rel('l', 'APPLIES_TO|GOVERNED_BY') }} AND {{ v.visible('rb') }}
WITH n, missing_since, count(rb) > 0 AS linked
WITH collect({n: n, missing_since: missing_since, linked: linked}) AS found,
     sum(CASE WHEN linked THEN 1 ELSE 0 END) AS linked_matches
UNWIND found AS row
WITH row.n AS n, row.missing_since AS missing_since, row.linked AS linked,
     size(found) AS matches, linked_matches
RETURN {{ e.node_element('n', "['entity']") }} AS element,
       {match: CASE WHEN n.id = $text THEN 'id' WHEN n.code = $text THEN 'code' WHEN n.alertname = $text THEN 'alertname' WHEN toLower(n.name) = toLower($text) THEN 'name'{% if release_versions %} WHEN n:Deployment AND NOT toLower($text) IN [_a IN coalesce(n.aliases, []) | toLower(_a)] THEN 'release'{% endif %} ELSE 'alias' END, file_missing_since: {{ e.instant('missing_since') }}, linked: linked, matches: matches, linked_matches: linked_matches} AS context,
       null AS score
ORDER BY linked DESC, n.id, n.version
LIMIT $limit
{%- else -%}
RETURN {{ e.node_element('n', "['entity']") }} AS element,
       {match: CASE WHEN n.id = $text THEN 'id' WHEN n.code = $text THEN 'code' WHEN n.alertname = $text THEN 'alertname' WHEN toLower(n.name) = toLower($text) THEN 'name'{% if release_versions %} WHEN n:Deployment AND NOT toLower($text) IN [_a IN coalesce(n.aliases, []) | toLower(_a)] THEN 'release'{% endif %} ELSE 'alias' END, file_missing_since: {{ e.instant('missing_since') }}} AS context,
{%- endif %}
{% else -%}
RETURN {{ e.node_element('n', "['entity']") }} AS element,
       {match: CASE WHEN n.id = $text THEN 'id' WHEN n.code = $text THEN 'code' WHEN n.alertname = $text THEN 'alertname' WHEN toLower(n.name) = toLower($text) THEN 'name'{% if release_versions %} WHEN n:Deployment AND NOT toLower($text) IN [_a IN coalesce(n.aliases, []) | toLower(_a)] THEN 'release'{% endif %} ELSE 'alias' END} AS context,
{% endif %}
{% if not linked_first %}
       null AS score
ORDER BY n.id, n.version
LIMIT $limit
{% endif -%}
