{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Every record of one {{ kind }} known at $known_at, superseded and retracted ones included
// (security predicate only: tenant, ACL, purpose), oldest version first.
{% if kind == 'node' -%}
MATCH (x:KG {id: $element_id})
WHERE {{ v.visible_history('x') }}
RETURN {{ e.node_element('x', "['entity']") }} AS element,
       {id: x.id, superseded_at: {{ e.instant('x.superseded_at') }}} AS context,
       null AS score
ORDER BY x.version
LIMIT $limit
{%- else -%}
{% if acl_ceiling == 'latest_record' -%}
// Every relationship type, so the records are found by a seek of each type's (tenant, key)
// index, and the ceiling knows where to look for the key's latest record.
MATCH (a:KG)-[x:{{ v.rel_types }} {tenant: $tenant, key: $element_id}]->(b:KG)
WHERE {{ v.visible_history('a') }} AND {{ v.visible_history_rel('x', v.rel_types) }} AND {{ v.visible_history('b') }}
{%- else -%}
MATCH (a:KG)-[x {key: $element_id}]->(b:KG)
WHERE {{ v.visible_history('a') }} AND {{ v.visible_history('x') }} AND {{ v.visible_history('b') }}
{%- endif %}
{% if latest_copy -%}
// The copies of a record differ only in superseded_at (each ended with its endpoint
// records): the latest-ending one (a current one first) says when the record itself ended.
WITH x.version AS version, collect(x) AS copies
WITH version, reduce(c = head(copies), y IN copies | CASE WHEN c.superseded_at IS NULL OR (y.superseded_at IS NOT NULL AND y.superseded_at <= c.superseded_at) THEN c ELSE y END) AS x
{% else -%}
WITH x.version AS version, collect(x)[0] AS x
{% endif -%}
RETURN {{ e.rel_element('x', "['entity']") }} AS element,
       {id: x.key, superseded_at: {{ e.instant('x.superseded_at') }}} AS context,
       null AS score
ORDER BY version
LIMIT $limit
{%- endif %}
