{% import '_visibility.j2' as v %}{% import '_element.j2' as e with context -%}
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
MATCH (a:KG)-[x {key: $element_id}]->(b:KG)
WHERE {{ v.visible_history('a') }} AND {{ v.visible_history('x') }} AND {{ v.visible_history('b') }}
WITH x.version AS version, collect(x)[0] AS x
RETURN {{ e.rel_element('x', "['entity']") }} AS element,
       {id: x.key, superseded_at: {{ e.instant('x.superseded_at') }}} AS context,
       null AS score
ORDER BY version
LIMIT $limit
{%- endif %}
