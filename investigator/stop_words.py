"""English function words: they say nothing about what a question or a search is about.

A fulltext query of every word of "The vault cache mirror is failing, how do I fix it?" ranks
an alert whose summary reads "The storage index is too old." above the alert named
`VaultCacheMirrorFailing` on "the" and "is" alone (short texts weigh each match more).
"""

from __future__ import annotations

_ENGLISH_TEXT = """
    a about above after again against all also am among an and any are as at be because been
    before being
    below between both but by can could did do does doing during each either few for
    from further had has have having he her here hers him his how i if in into is it its
    itself just may me might more most must my neither no nor not now of off on once only or
    other our ours out over own per please same shall she should so some such than that the
    their theirs them then there these they this those through to too under until upon us
    very via was we were what when whenever where whether which while who whom why will with
    within would you your
"""
ENGLISH_STOP_WORDS = frozenset(_ENGLISH_TEXT.split())

# What a hurried on-call engineer adds around the words that matter ("i think virt api is
# down again, please help"): hedges, greetings, pleas. Said of any page, so they name none;
# counted as query words, a rare one ("think") sank the share every runbook covered.
_HURRIED_TEXT = """
    actually anymore anyone anything apparently appear appears asap basically believe btw
    currently dunno everyone everything getting guess guys hello help hey hi idk kinda know
    like look looks maybe okay ok perhaps plz pls possibly probably really seeing seem
    seemed seems someone something somehow still suddenly sure thank thanks think
    thought urgent urgently wonder
"""
HURRIED_FILLER = frozenset(_HURRIED_TEXT.split())

# Chinese function characters. The fulltext analyzer reads Han text one character a word
# (graph_schema.words: "支付失败" is 支, 付, 失, 败), so a question's particles, pronouns and
# question words would each be a word searched for: "的" (of) is on every Chinese page.
_CHINESE_TEXT = """
    的 了 着 是 在 和 与 及 或 吗 呢 吧 啊 么 什 怎 如 何 为 我 你 您 他 她 它 们 这 那
    个 之 其 被 把 从 对 于 也 都 就 请 该
"""
CHINESE_FUNCTION_CHARACTERS = frozenset(_CHINESE_TEXT.split())

# Words that say what kind of record a question is about, not which one: "who owns the broken
# service?" names no service, and a search for "service" finds whichever record's alias holds
# the word (svc:ledger's "ledger-service"), whose owner a hurried on-call would then page.
KIND_NOUNS = frozenset(
    {"service", "services", "system", "systems", "app", "apps", "application", "applications"}
)
