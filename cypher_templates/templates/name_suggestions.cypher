{% import '_fulltext.j2' as f with context -%}
// Close matches for a name or id typed with a slip ("PaymentApiHighErrrorRate", "paymnet"):
// each word of $text as a Lucene fuzzy term ($fuzzy_text: lower-case letters and digits only,
// up to two edits, derived by the compiler), in the subject's tenant's own index, bounded and
// filtered like fulltext_search. The rows are suggestions the caller ranks by how close each
// name is to what was typed: never evidence.
{{ f.ranked_hits('$fuzzy_text', "['entity']") }}
