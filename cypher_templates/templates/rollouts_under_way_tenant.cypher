{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The deployments of every service the subject may read whose rollout was under way at $at:
// started at or before it (started_at) and finished after it (finished_at): "what changed in
// the last hour" with no service named, asked while a release rolls out (its deployment time,
// the finish, lies after the period, so deployments_in_window_tenant misses it). Linked to a
// visible service as in deployments_in_window_tenant, and its row shape; a seek of the tenant.
MATCH (d:KG:Deployment)
WHERE d.tenant = $tenant AND {{ v.visible('d') }}
  AND d.started_at <= $at AND d.finished_at > $at
CALL (d) {
  MATCH (s:KG:Service)-[r:DEPLOYED_AS|DEPLOYED_TO]-(d)
  WHERE {{ v.visible('s') }} AND {{ v.visible_rel('r', 'DEPLOYED_AS|DEPLOYED_TO') }}
  RETURN s.id AS service
  UNION
  MATCH (s:KG:Service {tenant: $tenant, id: d.service})
  WHERE {{ v.visible('s') }}
  RETURN s.id AS service
}
WITH d, min(service) AS service
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: service, deployment: d.id, deployed_at: {{ e.instant('d.finished_at') }}} AS context,
       null AS score
ORDER BY d.started_at DESC, d.id
LIMIT $limit
