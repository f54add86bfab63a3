{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The OWNS edges out of a team (team -> service | alert | runbook) valid at some instant of
// [$from, $to] (either null: unbounded), newest first: what a team owned, for a question
// asked from the team's side (investigator/ownership_history.py). A team the subject may not
// read matches nothing, as a team that does not exist.
MATCH (t:KG:Team {id: $team_id})-[o:OWNS]->(x:KG)
WHERE (x:Service OR x:Alert OR x:Runbook)
  AND {{ v.visible('t') }} AND {{ v.visible_rel('o', 'OWNS') }} AND {{ v.visible('x') }}
  AND ($to IS NULL OR o.valid_from IS NULL OR o.valid_from <= $to)
  AND ($from IS NULL OR o.valid_to IS NULL OR o.valid_to > $from)
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + x.id", conflict_key="'ownership|' + x.id") }} AS element,
       {owned: x.id, team: t.id, team_name: t.name, asked_team: t.id} AS context,
       null AS score
ORDER BY o.valid_from IS NULL, o.valid_from DESC, x.id, o.key
LIMIT $limit
