{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Change events (config changes, flag flips, infra work) in [$from, $to]: the confounders a
// correlation claim must rule out.{% if scope == 'service' %} Only those linked to one service.{% endif %}
{% if scope == 'service' -%}
MATCH (c:KG:ChangeEvent)-[r:CHANGED]->(s:KG:Service {id: $service_id})
WHERE {{ v.visible('c') }} AND {{ v.visible_rel('r', 'CHANGED') }} AND {{ v.visible('s') }}
WITH c, s.id AS service, coalesce(r.at, c.at, c.valid_from) AS at
WITH c, service, at
WHERE at >= $from AND at <= $to
{%- else -%}
// The event time is `at`, else `valid_from`: two range seeks of the window within the tenant,
// so the cost follows the window, never the tenant's or another tenant's change events
// (issue 12). First (tenant, at), read in index order (ordering by the fixed `c.tenant` first
// is what lets the planner use it) until $limit visible events; then (tenant, valid_from) for
// the events without `at`, only up to the last of those (a later one could not be a row). The
// hints keep the planner off the recorded_at index of every tenant's KG records.
CALL () {
  MATCH (c:KG:ChangeEvent)
  USING INDEX c:ChangeEvent(tenant, at)
  WHERE c.tenant = $tenant AND c.at >= $from AND c.at <= $to AND {{ v.visible('c') }}
  WITH c
  ORDER BY c.tenant, c.at, c.id
  LIMIT $limit
  RETURN collect({c: c, at: c.at}) AS by_at
}
WITH by_at, CASE WHEN size(by_at) = $limit THEN by_at[-1].at ELSE $to END AS until
CALL (until) {
  MATCH (c:KG:ChangeEvent)
  USING INDEX c:ChangeEvent(tenant, valid_from)
  WHERE c.tenant = $tenant AND c.valid_from >= $from AND c.valid_from <= until AND c.at IS NULL
    AND {{ v.visible('c') }}
  WITH c
  ORDER BY c.tenant, c.valid_from, c.id
  LIMIT $limit
  RETURN collect({c: c, at: c.valid_from}) AS by_valid_from
}
UNWIND by_at + by_valid_from AS event
WITH event.c AS c, null AS service, event.at AS at
{%- endif %}
RETURN {{ e.node_element('c', "['change_event']") }} AS element,
       {service: service, change_event: c.id, at: {{ e.instant('at') }}} AS context,
       null AS score
ORDER BY at, c.id
LIMIT $limit
