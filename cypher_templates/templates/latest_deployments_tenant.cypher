{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The newest deployments of every service the subject may read at or before $to (deployment
// time: finished_at, else started_at, else valid_from), newest first: "the release" of a
// question naming no service when none went out in the day before as_of ("what changed an
// hour before the release?", "was the 10:02 release approved?" asked months later). Linked
// to a visible service as in deployments_in_window_tenant, and its row shape; a seek of the
// tenant.
MATCH (d:KG:Deployment)
WHERE d.tenant = $tenant AND {{ v.visible('d') }}
WITH d, coalesce(d.finished_at, d.started_at, d.valid_from) AS deployed_at
WHERE deployed_at <= $to
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
ORDER BY deployed_at DESC, d.id
LIMIT $limit
