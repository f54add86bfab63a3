"""What looks like an alert's name in text: `KubePodCrashLooping`, `KubeAPIDown`,
`etcdNoLeader`, `TargetDown`; not `OpenShift`, `PostgreSQL` or `Watchdog`.

Prometheus alert names are identifiers in CamelCase, often with acronyms (API, CPU, GRPC)
and sometimes a lowercase start (etcd). An identifier of three or more such parts is taken
for an alert's name; one of two parts only when its second part is a state an alert
reports (`TargetDown`, `KubeletDown`), so two-part product names are not. A single word
(`Watchdog`) is never one: it reads like any other word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from graph_schema.words import is_written_apart, word_parts

# An acronym's plural is one part (`RunVMs` -> run, vms; `NodeIPsLow` -> node, ips, low): before,
# its `s` read as the start of a word, `VMs` split into v and ms.
_IDENTIFIER_PART = re.compile(
    r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+"
)
_TOKEN = re.compile(r"\b[A-Za-z][A-Za-z0-9]{4,}\b")
# A case step inside the word: lower to upper (etcdNo, KubePod), or an acronym's end (CPUThr).
_CASE_STEP = re.compile(r"[a-z][A-Z]|[A-Z]{2}[a-z]")
# What the second part of a two-part alert name says (TargetDown, NodeFilesystemFull...).
_STATE_WORDS = """
down up high low failing failed failure failures errors slow stuck missing full lost
unhealthy degraded absent pending unavailable mismatch expiring expired restarting restarts
overcommit throttling lagging lag timeouts latency saturated unreachable unschedulable
"""
_STATES = frozenset(_STATE_WORDS.split())


def identifier_words(name: str) -> list[str]:
    """`CephMonQuorumLost` -> ceph, mon, quorum, lost; `ODFNodeMTULessThan9000` -> odf, node,
    mtu, less, than, 9000; also splits on `-`, `_`, `.` and `:`. Letters of any script are
    letters (`ZählerStand` -> zähler, stand; before, `ä` split it: z, hler, stand), and Han,
    hiragana and katakana are read as the fulltext analyzer reads them (`graph_schema.words`)."""
    if name.isascii():
        return [part.lower() for part in _IDENTIFIER_PART.findall(name)]
    parts: list[str] = []
    for word in word_parts(name):
        if is_written_apart(word):
            parts.append(word)
            continue
        # The word's shape in ASCII (upper, lower or caseless, digit), split as an ASCII name.
        shape = "".join("A" if c.isupper() else "0" if c.isdecimal() else "a" for c in word)
        parts += [word[m.start() : m.end()].lower() for m in _IDENTIFIER_PART.finditer(shape)]
    return parts


def is_camel_case(token: str) -> bool:
    """Whether `token` steps from lower to upper case, or ends an acronym, inside it
    (`TorIPCaller`, `etcdNoLeader`): words written as one; not `PAY`, `Error`, `5xx`."""
    return bool(_CASE_STEP.search(token))


def is_alert_name(token: str) -> bool:
    """Whether one identifier (no spaces) has the shape of an alert's name."""
    if not _TOKEN.fullmatch(token) or not _CASE_STEP.search(token):
        return False
    parts = identifier_words(token)
    return len(parts) >= 3 or (len(parts) == 2 and parts[-1] in _STATES)


# An alert id's name part (metric-style, or `Backup-failed` of a name with spaces), then `@`
# and the suffix the rules import gives one of several rules of that name (`@critical`, `@2`).
_SUFFIXED_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_:-]*@[A-Za-z0-9_.-]+")


def suffixed_alert_id(typed: str) -> str:
    """`NAME@critical`, the id the rules import printed (`alert:NAME@critical`) typed without
    its prefix, as that id; anything else as typed (an id's name part never holds `@`)."""
    if typed.startswith("alert:"):
        return typed  # the id as printed (a name part may hold `:`, as metric names do)
    return f"alert:{typed}" if _SUFFIXED_NAME.fullmatch(typed) else typed


# A finding type as AWS GuardDuty writes it, `ThreatPurpose:Resource/Name[.Mechanism][!Artifact]`
# (`UnauthorizedAccess:EC2/SSHBruteForce`, `Backdoor:EC2/C&CActivity.B!DNS`): capitals open
# its three parts, so a URL (`https://`) or a `key:value/path` in lower case is none.
_FINDING_TYPE = re.compile(
    r"(?<![\w:/.&!-])[A-Z][A-Za-z0-9]+:[A-Z][A-Za-z0-9]*/[A-Z][A-Za-z0-9&]*"
    r"(?:\.[A-Za-z0-9]+)*(?:![A-Za-z0-9]+)?(?![\w&/:-])"
)


def finding_types(text: str) -> list[str]:
    """The finding types of `text` (`Recon:IAMUser/MaliciousIPCaller` in a pasted finding),
    in order, each once: names as a page heads them, read whole."""
    return list(dict.fromkeys(_FINDING_TYPE.findall(text)))


def alert_names(text: str) -> list[str]:
    """The identifiers of `text` shaped like alert names, in order, each once; not the parts
    of a finding type (`SSHBruteForce` of `UnauthorizedAccess:EC2/SSHBruteForce`), which
    is read whole (`finding_types`)."""
    inside = [m.span() for m in _FINDING_TYPE.finditer(text)]
    return list(
        dict.fromkeys(
            m.group()
            for m in _TOKEN.finditer(text)
            if is_alert_name(m.group())
            and not any(start <= m.start() < end for start, end in inside)
        )
    )


def typed_as(text: str, name: str) -> bool:
    """Whether `text` types the alert `name` in another form: its words in order, in any
    case, written together or apart (`paymentapihigherrorrate`, `PAYMENTAPIHIGHERRORRATE`,
    "payment api high error rate" for `PaymentApiHighErrorRate`); never inside an id or a
    hyphenated name."""
    return _typed_pattern(name).search(text) is not None


def as_named(text: str, names: Iterable[str]) -> str:
    """`text` with each alert of `names` it types in another form (`typed_as`) written as
    the alert is named, so the rules that read alert names by their shape read it too.
    Names not shaped like an alert's are left alone: no rule reads them as alerts."""
    for name in sorted({n for n in names if is_alert_name(n)}, key=lambda n: (-len(n), n)):
        # A function, not a replacement string: a name is text, never a group reference.
        text = _typed_pattern(name).sub(_literal(name), text)
    return text


def _typed_pattern(name: str) -> re.Pattern[str]:
    words = [re.escape(w) for w in identifier_words(name)]
    return re.compile(r"(?<![\w:@/.-])" + r"[ \t]*".join(words) + r"(?![\w:@/-])", re.IGNORECASE)


def _literal(name: str) -> Callable[[re.Match[str]], str]:
    return lambda _match: name
