{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The newest deployments of every service the subject may read at or before $to (deployment
// time: finished_at, else started_at, else valid_from), newest first: "the release" of a
// question naming no service when none went out in the day before as_of ("what changed an
// hour before the release?", "was the 10:02 release approved?" asked months later). Linked
// to a visible service as in deployments_in_window_tenant, and its row shape; a seek of the
// tenant.
{% if time_seeks -%}
// Sought backward from $to on (tenant, <field>) for each field of the deployment time, each
// branch taking only the deployments no earlier field places (so the times are coalesce's).
// First the newest 4 * $limit of each index alone (index order, no filter), checked: the
// $limit-th newest that pass is a floor no answer row is older than. Then each field is
// sought from that floor (a second before it: a time in another zone at the same instant
// still passes) to $to, checked, ordered and cut, so the rows are exactly version 3's. With
// fewer than $limit passing among the candidates there is no floor and every deployment up
// to $to is read, as version 3 did (a subject who can read few of the newest).
{%- from '_deployments.j2' import service_of with context %}
{%- macro candidates(field, unset) %}
  MATCH (d:KG:Deployment)
  USING INDEX d:Deployment(tenant, {{ field }})
  WHERE d.tenant = $tenant AND d.{{ field }} <= $to
  WITH d ORDER BY d.tenant DESC, d.{{ field }} DESC LIMIT 4 * $limit
  WITH d WHERE {% for f in unset %}d.{{ f }} IS NULL AND {% endfor %}{{ v.visible('d') }}
  RETURN d, d.{{ field }} AS deployed_at
{%- endmacro %}
{%- macro from_floor(field, unset) %}
  MATCH (d:KG:Deployment)
  USING INDEX d:Deployment(tenant, {{ field }})
  WHERE d.tenant = $tenant AND d.{{ field }} >= floor AND d.{{ field }} <= $to
    {%- for f in unset %} AND d.{{ f }} IS NULL{% endfor %}
    AND {{ v.visible('d') }}
  WITH d, d.{{ field }} AS deployed_at
  ORDER BY deployed_at DESC
{{- service_of() }}
  WITH d, deployed_at, service WHERE service IS NOT NULL
  RETURN d, deployed_at, service ORDER BY deployed_at DESC, d.id LIMIT $limit
{%- endmacro %}
CALL () {
{{- candidates('finished_at', []) }}
  UNION ALL
{{- candidates('started_at', ['finished_at']) }}
  UNION ALL
{{- candidates('valid_from', ['finished_at', 'started_at']) }}
}
{{- service_of() }}
WITH deployed_at WHERE service IS NOT NULL
ORDER BY deployed_at DESC
LIMIT $limit
WITH collect(deployed_at) AS newest
WITH CASE
  WHEN size(newest) >= $limit THEN newest[-1] + duration('-PT1S')
  ELSE datetime('-999999999-01-01T00:00:00Z')
END AS floor
CALL (floor) {
{{- from_floor('finished_at', []) }}
  UNION ALL
{{- from_floor('started_at', ['finished_at']) }}
  UNION ALL
{{- from_floor('valid_from', ['finished_at', 'started_at']) }}
}
{% else -%}
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
{% endif -%}
RETURN {{ e.node_element('d', "['deployment_time']") }} AS element,
       {service: service, deployment: d.id, deployed_at: {{ e.instant('deployed_at') }}} AS context,
       null AS score
ORDER BY deployed_at DESC, d.id
LIMIT $limit
