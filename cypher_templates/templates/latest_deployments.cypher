{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The newest deployments of a service at or before $to (deployment time: finished_at, else
// started_at, else valid_from), newest first: "the release" a question means when no window
// around an error holds it ("Who owned payment-api before the release?", asked months later).
// The same two ways to a service's deployments as deployments_in_window, and its row shape.
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
WITH s, d, coalesce(d.finished_at, d.started_at, d.valid_from) AS deployed_at
{% if under_way -%}
// A rollout started by $to and not finished then is returned too (a release in progress).
WHERE deployed_at <= $to OR coalesce(d.started_at, deployed_at) <= $to
{% else -%}
WHERE deployed_at <= $to
{% endif -%}
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: s.id, deployment: d.id, deployed_at: {{ e.instant('deployed_at') }}} AS context,
       null AS score
ORDER BY deployed_at DESC, d.id
LIMIT $limit
