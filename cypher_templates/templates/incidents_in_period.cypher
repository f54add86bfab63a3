{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The incidents the subject may read that were open at some time in [$from, $to] (start:
// started_at, else valid_from, at or before $to; end: resolved_at, else valid_to, none or
// at or after $from): "which incidents did we have in July?" with no service named. Each
// row names the services it affected that the subject may read (AFFECTED_BY records it may
// read), sorted; oldest start first. A seek of the (tenant, id) index on the tenant: the
// cost follows this tenant's incidents, never another tenant's.
MATCH (i:KG:Incident)
WHERE i.tenant = $tenant AND {{ v.visible('i') }}
WITH i, coalesce(i.started_at, i.valid_from) AS started, coalesce(i.resolved_at, i.valid_to) AS ended
WHERE started <= $to AND (ended IS NULL OR ended >= $from)
CALL (i) {
  MATCH (s:KG:Service)-[r:AFFECTED_BY]->(i)
  WHERE {{ v.visible('s') }} AND {{ v.visible_rel('r', 'AFFECTED_BY') }}
  WITH DISTINCT s.id AS service
  ORDER BY service
  RETURN collect(service) AS services
}
RETURN {{ e.node_element('i', "['incident_report']") }} AS element,
       {incident: i.id, started_at: {{ e.instant('started') }}, resolved_at: {{ e.instant('ended') }}, services: services} AS context,
       null AS score
ORDER BY started, i.id
LIMIT $limit
