{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The traces (Trace records) the subject may read that are linked to one element: a trace
// that MENTIONS it (an error code) or was OBSERVED_IN it (a service, an incident), started
// (valid_from) at or before $to and, when $from is given, at or after it: "show me the
// traces for PAY-4097" reads the error's own traces by as_of and those of the services
// that emitted it while it was emitted. The trace, the link and the element are each
// visible to the subject (tenant, ACL, purpose, record time, ceiling). One row per trace
// and link, the earliest first, ties by the trace's id and the link's key, so the row cap
// keeps the first traces, the same ones every run.
MATCH (t:KG:Trace)-[r:MENTIONS|OBSERVED_IN]->(a:KG {id: $anchor_id})
WHERE {{ v.visible('a') }} AND {{ v.visible_rel('r', 'MENTIONS|OBSERVED_IN') }} AND {{ v.visible('t') }}
  AND t.valid_from IS NOT NULL AND t.valid_from <= $to
  AND ($from IS NULL OR t.valid_from >= $from)
RETURN {{ e.node_element('t', "['trace']") }} AS element,
       {anchor: a.id, link: type(r), link_key: r.key, started_at: {{ e.instant('t.valid_from') }}} AS context,
       null AS score
ORDER BY t.valid_from, t.id, r.key
LIMIT $limit
