{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Every record of the OWNS edges into an alert or a runbook version known at $known_at,
// superseded and retracted ones included (security predicate only: tenant, ACL, purpose),
// each (key, version) once, by key and version: ownership_records for what owners_of reads.
MATCH (t:KG:Team)-[o:OWNS]->(x:KG {tenant: $tenant, id: $entity_id})
WHERE (x:Alert OR x:Runbook)
  AND {{ v.visible_history('t') }} AND {{ v.visible_history_rel('o', 'OWNS') }} AND {{ v.visible_history('x') }}
WITH o.key AS key, o.version AS version, collect({o: o, t: t, x: x})[0] AS r
WITH r.o AS o, r.t AS t, r.x AS x
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + x.id", conflict_key="'ownership|' + x.id") }} AS element,
       {owned: x.id, team: t.id, team_name: t.name, superseded_at: {{ e.instant('o.superseded_at') }}} AS context,
       null AS score
ORDER BY o.key, o.version
LIMIT $limit
