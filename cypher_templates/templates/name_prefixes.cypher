{% import '_fulltext.j2' as f with context -%}
// The names and ids that start with what was typed ("pay", "payment": payment-api and
// payment-db): each word of $text as a Lucene prefix term ($prefix_text: lower-case letters
// and digits only, derived by the compiler), in the subject's tenant's own index, bounded and
// filtered like fulltext_search; a record matching more of the words scores higher. The rows
// are suggestions the caller keeps only when a name or id starts with the typed text: never
// evidence.
{{ f.ranked_hits('$prefix_text', "['entity']") }}
