{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Deployments (releases) of a service whose deployment time (finished_at, else started_at,
// else valid_from) falls in [$from, $to]: linked by Service -[DEPLOYED_AS]-> Deployment or
// Deployment -[DEPLOYED_TO]-> Service, or naming the service in its `service` property.
{% if one_cut -%}
// Both ways to the service's releases first, then one order and one limit: a cut keeps the
// oldest rows of the window (a LIMIT per branch kept some of each, not the oldest).
CALL () {
  MATCH (s:KG:Service {id: $service_id})-[r:DEPLOYED_AS|DEPLOYED_TO]-(d:KG:Deployment)
  WHERE {{ v.visible('s') }} AND {{ v.visible_rel('r', 'DEPLOYED_AS|DEPLOYED_TO') }} AND {{ v.visible('d') }}
  RETURN s, d
  UNION
  // A seek of the (tenant, service) index: the cost follows this tenant's deployments of
  // this service, never another tenant's (issue 12).
  MATCH (d:KG:Deployment {tenant: $tenant, service: $service_id})
  WHERE {{ v.visible('d') }}
  MATCH (s:KG:Service {id: $service_id})
  WHERE {{ v.visible('s') }}
  RETURN s, d
}
WITH s, d, coalesce(d.finished_at, d.started_at, d.valid_from) AS deployed_at
WHERE deployed_at >= $from AND deployed_at <= $to
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: s.id, deployment: d.id, deployed_at: {{ e.instant('deployed_at') }}} AS context,
       null AS score
ORDER BY deployed_at, d.id
LIMIT $limit
{% else -%}
MATCH (s:KG:Service {id: $service_id})-[r:DEPLOYED_AS|DEPLOYED_TO]-(d:KG:Deployment)
WHERE {{ v.visible('s') }} AND {{ v.visible_rel('r', 'DEPLOYED_AS|DEPLOYED_TO') }} AND {{ v.visible('d') }}
WITH s, d, coalesce(d.finished_at, d.started_at, d.valid_from) AS deployed_at
WHERE deployed_at >= $from AND deployed_at <= $to
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: s.id, deployment: d.id, deployed_at: {{ e.instant('deployed_at') }}} AS context,
       null AS score
ORDER BY deployed_at, d.id
LIMIT $limit
UNION
// A seek of the (tenant, service) index: the cost follows this tenant's deployments of this
// service, never another tenant's (issue 12).
MATCH (d:KG:Deployment {tenant: $tenant, service: $service_id})
WHERE {{ v.visible('d') }}
MATCH (s:KG:Service {id: $service_id})
WHERE {{ v.visible('s') }}
WITH s, d, coalesce(d.finished_at, d.started_at, d.valid_from) AS deployed_at
WHERE deployed_at >= $from AND deployed_at <= $to
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: s.id, deployment: d.id, deployed_at: {{ e.instant('deployed_at') }}} AS context,
       null AS score
ORDER BY deployed_at, d.id
LIMIT $limit
{% endif -%}
