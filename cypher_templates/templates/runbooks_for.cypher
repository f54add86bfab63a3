{% import '_visibility.j2' as v with context %}{% import '_element.j2' as e with context -%}
{% if anchor == 'runbook' -%}
// The runbook a question or lookup names itself (by id or name: a runbook imported without
// any APPLIES_TO link, one file named after its alert), with every version of its SUPERSEDES
// chain; each version row names the version that replaces it. Nothing links it: linked_via is
// empty, and the caller says the name is the only tie.
MATCH (x:KG:Runbook {id: $anchor_id})
WHERE {{ v.visible('x') }}
MATCH p = (x)-[chain:SUPERSEDES*0..4]-(ver:KG:Document)
WHERE {{ v.visible('ver') }} AND {{ v.visible_path('p', 'SUPERSEDES') }}
WITH DISTINCT x, ver, [] AS linked_via
{% else -%}
{% set anchor_label = {'service': 'Service', 'alert': 'Alert', 'error_code': 'ErrorCode'}[anchor] -%}
// Runbooks and policies linked to a {{ anchor }} (APPLIES_TO / GOVERNED_BY), with every version
// of their SUPERSEDES chain; each version row names the version that replaces it.
MATCH (x:KG:{{ anchor_label }} {id: $anchor_id})-[l:APPLIES_TO|GOVERNED_BY]-(rb:KG:Document)
WHERE (rb:Runbook OR rb:Policy)
  AND {{ v.visible('x') }} AND {{ v.visible_rel('l', 'APPLIES_TO|GOVERNED_BY') }} AND {{ v.visible('rb') }}
MATCH p = (rb)-[chain:SUPERSEDES*0..4]-(ver:KG:Document)
WHERE {{ v.visible('ver') }} AND {{ v.visible_path('p', 'SUPERSEDES') }}
WITH DISTINCT x, ver, collect(DISTINCT type(l)) AS linked_via
{% endif -%}
OPTIONAL MATCH (newer:KG:Document)-[s:SUPERSEDES]->(ver)
WHERE {{ v.visible('newer') }} AND {{ v.visible_rel('s', 'SUPERSEDES') }}
WITH x, ver, linked_via, min(newer.id) AS replacement
{% if missing_files -%}
// A file the last import of its source did not have (graph_schema/importers/missing_files.py):
// since when (the mark's recorded_at), as known at known_at; the record stays current.
OPTIONAL MATCH (gone:MissingFile {tenant: $tenant, id: ver.id})
WHERE {{ v.visible('gone') }} AND gone.source_id = ver.source_id
{% if unreadable_files -%}
// Of the latest mark, why its file was not read when the import had it (null: not there).
WITH x, ver, linked_via, replacement, gone ORDER BY gone.recorded_at DESC
WITH x, ver, linked_via, replacement, collect(gone)[0] AS latest
WITH x, ver, linked_via, replacement, latest.recorded_at AS missing_since, latest.unreadable AS unreadable
RETURN {{ e.node_element('ver', "['runbook']", replacement='replacement') }} AS element,
       {anchor: x.id, anchor_type: '{{ anchor }}', linked_via: linked_via, file_missing_since: {{ e.instant('missing_since') }}, file_unreadable: unreadable} AS context,
{% else -%}
WITH x, ver, linked_via, replacement, max(gone.recorded_at) AS missing_since
RETURN {{ e.node_element('ver', "['runbook']", replacement='replacement') }} AS element,
       {anchor: x.id, anchor_type: '{{ anchor }}', linked_via: linked_via, file_missing_since: {{ e.instant('missing_since') }}} AS context,
{% endif -%}
{% else -%}
RETURN {{ e.node_element('ver', "['runbook']", replacement='replacement') }} AS element,
       {anchor: x.id, anchor_type: '{{ anchor }}', linked_via: linked_via} AS context,
{% endif %}
       null AS score
ORDER BY ver.id, ver.version
LIMIT $limit
