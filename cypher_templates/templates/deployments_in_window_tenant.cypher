{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// Deployments (releases) of every service the subject may read whose deployment time
// (finished_at, else started_at, else valid_from) falls in [$from, $to]: "what changed in the
// last hour" with no service named. A deployment counts only through a visible service that
// it is linked to (DEPLOYED_AS / DEPLOYED_TO edge) or that its `service` property names, as in
// deployments_in_window; one row per deployment, naming the first such service by id.
{% if window_ceilings -%}
// Version 6: each field's seek checked, linked and cut in index order as in version 5, the
// fields in turn, each later one sought only up to a ceiling: once the rows read so far (at
// most $limit per field, collected, so a field with none passes the others on) hold $limit,
// a release deployed after the $limit-th oldest of them can never be a row, so the next
// field is sought from $from to that time (a second after it: a time in another zone at the
// same instant still passes), not to $to. A wide window then costs about its oldest $limit
// releases in each index, where version 5 read the started_at and valid_from indexes' whole
// window to drop the releases finished_at places. The rows are version 5's.
{%- from '_deployments.j2' import service_of with context %}
{%- macro oldest(field, unset, until) %}
  MATCH (d:KG:Deployment)
  USING INDEX d:Deployment(tenant, {{ field }})
  WHERE d.tenant = $tenant AND d.{{ field }} >= $from AND d.{{ field }} <= $to
    {%- if until %} AND d.{{ field }} <= {{ until }}{% endif %}
    {%- for f in unset %} AND d.{{ f }} IS NULL{% endfor %}
    AND {{ v.visible('d') }}
  WITH d, d.{{ field }} AS deployed_at
  ORDER BY d.tenant, d.{{ field }}
{{- service_of() }}
  WITH d, deployed_at, service WHERE service IS NOT NULL
  WITH d, deployed_at, service ORDER BY d.tenant, deployed_at, d.id LIMIT $limit
  RETURN collect({d: d, deployed_at: deployed_at, service: service}) AS found
{%- endmacro %}
{%- macro ceiling() %}
CALL (rows) {
  UNWIND rows AS row
  WITH row.deployed_at AS deployed_at ORDER BY deployed_at LIMIT $limit
  RETURN CASE WHEN count(*) < $limit THEN $to ELSE max(deployed_at) + duration('PT1S') END AS until
}
{%- endmacro %}
CALL () {
{{- oldest('finished_at', [], none) }}
}
WITH found AS rows
{{- ceiling() }}
CALL (until) {
{{- oldest('started_at', ['finished_at'], 'until') }}
}
WITH rows + found AS rows
{{- ceiling() }}
CALL (until) {
{{- oldest('valid_from', ['finished_at', 'started_at'], 'until') }}
}
UNWIND rows + found AS row
WITH row.d AS d, row.deployed_at AS deployed_at, row.service AS service
{% elif ordered_window -%}
// Version 5: the window sought from $from on (tenant, <field>) for each field of the
// deployment time, each branch taking only the deployments no earlier field places (so the
// times are coalesce's), checked and linked in index order and cut at $limit in its own
// order (deployed_at, then id): the planner keeps the seek's order (`d.tenant` named in the
// sort, as latest_deployments_tenant 4 found), so the read stops after the branch's $limit
// oldest rows and their ties instead of linking every deployment of a wide window before one
// sort. The oldest $limit of the three branches' rows are then exactly version 4's.
{%- from '_deployments.j2' import service_of with context %}
{%- macro oldest(field, unset) %}
  MATCH (d:KG:Deployment)
  USING INDEX d:Deployment(tenant, {{ field }})
  WHERE d.tenant = $tenant AND d.{{ field }} >= $from AND d.{{ field }} <= $to
    {%- for f in unset %} AND d.{{ f }} IS NULL{% endfor %}
    AND {{ v.visible('d') }}
  WITH d, d.{{ field }} AS deployed_at
  ORDER BY d.tenant, d.{{ field }}
{{- service_of() }}
  WITH d, deployed_at, service WHERE service IS NOT NULL
  RETURN d, deployed_at, service ORDER BY d.tenant, deployed_at, d.id LIMIT $limit
{%- endmacro %}
CALL () {
{{- oldest('finished_at', []) }}
  UNION ALL
{{- oldest('started_at', ['finished_at']) }}
  UNION ALL
{{- oldest('valid_from', ['finished_at', 'started_at']) }}
}
{% else -%}
{% if time_seeks -%}
// The deployment time is finished_at, else started_at, else valid_from: one range seek of the
// window within the tenant per field, on (tenant, <field>), each branch taking only the
// deployments no earlier field places (so the rows are coalesce's), then one order and one
// limit. The cost follows this tenant's deployments in the window, never the tenant's other
// deployments nor another tenant's (issue 12); the hints keep the planner on those indexes.
CALL () {
  MATCH (d:KG:Deployment)
  USING INDEX d:Deployment(tenant, finished_at)
  WHERE d.tenant = $tenant AND d.finished_at >= $from AND d.finished_at <= $to
    AND {{ v.visible('d') }}
  RETURN d, d.finished_at AS deployed_at
  UNION ALL
  MATCH (d:KG:Deployment)
  USING INDEX d:Deployment(tenant, started_at)
  WHERE d.tenant = $tenant AND d.started_at >= $from AND d.started_at <= $to
    AND d.finished_at IS NULL AND {{ v.visible('d') }}
  RETURN d, d.started_at AS deployed_at
  UNION ALL
  MATCH (d:KG:Deployment)
  USING INDEX d:Deployment(tenant, valid_from)
  WHERE d.tenant = $tenant AND d.valid_from >= $from AND d.valid_from <= $to
    AND d.finished_at IS NULL AND d.started_at IS NULL AND {{ v.visible('d') }}
  RETURN d, d.valid_from AS deployed_at
}
{% else -%}
// A seek of the (tenant, service) index on the tenant: the cost follows this tenant's
// deployments, never another tenant's (issue 12).
MATCH (d:KG:Deployment)
WHERE d.tenant = $tenant AND {{ v.visible('d') }}
WITH d, coalesce(d.finished_at, d.started_at, d.valid_from) AS deployed_at
WHERE deployed_at >= $from AND deployed_at <= $to
{% endif -%}
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
ORDER BY deployed_at, d.id
LIMIT $limit
