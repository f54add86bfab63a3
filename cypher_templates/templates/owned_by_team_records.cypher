{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Every record of the OWNS edges out of a team (team -> service | alert | runbook) known at
// $known_at, superseded and retracted ones included (security predicate only: tenant, ACL,
// purpose), each (key, version) once, by key and version: ownership_records from the team's
// side, so a team-side answer can say which of the team's records was retracted or
// corrected (investigator/ownership_history.py). A team of another tenant is never matched.
MATCH (t:KG:Team {tenant: $tenant, id: $team_id})-[o:OWNS]->(x:KG)
WHERE (x:Service OR x:Alert OR x:Runbook)
  AND {{ v.visible_history('t') }} AND {{ v.visible_history_rel('o', 'OWNS') }} AND {{ v.visible_history('x') }}
WITH o.key AS key, o.version AS version, collect({o: o, t: t, x: x})[0] AS r
WITH r.o AS o, r.t AS t, r.x AS x
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + x.id", conflict_key="'ownership|' + x.id") }} AS element,
       {owned: x.id, team: t.id, team_name: t.name, asked_team: t.id, owned_kind: CASE WHEN x:Service THEN 'service' WHEN x:Alert THEN 'alert' ELSE 'runbook' END, owned_until: {{ e.instant('x.valid_to') }}, superseded_at: {{ e.instant('o.superseded_at') }}} AS context,
       null AS score
ORDER BY o.key, o.version
LIMIT $limit
