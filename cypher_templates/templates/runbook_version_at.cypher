{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
// The version of one runbook's SUPERSEDES chain that is valid at $at (valid_from <= $at <
// valid_to, an open end holding), as known at $known_at: a page with many versions (a git
// history's) has its version in force found however far along the chain it lies, where a
// search's few hits and runbooks_for's four steps may not reach it. The walk is bounded
// (1000 steps); each version row names the version that replaces it, as runbooks_for's do.
MATCH (x:KG:Runbook {id: $runbook_id})
WHERE {{ v.visible('x') }}
MATCH p = (x)-[chain:SUPERSEDES*0..1000]-(ver:KG:Document)
WHERE {{ v.visible('ver') }} AND {{ v.visible_path('p', 'SUPERSEDES') }}
  AND (ver.valid_from IS NULL OR ver.valid_from <= $at)
  AND (ver.valid_to IS NULL OR $at < ver.valid_to)
WITH DISTINCT x, ver
OPTIONAL MATCH (newer:KG:Document)-[s:SUPERSEDES]->(ver)
WHERE {{ v.visible('newer') }} AND {{ v.visible_rel('s', 'SUPERSEDES') }}
WITH x, ver, min(newer.id) AS replacement
RETURN {{ e.node_element('ver', "['runbook']", replacement='replacement') }} AS element,
       {anchor: x.id, anchor_type: 'runbook', linked_via: []} AS context,
       null AS score
ORDER BY ver.id, ver.version
LIMIT $limit
