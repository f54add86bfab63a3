{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The incidents the subject may read that had started by $at (start: started_at, else
// valid_from; end: resolved_at, else valid_to), those still open at $at first, then the
// latest started: which incident "the incident" of a question that names none can mean.
MATCH (i:KG:Incident {tenant: $tenant})
WHERE {{ v.visible('i') }}
WITH i, coalesce(i.started_at, i.valid_from) AS started, coalesce(i.resolved_at, i.valid_to) AS ended
WHERE started <= $at
WITH i, started, ended, (ended IS NULL OR ended > $at) AS open
RETURN {{ e.node_element('i', "['incident_report']") }} AS element,
       {incident: i.id, started_at: {{ e.instant('started') }}, resolved_at: {{ e.instant('ended') }}, open: open} AS context,
       null AS score
ORDER BY open DESC, started DESC, i.id
LIMIT $limit
