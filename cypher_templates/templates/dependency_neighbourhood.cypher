{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Paths of 1..{{ hops }} {{ rel_type }} edges ({{ direction }}) from one element; one row per
// path, its last edge as the element, the path's ids as context.
MATCH p = (s:KG {id: $start_id}){% if direction == 'in' %}<{% endif %}-[rs:{{ rel_type }}*1..{{ hops }}]-{% if direction == 'out' %}>{% endif %}(n:KG)
WHERE {{ v.visible('s') }} AND {{ v.visible('n') }} AND {{ v.visible_path('p', rel_type) }}
  AND n.id <> s.id
WITH s, n, last(relationships(p)) AS r, length(p) AS hops, [_x IN nodes(p) | _x.id] AS path
RETURN {{ e.rel_element('r', "['dependency']" if rel_type == 'DEPENDS_ON' else "['entity']") }} AS element,
       {start: s.id, neighbour: n.id, hops: hops, path: path} AS context,
       null AS score
ORDER BY hops, n.id, path
LIMIT $limit
