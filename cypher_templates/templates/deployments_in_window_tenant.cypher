{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Deployments (releases) of every service the subject may read whose deployment time
// (finished_at, else started_at, else valid_from) falls in [$from, $to]: "what changed in the
// last hour" with no service named. A deployment counts only through a visible service that
// it is linked to (DEPLOYED_AS / DEPLOYED_TO edge) or that its `service` property names, as in
// deployments_in_window; one row per deployment, naming the first such service by id.
// A seek of the (tenant, service) index on the tenant: the cost follows this tenant's
// deployments, never another tenant's (issue 12).
MATCH (d:KG:Deployment)
WHERE d.tenant = $tenant AND {{ v.visible('d') }}
WITH d, coalesce(d.finished_at, d.started_at, d.valid_from) AS deployed_at
WHERE deployed_at >= $from AND deployed_at <= $to
CALL (d) {
  MATCH (s:KG:Service)-[r:DEPLOYED_AS|DEPLOYED_TO]-(d)
  WHERE {{ v.visible('s') }} AND {{ v.visible_rel('r', 'DEPLOYED_AS|DEPLOYED_TO') }}
  RETURN s.id AS service
  UNION
  MATCH (s:KG:Service {tenant: $tenant, id: d.service})
  WHERE {{ v.visible('s') }}
  RETURN s.id AS service
}
WITH d, deployed_at, min(service) AS service
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: service, deployment: d.id, deployed_at: {{ e.instant('deployed_at') }}} AS context,
       null AS score
ORDER BY deployed_at, d.id
LIMIT $limit
