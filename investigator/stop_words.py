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

# How much or how often, said in a hurry ("lots of REST errors from virt-controller", "vm keeps
# migrating"): every page is about something happening too much, so the words name none.
# Counted, a rare one ("lots", no page says it) kept the page named by the other four words
# from fitting. Read by the runbook search only (investigator/runbook_search.py).
_QUANTITY_TEXT = """
    lots lot bunch tons keeps keep kept
"""
QUANTITY_FILLER = frozenset(_QUANTITY_TEXT.split())

# Negations and "can" typed without their apostrophe ("ruler cant push samples", "alertmanager
# cant load configs"): the fulltext words of "can't" are "can" and "t", both stop words, so
# these are too; kept, a word no page has, they sank the page the rest of the query names
# below half the query (no runbook fit). Read by the runbook search only. Not "cannot", a
# word as written that alert names spell (PGBouncerCannotProcess, VMCannotBeEvicted): as a
# stop word it moved --alert PGBouncerCannotProcess's steps to another section.
_APOSTROPHE_LESS_TEXT = """
    cant dont doesnt didnt isnt arent wasnt werent wont wouldnt couldnt shouldnt
    hasnt havent hadnt
"""
APOSTROPHE_LESS_NEGATIONS = frozenset(_APOSTROPHE_LESS_TEXT.split())

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

# What any runbook is for, asked of it in a hurry ("rollback steps", "fix etcd", "ceph
# mitigation", "how to handle PAY-4097"): every page is steps to fix, mitigate or resolve a
# problem, so the words name none. Counted, a rare one decided: "steps" (no page says it)
# sank a 100% cover of "rollback", and "fix" chose the one etcd page whose text happens to
# say "if none of the above fix the issue" over 17 others. Read by the runbook search only
# (investigator/runbook_search.py), not the planner ("how do I fix X?" still asks for steps).
_GENERIC_ACTION_TEXT = """
    step steps fix fixes fixing resolve resolving troubleshoot troubleshooting mitigate
    mitigating mitigation mitigations remediate remediation handle handling issue issues
    problem problems instructions procedure procedures howto guide guidance playbook
    playbooks solve solving solution
"""
GENERIC_ACTION_WORDS = frozenset(_GENERIC_ACTION_TEXT.split())

# The same in Chinese, as words of two characters (the index reads Han text one character a
# word, and a character alone is often a word of its own: 理 of 管理, 复 of 复制): 处理
# (handle), 解决 (resolve), 修复 (fix), 步骤 (steps), 问题 (problem), 办法/方法 (way), 怎么办
# (what to do), 应该 (should). "PAY-4097 怎么处理" is "PAY-4097": before, 处 and 理 outvoted the
# code (21% of the query).
CHINESE_ACTION_PHRASES = (
    "怎么办",
    "处理",
    "解决",
    "修复",
    "步骤",
    "问题",
    "办法",
    "方法",
    "应该",
)
