{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The OWNS edges out of a team (team -> service | alert | runbook) valid at some instant of
// [$from, $to] (either null: unbounded), newest first: what a team owned, for a question
// asked from the team's side (investigator/ownership_history.py). A team the subject may not
// read matches nothing, as a team that does not exist.
{#- From version 4 (`owned_kind`; a Jinja comment, so versions 1-3 keep their text) each row
    also says what kind of thing is owned and, for a runbook version, when the version ended:
    an OWNS record of a version holds no longer than the version (a superseded one is owned
    by no one since), and one ended before $from is no part of the period. #}
MATCH (t:KG:Team {id: $team_id})-[o:OWNS]->(x:KG)
WHERE (x:Service OR x:Alert OR x:Runbook)
  AND {{ v.visible('t') }} AND {{ v.visible_rel('o', 'OWNS') }} AND {{ v.visible('x') }}
  AND ($to IS NULL OR o.valid_from IS NULL OR o.valid_from <= $to)
  AND ($from IS NULL OR o.valid_to IS NULL OR o.valid_to > $from)
{%- if owned_kind %}
  AND ($from IS NULL OR NOT x:Runbook OR x.valid_to IS NULL OR x.valid_to > $from)
{%- endif %}
RETURN {{ e.rel_element('o', "['ownership']", statement="t.id + ' OWNS ' + x.id", conflict_key="'ownership|' + x.id") }} AS element,
       {owned: x.id, team: t.id, team_name: t.name, asked_team: t.id{% if owned_kind %}, owned_kind: CASE WHEN x:Service THEN 'service' WHEN x:Alert THEN 'alert' ELSE 'runbook' END, owned_until: {{ e.instant('x.valid_to') }}{% endif %}} AS context,
       null AS score
ORDER BY o.valid_from IS NULL, o.valid_from DESC, x.id, o.key
LIMIT $limit
