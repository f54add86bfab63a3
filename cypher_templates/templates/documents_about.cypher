{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
{% set via_types = 'MENTIONS|APPLIES_TO' if via == 'any' else via -%}
// Documents that {% if via == 'any' %}mention or apply to{% elif via == 'MENTIONS' %}mention{% else %}apply to{% endif %} an entity, newest-known version chain aware.
MATCH (d:KG:Document)-[r:{% if via == 'any' %}MENTIONS|APPLIES_TO{% else %}{{ via }}{% endif %}]->(x:KG {id: $entity_id})
WHERE {{ v.visible('d') }} AND {{ v.visible_rel('r', via_types) }} AND {{ v.visible('x') }}
WITH DISTINCT d, x, collect(DISTINCT type(r)) AS via
OPTIONAL MATCH (newer:KG:Document)-[s:SUPERSEDES]->(d)
WHERE {{ v.visible('newer') }} AND {{ v.visible_rel('s', 'SUPERSEDES') }}
WITH d, x, via, min(newer.id) AS replacement
RETURN {{ e.node_element('d', "['document']", replacement='replacement') }} AS element,
       {entity: x.id, via: via} AS context,
       null AS score
ORDER BY d.id, d.version
LIMIT $limit
