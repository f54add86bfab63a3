{% import '_visibility.j2' as v %}{% import '_element.j2' as e -%}
// Change events (config changes, flag flips, infra work) in [$from, $to]: the confounders a
// correlation claim must rule out.{% if scope == 'service' %} Only those linked to one service.{% endif %}
{% if scope == 'service' -%}
MATCH (c:KG:ChangeEvent)-[r:CHANGED]->(s:KG:Service {id: $service_id})
WHERE {{ v.visible('c') }} AND {{ v.visible('r') }} AND {{ v.visible('s') }}
WITH c, s.id AS service, coalesce(r.at, c.at, c.valid_from) AS at
{%- else -%}
// A seek of the ChangeEvent (tenant) index: this tenant's events only, never a scan of every
// tenant's change events or records (issue 12). The hint: without it the planner seeks the
// recorded_at index of every tenant's KG records.
MATCH (c:KG:ChangeEvent {tenant: $tenant})
USING INDEX c:ChangeEvent(tenant)
WHERE {{ v.visible('c') }}
WITH c, null AS service, coalesce(c.at, c.valid_from) AS at
{%- endif %}
WITH c, service, at
WHERE at >= $from AND at <= $to
RETURN {{ e.node_element('c', "['change_event']") }} AS element,
       {service: service, change_event: c.id, at: at} AS context,
       null AS score
ORDER BY at, c.id
LIMIT $limit
