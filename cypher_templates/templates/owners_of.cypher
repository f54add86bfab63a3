{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Every OWNS edge into an alert or a runbook version (team -> alert | runbook) with its valid
// interval: the gate picks the one valid at as_of (a service's owners: ownership_over_time).
MATCH (t:KG:Team)-[o:OWNS]->(x:KG {id: $entity_id})
WHERE (x:Alert OR x:Runbook)
  AND {{ v.visible('t') }} AND {{ v.visible_rel('o', 'OWNS') }} AND {{ v.visible('x') }}
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + x.id", conflict_key="'ownership|' + x.id") }} AS element,
       {owned: x.id, team: t.id, team_name: t.name} AS context,
       null AS score
ORDER BY o.valid_from, t.id, o.key
LIMIT $limit
