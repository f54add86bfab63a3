{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Every record of the OWNS edges of a service known at $known_at, superseded and retracted
// ones included (security predicate only: tenant, ACL, purpose), each (key, version) once,
// by key and version: what an earlier --known-at answered for an instant, and what since.
MATCH (t:KG:Team)-[o:OWNS]->(s:KG:Service {tenant: $tenant, id: $service_id})
WHERE {{ v.visible_history('t') }} AND {{ v.visible_history_rel('o', 'OWNS') }} AND {{ v.visible_history('s') }}
WITH o.key AS key, o.version AS version, collect({o: o, t: t, s: s})[0] AS r
WITH r.o AS o, r.t AS t, r.s AS s
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + s.id", conflict_key="'ownership|' + s.id") }} AS element,
       {service: s.id, team: t.id, team_name: t.name, superseded_at: {{ e.instant('o.superseded_at') }}} AS context,
       null AS score
ORDER BY o.key, o.version
LIMIT $limit
