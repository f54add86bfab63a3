{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The alert firings (FIRED_ON records, alert -> service) the subject may read that were
// firing at some time in [$from, $to] (start: fired_at, else valid_from, at or before $to;
// end: valid_to, none or after $from): "what alerts fired yesterday?", "any alerts firing
// now?" ($from = $to = as_of) with no service named. The alert, the service and the FIRED_ON
// record are each visible to the subject (tenant, ACL, purpose, record time, ceiling). The
// latest firing first, ties by the record's key, so the row cap keeps the latest firings,
// the same ones every run. A seek of the FIRED_ON (tenant, key) index on the tenant: the
// cost follows this tenant's firings, never another tenant's (nor a scan of every Alert).
MATCH (a:KG:Alert)-[r:FIRED_ON]->(s:KG:Service)
USING INDEX r:FIRED_ON(tenant, key)
WHERE r.tenant = $tenant AND r.key IS NOT NULL AND {{ v.visible_rel('r', 'FIRED_ON') }}
  AND {{ v.visible('a') }} AND {{ v.visible('s') }}
WITH a, r, s, coalesce(r.fired_at, r.valid_from) AS fired, r.valid_to AS ended
WHERE fired <= $to AND (ended IS NULL OR ended > $from)
RETURN {{ e.rel_element('r', "['alert_firing']") }} AS element,
       {alert: a.id, service: s.id, fired_at: {{ e.instant('fired') }}, ended_at: {{ e.instant('ended') }}} AS context,
       null AS score
ORDER BY fired DESC, r.key
LIMIT $limit
