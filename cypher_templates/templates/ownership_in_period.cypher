{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The OWNS edges of a service valid at some instant of [$from, $to] ($from null: since its
// first record), newest first: a history longer than $limit loses its oldest records, never
// the owners nearest $to, and the run says where it was cut (investigator/ownership_history.py).
MATCH (t:KG:Team)-[o:OWNS]->(s:KG:Service {id: $service_id})
WHERE {{ v.visible('t') }} AND {{ v.visible_rel('o', 'OWNS') }} AND {{ v.visible('s') }}
  AND (o.valid_from IS NULL OR o.valid_from <= $to)
  AND ($from IS NULL OR o.valid_to IS NULL OR o.valid_to > $from)
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + s.id", conflict_key="'ownership|' + s.id") }} AS element,
       {service: s.id, team: t.id, team_name: t.name} AS context,
       null AS score
ORDER BY o.valid_from IS NULL, o.valid_from DESC, t.id, o.key
LIMIT $limit
