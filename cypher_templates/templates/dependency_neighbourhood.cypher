{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
{% if ordered_cut and rel_type == 'DEPENDS_ON' -%}
// The elements 1..{{ hops }} {{ rel_type }} edges ({{ direction }}) from one element; one row per
// element reached, over its shortest path (the least path's ids among equals): its last edge
// as the element, the path's ids as context. The row cap counts services, nearest first.
MATCH p = (s:KG {id: $start_id}){% if direction == 'in' %}<{% endif %}-[rs:{{ rel_type }}*1..{{ hops }}]-{% if direction == 'out' %}>{% endif %}(n:KG)
WHERE {{ v.visible('s') }} AND {{ v.visible('n') }} AND {{ v.visible_path('p', rel_type) }}
  AND n.id <> s.id
WITH s, n, length(p) AS hops, [_x IN nodes(p) | _x.id] AS path, last(relationships(p)) AS r
ORDER BY n.id, hops, path
WITH s, n, collect({hops: hops, path: path, r: r})[0] AS shortest
WITH s, n, shortest.r AS r, shortest.hops AS hops, shortest.path AS path
RETURN {{ e.rel_element('r', "['dependency']") }} AS element,
       {start: s.id, neighbour: n.id, hops: hops, path: path} AS context,
       null AS score
ORDER BY hops, n.id
LIMIT $limit
{%- else -%}
// Paths of 1..{{ hops }} {{ rel_type }} edges ({{ direction }}) from one element; one row per
// path, its last edge as the element, the path's ids as context.
MATCH p = (s:KG {id: $start_id}){% if direction == 'in' %}<{% endif %}-[rs:{{ rel_type }}*1..{{ hops }}]-{% if direction == 'out' %}>{% endif %}(n:KG)
WHERE {{ v.visible('s') }} AND {{ v.visible('n') }} AND {{ v.visible_path('p', rel_type) }}
  AND n.id <> s.id
WITH s, n, last(relationships(p)) AS r, length(p) AS hops, [_x IN nodes(p) | _x.id] AS path
{% if ordered_cut and rel_type == 'FIRED_ON' -%}
// One row per firing: the latest first by firing time (fired_at, else valid_from), so the
// row cap keeps the latest firings; ties by the record's key.
WITH s, n, r, hops, path, coalesce(r.fired_at, r.valid_from) AS fired
{% endif -%}
RETURN {{ e.rel_element('r', "['dependency']" if rel_type == 'DEPENDS_ON' else "['entity']") }} AS element,
       {start: s.id, neighbour: n.id, hops: hops, path: path} AS context,
       null AS score
{% if ordered_cut and rel_type == 'FIRED_ON' -%}
ORDER BY hops, fired IS NULL, fired DESC, r.key, path
{% else -%}
ORDER BY hops, n.id, path
{% endif -%}
LIMIT $limit
{%- endif %}
