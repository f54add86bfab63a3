{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Every OWNS edge into an alert or a runbook version (team -> alert | runbook) with its valid
// interval: the gate picks the one valid at as_of (a service's owners: ownership_over_time).
{#- From version 4 (`owned_kind`; a Jinja comment, so versions 1-3 keep their text) each row
    also says what kind of thing is owned and, for a runbook version, when the version ended:
    an OWNS record of a version holds no longer than the version, as owned_by_team 4. #}
MATCH (t:KG:Team)-[o:OWNS]->(x:KG {id: $entity_id})
WHERE (x:Alert OR x:Runbook)
  AND {{ v.visible('t') }} AND {{ v.visible_rel('o', 'OWNS') }} AND {{ v.visible('x') }}
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + x.id", conflict_key="'ownership|' + x.id") }} AS element,
       {owned: x.id, team: t.id, team_name: t.name{% if owned_kind %}, owned_kind: CASE WHEN x:Alert THEN 'alert' ELSE 'runbook' END, owned_until: {{ e.instant('x.valid_to') }}{% endif %}} AS context,
       null AS score
ORDER BY o.valid_from, t.id, o.key
LIMIT $limit
