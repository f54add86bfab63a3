{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The retractions of DEPENDS_ON and OWNS records recorded in [$from, $to] and known at
// $known_at: each tombstone (status 'retracted', recorded_at the retraction's time, keeping
// the retracted record's statement, ACL and interval), "what changed between July 1 and
// July 15?" lists the dependency or owner record retracted then. The tombstone and both
// endpoint records are each readable by the subject (tenant, ACL, purpose, record time,
// ceiling of the latest record: an edge whose ACL a later record tightened is never read).
{% if scope == 'service' -%}
// Only the edges of one service: its dependencies (out), its dependents and owners (in).
CALL () {
  MATCH (a:KG {tenant: $tenant, id: $service_id})-[x:DEPENDS_ON]->(b:KG)
  WHERE {{ v.visible_history('a') }} AND {{ v.visible_history_rel('x', 'DEPENDS_ON') }} AND {{ v.visible_history('b') }}
    AND x.status = 'retracted' AND x.recorded_at >= $from AND x.recorded_at <= $to
  RETURN x, a.id AS from_id, b.id AS to_id
  UNION
  MATCH (a:KG)-[x:DEPENDS_ON|OWNS]->(b:KG {tenant: $tenant, id: $service_id})
  WHERE {{ v.visible_history('a') }} AND {{ v.visible_history_rel('x', 'DEPENDS_ON|OWNS') }} AND {{ v.visible_history('b') }}
    AND x.status = 'retracted' AND x.recorded_at >= $from AND x.recorded_at <= $to
  RETURN x, a.id AS from_id, b.id AS to_id
}
{%- else -%}
// Every such edge of the tenant: a seek of each type's (tenant, key) index (a key starts
// with its type), never another tenant's edges.
CALL () {
  MATCH (a:KG)-[x:DEPENDS_ON]->(b:KG)
  USING INDEX x:DEPENDS_ON(tenant, key)
  WHERE x.tenant = $tenant AND x.key STARTS WITH 'DEPENDS_ON|'
    AND {{ v.visible_history('a') }} AND {{ v.visible_history_rel('x', 'DEPENDS_ON') }} AND {{ v.visible_history('b') }}
    AND x.status = 'retracted' AND x.recorded_at >= $from AND x.recorded_at <= $to
  RETURN x, a.id AS from_id, b.id AS to_id
  UNION
  MATCH (a:KG)-[x:OWNS]->(b:KG)
  USING INDEX x:OWNS(tenant, key)
  WHERE x.tenant = $tenant AND x.key STARTS WITH 'OWNS|'
    AND {{ v.visible_history('a') }} AND {{ v.visible_history_rel('x', 'OWNS') }} AND {{ v.visible_history('b') }}
    AND x.status = 'retracted' AND x.recorded_at >= $from AND x.recorded_at <= $to
  RETURN x, a.id AS from_id, b.id AS to_id
}
{%- endif %}
// The context's superseded_at is that of a later record of the edge known at $known_at
// (made again after the retraction), else null.
// The copies of a tombstone (one per pair of endpoint records) differ only in superseded_at:
// the latest-ending one (a current one first) stands for it, each (key, version) once.
WITH x.key AS key, x.version AS version, from_id, to_id, collect(x) AS copies
WITH key, version, from_id, to_id, reduce(c = head(copies), y IN copies | CASE WHEN c.superseded_at IS NULL OR (y.superseded_at IS NOT NULL AND y.superseded_at <= c.superseded_at) THEN c ELSE y END) AS x
RETURN {{ e.rel_element('x', "['entity']", statement="from_id + ' ' + type(x) + ' ' + to_id") }} AS element,
       {key: x.key, from_id: from_id, to_id: to_id, retracted_at: {{ e.instant('x.recorded_at') }}, superseded_at: {{ e.instant('CASE WHEN x.superseded_at <= $known_at THEN x.superseded_at END') }}} AS context,
       null AS score
ORDER BY x.recorded_at, x.key, x.version
LIMIT $limit
