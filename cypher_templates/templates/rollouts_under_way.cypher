{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The deployments of a service whose rollout was under way at $at: started at or before it
// (started_at) and finished after it (finished_at). A window of deployment times ending at
// $at misses them (their deployment time is the finish). The same two ways to a service's
// deployments as deployments_in_window, and its row shape.
CALL () {
  MATCH (s:KG:Service {id: $service_id})-[r:DEPLOYED_AS|DEPLOYED_TO]-(d:KG:Deployment)
  WHERE {{ v.visible('s') }} AND {{ v.visible_rel('r', 'DEPLOYED_AS|DEPLOYED_TO') }} AND {{ v.visible('d') }}
  RETURN s, d
  UNION
  MATCH (d:KG:Deployment {tenant: $tenant, service: $service_id})
  WHERE {{ v.visible('d') }}
  MATCH (s:KG:Service {id: $service_id})
  WHERE {{ v.visible('s') }}
  RETURN s, d
}
WITH s, d, d.finished_at AS deployed_at
WHERE d.started_at <= $at AND deployed_at > $at
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: s.id, deployment: d.id, deployed_at: {{ e.instant('deployed_at') }}} AS context,
       null AS score
ORDER BY d.started_at DESC, d.id
LIMIT $limit
