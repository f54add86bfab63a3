{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Every OWNS edge of a service with its valid interval: the gate picks the one valid at as_of.
MATCH (t:KG:Team)-[o:OWNS]->(s:KG:Service {id: $service_id})
WHERE {{ v.visible('t') }} AND {{ v.visible_rel('o', 'OWNS') }} AND {{ v.visible('s') }}
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + s.id", conflict_key="'ownership|' + s.id") }} AS element,
       {service: s.id, team: t.id, team_name: t.name} AS context,
       null AS score
ORDER BY o.valid_from, t.id, o.key
LIMIT $limit
