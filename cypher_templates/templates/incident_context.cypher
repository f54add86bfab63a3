{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// An incident, the services it affected, the alerts it triggered and the error codes those
// services emitted (with first seen). Each branch is capped; the executor reports truncation.
MATCH (i:KG:Incident {id: $incident_id})
WHERE {{ v.visible('i') }}
RETURN {{ e.node_element('i', "['incident_report']") }} AS element,
       {incident: i.id, part: 'incident'} AS context, null AS score
ORDER BY i.id
LIMIT $limit
UNION ALL
MATCH (s:KG:Service)-[r:AFFECTED_BY]->(i:KG:Incident {id: $incident_id})
WHERE {{ v.visible('i') }} AND {{ v.visible_rel('r', 'AFFECTED_BY') }} AND {{ v.visible('s') }}
RETURN {{ e.rel_element('r', "['affected_service']", statement="i.id + ' AFFECTED ' + s.id") }} AS element,
       {incident: i.id, service: s.id, part: 'affected_service'} AS context, null AS score
ORDER BY s.id, r.key
LIMIT $limit
UNION ALL
MATCH (a:KG:Alert)-[r:TRIGGERED]->(i:KG:Incident {id: $incident_id})
WHERE {{ v.visible('i') }} AND {{ v.visible_rel('r', 'TRIGGERED') }} AND {{ v.visible('a') }}
RETURN {{ e.node_element('a', "['alert_definition']") }} AS element,
       {incident: i.id, alert: a.id, fired_at: {{ e.instant('coalesce(r.fired_at, r.valid_from)') }}, part: 'alert'} AS context, null AS score
ORDER BY a.id
LIMIT $limit
UNION ALL
MATCH (i:KG:Incident {id: $incident_id})<-[r:AFFECTED_BY]-(s:KG:Service)-[m:EMITTED]->(c:KG:ErrorCode)
WHERE {{ v.visible('i') }} AND {{ v.visible_rel('r', 'AFFECTED_BY') }} AND {{ v.visible('s') }} AND {{ v.visible_rel('m', 'EMITTED') }} AND {{ v.visible('c') }}
RETURN {{ e.rel_element('m', "['error_first_seen']", statement="s.id + ' EMITTED ' + c.id") }} AS element,
       {incident: i.id, service: s.id, error_code: c.id, code: c.code, first_seen: {{ e.instant('coalesce(m.first_seen, m.valid_from)') }}, part: 'error_code'} AS context, null AS score
ORDER BY c.id, s.id
LIMIT $limit
