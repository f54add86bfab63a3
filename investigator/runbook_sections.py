"""Which part of a runbook's text the card shows: the steps of the alert asked about.

Many runbook files hold one section per alert (grafana/tempo's `runbook.md`, Mimir's
runbooks page): headings named like `TempoPollsFailing`, and each alert's `runbook_url`
points at its own (`runbook.md#TempoPollsFailing`). The steps shown for an alert come from
that alert's section: its first steps-like subsection ("How to fix", "Mitigation"), else
the lines after a label line that marks steps (Mimir's "How to **fix** it:"), else its own
text, a subsection's under its title. A runbook with sections for two or more alerts never
lends one alert's steps to another: when no section is about what was asked, the card shows
the text before the first alert's section and says why.

Only Markdown runbooks carry their structure (`props.section_titles` and
`section_locators`, written by the importer); any other document keeps the plain rule:
its first steps-like section, else its text without headings.

An investigation that names an alert, or spells its name out in words ("tempo polls are
failing"), gets, of such a runbook, that alert's section as its evidence
(`section_excerpt`): the pack holds what is about the question, not the 30 KB of every
alert's steps, and a default budget fits it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from urllib.parse import unquote, urlsplit

from pydantic import BaseModel, ConfigDict

from cypher_templates.plan import PlanStep
from graph_schema.alert_names import alert_names, finding_types, identifier_words, is_alert_name
from graph_schema.importers.markdown_sections import (
    FenceReader,
    Section,
    anchor_for,
    close_headings,
    heading_text,
    same_anchor,
    sections_of,
)
from investigator.evidence import (
    EVIDENCE_HEADER_TOKENS,
    Evidence,
    estimate_tokens,
    evidence_id_for,
    sha256_text,
)
from investigator.runbook_fallback import LookupSteps
from investigator.runbook_search import query_stems, search_terms, spelled_out, text_stems

MAX_STEP_LINES = 5

# The transformation an evidence item carries when its content is one section of the
# record's text (the section's locator says which), not the whole text.
SECTION_EXCERPT = "section_excerpt"

# Whole words only: "TempoCompactionsFailing" is an alert's name, not an "action".
_STEPS_TITLE = re.compile(
    r"\b(?:steps?|mitigat\w*|remediat\w*|procedures?|recover\w*|resolutions?|actions?"
    r"|fix(?:es|ing)?|resolv(?:e|es|ing)|emergenc(?:y|ies))\b",
    re.IGNORECASE,
)
# Read for steps only when no section is steps-like: diagnosis comes before the fix.
_TROUBLESHOOTING_TITLE = re.compile(
    r"\b(?:troubleshoot\w*|diagnos\w*|investigat(?:e|es|ing|ions?))\b", re.IGNORECASE
)
# Emphasis in a line (`**fix**`, `__fix__`, `*fix*`, `_fix_`).
_EMPHASIS = re.compile(r"(?<![\w*])(\*\*|__|\*|_)(?=\S)(.+?)(?<=\S)\1(?![\w*])")
# A steps marker is a short line, not a sentence of the explanation: Mimir's are 25 or less.
_MARKER_MAX = 60
# ... and without a colon ("How to **investigate**"), of at most this many words and no
# sentence's end.
_MARKER_WORDS = 6
# A list item's line (`- **Failures**`, `1. **Fix**:`): a step, never a label.
_LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s")
_HEADING_LINE = re.compile(r"^#{1,6}\s")
# Free text picks an alert's section by the words of its name: at least this many.
_MIN_TITLE_WORDS = 2
# The least share of an alert name's words a heading has to be that alert's section when no
# heading is the name itself (3 of WhitehallUnenqueuedScheduledPublications' 4).
NAME_HEADING_SHARE = 0.6
# Free text that chose no section of a file of alert sections: the sections named instead.
CLOSEST_SECTIONS = 3
CLOSEST_TITLE_WEIGHT = 2


class SectionFocus(BaseModel):
    """What a lookup asked about, to find its section in a runbook of several alerts."""

    model_config = ConfigDict(frozen=True)

    # Alert names and `runbook_url` fragments, first the most specific: a section whose
    # anchor or title is one of them is the one asked about.
    names: tuple[str, ...] = ()
    # Free text: the alert section whose title has most of its words (and no tie).
    text: str | None = None
    # The words the user gave (pasted text, a page's line): they choose among a section's
    # cases (`SectionCase`), never which section is asked about.
    said: str | None = None


class SectionCase(BaseModel):
    """One of the subsections a section splits into, one per case ("Write Latency", "Read
    Latency"), each with steps of its own: the on-call reads the one that applies."""

    model_config = ConfigDict(frozen=True)

    title: str
    locator: str | None = None
    shown: bool = False  # whether its steps are the ones shown


class RunbookSteps(BaseModel):
    """The first lines of the steps, where they were read, and why, when it is not plain."""

    model_config = ConfigDict(frozen=True)

    lines: list[str]
    locator: str | None = None
    note: str | None = None
    # The definitions of the reference links the lines use (`[scale-app]: /kubernetes/...`
    # for `[documentation][scale-app]`), as written in the file: the card shows them after
    # the steps, so that a link the steps name can be followed.
    links: list[str] = []
    # The step lines of what the lines were read from that the card leaves out (cut at
    # MAX_STEP_LINES): the rest is at `locator`.
    more: int = 0
    # The cases the section asked about splits into, when it does (`_split`).
    cases: list[SectionCase] = []


def alert_focus(names: list[str], runbook_urls: list[str]) -> SectionFocus:
    """The focus of an alert lookup: each `runbook_url`'s fragment, then the names."""
    fragments = [unquote(urlsplit(url.strip()).fragment) for url in runbook_urls]
    ordered = [f for f in fragments if f.strip()] + [n for n in names if n.strip()]
    return SectionFocus(names=tuple(dict.fromkeys(ordered)))


def alert_name_in(alert_id: str) -> str:
    """The alert name of an alert's id, without the rule part (`alert:RedisReplicasFlapping@s1`
    is RedisReplicasFlapping): what its runbook's section is headed by or named after."""
    return alert_id.removeprefix("alert:").partition("@")[0]


def question_focus(question: str) -> SectionFocus:
    """The focus of a question: the alert names it types (`TempoPollsFailing`), then the
    error ids (`err-mimir-sample-timestamp-too-old`: a section may be headed by one, as the
    card's free text finds it); a claim names a section by no guess from other words."""
    return SectionFocus(names=tuple(dict.fromkeys([*alert_names(question), *code_words(question)])))


# A Markdown rule (`---`, `***`, `___`): a separator, never a step.
_RULE_LINE = re.compile(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")


def _fences() -> FenceReader:
    """A reader of a text's code fences (```bash ... ```): their marker lines are no steps;
    the commands inside them are. Any indent: a fence inside a list item is indented as
    deep as the item. ```` ```sudo iotop -P -a``` ```` is inline code, a step; a ```` ```bash ````
    inside a fence is a line of its code (`FenceReader`)."""
    return FenceReader(indent=None)


# Lines a command cut by MAX_STEP_LINES may add to be shown whole; a longer one is left out.
_FENCE_MORE = MAX_STEP_LINES
# A steps section that says there is none ("This is not expected to occur, therefore, there
# is no prescriptive way to fix it.", "Actions: None"): read at 3 a.m. as "nothing to do".
_NO_STEPS = re.compile(
    r"^\W*(?:none|n/?a|tbd|todo)\W*$|no prescriptive way|there (?:is|are) no (?:known )?"
    r"(?:fix|procedure|steps|mitigation|remediation|action)",
    re.IGNORECASE,
)
_NO_STEPS_MAX = 300  # characters: a longer section is a procedure that mentions it


# An HTML comment (`<!--DS: ... -->`, `<!--USstart-->`): never rendered, never a step.
_COMMENT_OPEN, _COMMENT_CLOSE = "<!--", "-->"
# A link reference definition (`[scale-app]: /kubernetes/...`): rendered as nothing; the
# links a shown step uses (`[documentation][scale-app]`) follow the steps (`_used_links`).
# A footnote's (`[^1]: ...`) is text a reader sees.
_LINK_DEFINITION = re.compile(r"^\s{0,3}\[(?!\^)([^\]]+)\]:\s*(\S+)")
# A line that starts a block of its own: never the continuation of a wrapped line.
_BLOCK_START = re.compile(r"^\s*(?:[-*+]\s|\d+[.)]\s|#{1,6}\s|>|\|)")
# A line that is only an image (`![Gitaly Queuing Graph](../../img/x.png)`, linked or not):
# a picture a terminal cannot show, never a step.
_IMAGE_LINE = re.compile(r"^\s*(?:\[\s*)?!\[[^\]]*\]\([^)]*\)(?:\s*\]\([^)]*\))?\s*$")
# A heading inside a section's text (an aside's, `###### Note`): shown as its label, `Note:`.
_INNER_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")


def _uncommented(line: str, in_comment: bool) -> tuple[str, bool]:
    """`line` without its HTML comments' text, and whether a comment is still open after it."""
    kept = ""
    while line:
        if in_comment:
            end = line.find(_COMMENT_CLOSE)
            if end < 0:
                return kept, True
            line, in_comment = line[end + len(_COMMENT_CLOSE) :], False
        else:
            start = line.find(_COMMENT_OPEN)
            if start < 0:
                return kept + line, False
            kept, line, in_comment = kept + line[:start], line[start + len(_COMMENT_OPEN) :], True
    return kept, in_comment


def _items(text: str) -> list[tuple[str, int | None]]:
    """The step lines of `text` with the number of each one's code fence (`_marked_items`)."""
    return [(line, fence) for line, fence, _ in _marked_items(text)]


def _marked_items(text: str) -> list[tuple[str, int | None, bool]]:
    """The step lines of `text` as a reader sees it rendered, each with the number of its
    code fence (None outside one): fence markers, rules, HTML comments and link reference
    definitions are no lines; a hard-wrapped sentence or list item is one line (its lines
    joined by a space: VirtAPIDown's five items were seven card lines), as plain text
    (`plain_text`); inside a fence each line is one, as written: less the fence's own
    indentation outside a list, with it inside a list item (where the item's lines keep
    theirs); each also says whether it is a heading's (`Note:`)."""
    items: list[tuple[str, int | None]] = []
    headings: set[int] = set()  # the items that are headings' titles
    fence: int | None = None
    fences = 0
    indent = 0  # the indentation taken off the open fence's lines
    # The indentation of the list item a fence may be inside (None outside a list): a
    # fence in an item keeps its indentation, as the item's lines keep theirs (a command
    # printed flush left between two indented bullets read as a step of its own).
    item_indent: int | None = None
    reader = _fences()
    verbatim: set[int] = set()  # the items that are indented code
    in_comment = False
    joinable = False  # whether the last item is prose a wrapped line continues
    for raw in text.splitlines():
        if not in_comment and reader.fence_line(raw):
            fences += fence is None
            fence = fences if reader.inside else None
            if reader.inside:
                indent = len(raw) - len(raw.lstrip(" "))
                indent = 0 if item_indent is not None and indent > item_indent else indent
            joinable = False
            continue
        if fence is not None:
            if raw.strip():
                cut = min(indent, len(raw) - len(raw.lstrip(" ")))
                items.append((raw[cut:].rstrip(), fence))
            continue
        line, in_comment = _uncommented(raw, in_comment)
        if (
            not line.strip()
            or _RULE_LINE.match(line)
            or _LINK_DEFINITION.match(line)
            or _IMAGE_LINE.match(line)
        ):
            # A blank line, a comment's, a definition's or an image's ends a paragraph.
            joinable = False
            continue
        if heading := _INNER_HEADING.match(line):
            title = heading_text(heading.group(1))
            headings.add(len(items))
            items.append((title if title.endswith((":", ".", "?", "!")) else f"{title}:", None))
            joinable = False
            item_indent = None
            continue
        if joinable and not _BLOCK_START.match(line):
            items[-1] = (f"{items[-1][0]} {line.strip()}", None)
        else:
            depth = len(line) - len(line.lstrip(" "))
            if _LIST_ITEM.match(line):
                item_indent = depth
            elif item_indent is not None and depth <= item_indent:
                item_indent = None  # a paragraph as far left as the item ends the list
            code = depth >= 4 and not _LIST_ITEM.match(line)
            if code:
                verbatim.add(len(items))
            items.append((line.rstrip(), None))
            joinable = not (code or _HEADING_LINE.match(line.lstrip()) or "|" in line[:1])
        # A line that ends with a hard break ("  ", "\\") or a label's colon ends its item.
        joinable = joinable and not line.endswith(("  ", "\\", ":"))
    # Prose as rendered (a wrapped emphasis is one item by now); code as written.
    return [
        (text if fenced is not None or i in verbatim else plain_text(text), fenced, i in headings)
        for i, (text, fenced) in enumerate(items)
    ]


# A code span (`` `rm -rf *_old` ``) or a backslash escape (`\*`): what emphasis never
# touches.
_VERBATIM = re.compile(r"(`+).+?\1(?!`)|\\[!-/:-@\[-`{-~]")
# Emphasis (CommonMark): `*` runs may sit inside a word (`un*frigging*believable`), `_`
# runs may not (`snake_case_name` is a name); the opener is followed and the closer preceded
# by no space.
_EMPHASIS_MARKS = re.compile(
    r"(?<!\*)(\*{1,3})(?![\s*])(.+?)(?<![\s*])\1(?!\*)"
    r"|(?<![\w_])(_{1,3})(?![\s_])(.+?)(?<![\s_])\3(?![\w_])"
)
# Placeholders for the verbatim parts while emphasis is taken out (a line that holds them
# is kept as written).
_HOLD_OPEN, _HOLD_CLOSE = "\ue000", "\ue001"
_HELD = re.compile(_HOLD_OPEN + r"(\d+)" + _HOLD_CLOSE)


def plain_text(line: str) -> str:
    r"""A line of Markdown prose as a reader sees it rendered: without emphasis marks
    (`**Stop** the service` is "Stop the service") and with backslash escapes read (`\*` is
    `*`); code spans are kept as written, their backticks too (`` `**/*.log` ``), as are
    links and list markers."""
    if _HOLD_OPEN in line or _HOLD_CLOSE in line:
        return line
    held: list[str] = []

    def hold(match: re.Match[str]) -> str:
        text = match.group(0)
        held.append(text if text.startswith("`") else text[1:])
        return f"{_HOLD_OPEN}{len(held) - 1}{_HOLD_CLOSE}"

    text = _VERBATIM.sub(hold, line)
    for _ in range(3):  # nested emphasis (`**a *b* c**`): one level a pass
        stripped = _EMPHASIS_MARKS.sub(lambda m: m.group(2) or m.group(4), text)
        if stripped == text:
            break
        text = stripped
    return _HELD.sub(lambda m: held[int(m.group(1))], text)


def rendered_lines(text: str) -> list[str]:
    """`text` as a reader sees it rendered, a line per paragraph, list item or heading
    (`_items`): what the card shows and an investigation's evidence preview reads."""
    return [line for line, _ in _items(text)]


def _fence_whole(items: list[tuple[str, int | None, bool]], end: int) -> int:
    """Where a card showing `items[:end]` ends instead, never inside a code fence: a fence
    cut short is shown to its end when that is at most _FENCE_MORE more lines, else left out
    (unless it is all there is)."""
    fence = items[end - 1][1] if end else None
    if fence is None:
        return end
    after = end
    while after < len(items) and items[after][1] == fence:
        after += 1
    if after - end <= _FENCE_MORE:
        return after
    start = end
    while start and items[start - 1][1] == fence:
        start -= 1
    return start or end


def _cut(text: str) -> tuple[list[str], int]:
    """The step lines of `text` a card shows, and how many of its step lines it leaves out:
    the first MAX_STEP_LINES (`_items`), never cut inside a code fence (the card ended on
    the first line of a command, `_fence_whole`), and never ending on a heading with none of
    its lines ("Resolution:" over "... 1 more line", its one step hidden): that heading is
    left out too, unless headings are all that fit, then the first line under them is shown."""
    items = _marked_items(text)
    end = _fence_whole(items, min(MAX_STEP_LINES, len(items)))
    while end and items[end - 1][2]:
        end -= 1
    first = next((i for i, item in enumerate(items) if not item[2]), None)
    if not end:
        end = min(MAX_STEP_LINES, len(items)) if first is None else _fence_whole(items, first + 1)
    return [line for line, _, _ in items[:end]], len(items) - end


def _read(text: str, locator: str | None = None, note: str | None = None) -> RunbookSteps:
    """The steps a card shows of `text`, read at `locator`, with the count it leaves out."""
    lines, more = _cut(text)
    return RunbookSteps(lines=lines, locator=locator, note=note, more=more)


def _label(line: str) -> str | None:
    """The emphasised words of `line` when it is only a label with emphasis ("How to
    **fix** it:", "How it **works**:", "**Mitigation**"), not a sentence or a list item."""
    text = line.strip()
    label = text.removesuffix(":").strip()
    spans = list(_EMPHASIS.finditer(label))
    if len(text) > _MARKER_MAX or not spans or _LIST_ITEM.match(line):
        return None
    short = len(label.split()) <= _MARKER_WORDS and not label.endswith((".", "!", "?", ",", ";"))
    if not (text.endswith(":") or _EMPHASIS.fullmatch(label) or short):
        return None  # a sentence with an emphasised word, not a label
    return " ".join(m.group(2) for m in spans)


def _marker(line: str) -> re.Pattern[str] | None:
    """The steps words (`_STEPS_TITLE`, `_TROUBLESHOOTING_TITLE`) of `line` when it is a
    label (`_label`) whose emphasised words name steps: "How to **fix** it:", "In case of
    **emergency**:", "**Mitigation**", "How to **investigate**". Mimir marks its steps so,
    with no heading."""
    emphasised = _label(line)
    if emphasised is None:
        return None
    # A name in snake case (Ceph's `*recovery_toofull*` flag) is no word of a label.
    words = _SNAKE_NAME.sub(" ", emphasised)
    return next((t for t in (_STEPS_TITLE, _TROUBLESHOOTING_TITLE) if t.search(words)), None)


_SNAKE_NAME = re.compile(r"\w*_\w*")


def _marked(body: str, titles: re.Pattern[str]) -> list[str]:
    """The steps a section's `body` marks with label lines (`_marker`) of `titles`' words:
    each from its label line to the next label of any words ("How the limit is
    **configured**:" is no step), when lines follow it (a label inside a code fence is a
    command's text)."""
    found: list[tuple[re.Pattern[str] | None, list[str]]] = []
    reader = _fences()
    starts = True  # whether the line starts a paragraph: a wrapped line's end is no label
    for line in body.splitlines():
        fenced = reader.fence_line(line) or reader.inside
        if not fenced and starts and _label(line) is not None:
            found.append((_marker(line), [line]))
            continue
        if found:
            found[-1][1].append(line)
        starts = fenced or not line.strip() or bool(_HEADING_LINE.match(line.lstrip()))
    return [
        "\n".join(lines)
        for words, lines in found
        if words is titles and rendered_lines("\n".join(lines[1:]))
    ]


def _says_no_steps(lines: list[str]) -> bool:
    """Whether a section's lines only say that there is no procedure."""
    text = " ".join(line.strip() for line in lines)
    return len(text) <= _NO_STEPS_MAX and any(_NO_STEPS.search(line) for line in lines)


# What a steps section says when it only sends the reader on for help: "If you cannot resolve
# the issue, see the following resources:", a list of links (a help page, a Slack channel),
# and at most the generic "Try to identify the root cause and resolve the issue." (KubeVirt's
# CnaoDown, SSPDown: the card showed that and hid the Diagnosis commands).
# A line whose only action is asking someone for help ("Ask in #queue-help or page the queue
# on-call for help.", "Escalate to the platform team."): each clause a verb of asking and who
# (a channel, a handle, a team, the on-call), nothing more ("Page the on-call and restart the
# consumer", "Ask the admin to scale the pool" are steps).
_ASK_WHO = (
    r"(?:(?:in|on|to|with|via)\s+)?(?:[#@][\w.-]+|(?:the\s+|your\s+|an?\s+)?(?:[\w-]+\s+){0,4}?"
    r"(?:on-?call|team|sre|support|maintainers?|owners?|experts?|admins?|administrators?|"
    r"channel|lead|escalation(?:\s+\w+)?)(?:\s+(?:in|on|via)\s+[#@][\w.-]+)?)"
)
_ASK_CLAUSE = (
    r"(?:please\s+)?(?:ask|contact|page|ping|notify|call|message|escalate|reach\s+out|"
    r"(?:get|seek)\s+help)\s+" + _ASK_WHO + r"(?:\s+for\s+(?:further\s+)?"
    r"(?:help|assistance|support|guidance|investigation))?"
)
_HELP_LINE = re.compile(
    r"^\W*if\b[^.:]{0,60}\b(?:cannot|can't|can ?not|unable to|not able to|fail to)\s+"
    r"(?:resolve|fix|solve)\b"
    r"|^\W*if\b[^.:]{0,40}\b(?:persists?|continues?)\b"
    r"|^\W*(?:if\b[^,.:]{0,80},\s*)?"
    + _ASK_CLAUSE
    + r"(?:\s*,?\s+(?:or|and)\s+"
    + _ASK_CLAUSE
    + r")*(?:\s+if\b[^.:]{0,80})?[\s.!]*$",
    re.IGNORECASE,
)
_ROOT_CAUSE_LINE = re.compile(
    r"^\W*(?:based on [^,]{0,120},\s*)?try to (?:identify|find|determine) the (?:root )?cause"
    r"(?: and (?:resolve|fix|solve) (?:the|this) (?:issue|problem))?\W*$",
    re.IGNORECASE,
)
_LINK_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+\[[^\]]*\]\([^)]*\)\W*$")


def _only_help(lines: list[str]) -> bool:
    """Whether a section's lines only say where to get help if the issue is not resolved
    (`_HELP_LINE`, then links), with no step of their own."""
    return any(_HELP_LINE.match(line) for line in lines) and all(
        _HELP_LINE.match(line) or _ROOT_CAUSE_LINE.match(line) or _LINK_ITEM.match(line)
        for line in lines
    )


def _children(sections: list[Section], start: int) -> list[int]:
    """The indexes of the direct subsections of `sections[start]`."""
    children = []
    i = start + 1
    while i < _scope_end(sections, start):
        children.append(i)
        i = _scope_end(sections, i)
    return children


def _made_of_subsections(
    sections: list[Section], i: int, titles: re.Pattern[str], nested: bool
) -> bool:
    """Whether section `i` has no text of its own, only subsections, read as its text: in
    the first pass when its first subsection is not itself a section of `titles` (which
    that pass reaches next, the same place), in the `nested` pass always."""
    children = _children(sections, i)
    if rendered_lines(sections[i].body) or not children:
        return False
    return nested or not titles.search(sections[children[0]].title)


def _titled_text(sections: list[Section], start: int, end: int) -> str:
    """The text of `sections[start:end]`, in order, each under its heading (read as one, a
    title the card never ends on, `_cut`)."""
    return "\n".join(
        line
        for k in range(start, end)
        # A blank line first: a title is never a wrapped line's end.
        for line in ("", f"{'#' * sections[k].level} {sections[k].title}", sections[k].body)
    )


def _subsections_text(sections: list[Section], i: int) -> str:
    """The text of the subsections of section `i`, in order, each under its title."""
    return _titled_text(sections, i + 1, _scope_end(sections, i))


def _with_subsections(
    sections: list[Section], i: int, locators: dict[str, str], steps: RunbookSteps
) -> RunbookSteps:
    """`steps` read from the subsections of section `i` (`_subsections_text`), with those
    subsections named as its cases when there are two or more, each marked shown when the
    card shows a step line of it (not only its title): the others are said to exist, and
    where."""
    children = _children(sections, i)
    if len(children) < 2:
        return steps
    shown = len(steps.lines)  # one card line an item, from the first (`_cut`)
    cases, first = [], 0
    for child in children:
        items = _marked_items(_titled_text(sections, child, _scope_end(sections, child)))
        # Shown when a step line of it is on the card, not only its title.
        steps_at = [first + k for k, (_, _, heading) in enumerate(items) if not heading]
        cases.append(
            SectionCase(
                title=sections[child].title.strip(),
                locator=locators.get(sections[child].anchor),
                shown=any(at < shown for at in steps_at),
            )
        )
        first += len(items)
    title = sections[i].title.strip()
    note = (
        f"the section {title} has no text of its own, only {len(children)} subsections (under "
        "Cases): shown is their text in order, from the first; read the one that applies at "
        "its locator"
    )
    return steps.model_copy(
        update={"note": "; ".join(filter(None, (note, steps.note))), "cases": cases}
    )


def _scope_end(sections: list[Section], start: int) -> int:
    """The index after `sections[start]` and its subsections."""
    level = sections[start].level
    end = start + 1
    while end < len(sections) and sections[end].level > level:
        end += 1
    return end


def _named(sections: list[Section], names: tuple[str, ...]) -> int | None:
    for name in names:
        anchor, folded = same_anchor(anchor_for(name)), heading_text(name).casefold()
        for i, section in enumerate(sections):
            if (
                same_anchor(section.anchor) == anchor
                or heading_text(section.title).casefold() == folded
            ):
                return i
    return None


def _title_query_stems(text: str) -> frozenset[str]:
    """The stems of free `text` read against headings: a short plural is its singular too
    ("12 pgs degraded", as `ceph health` writes it, is about `PG_DEGRADED`)."""
    wanted = query_stems(text)
    return wanted | {w[:-1] for w in wanted if len(w) == 3 and w.endswith("s") and w.isalpha()}


def _by_title_words(sections: list[Section], alerts: list[int], text: str) -> int | None:
    """The one section of `alerts` whose title has most of the query's words, of those the
    one with fewest other words ("osd down": `OSD_DOWN`, not `OSD_<crush type>_DOWN`); none
    on a tie of both (`_best_titles`)."""
    best = _best_titles(sections, alerts, text)
    return best[0] if len(best) == 1 else None


def _best_titles(sections: list[Section], alerts: list[int], text: str) -> list[int]:
    """The sections of `alerts` whose titles fit free `text` best (`_by_title_words`), at
    least _MIN_TITLE_WORDS of its words: one, or those that tie (a pasted `ceph health`
    line of "1 osds down" and "12 pgs degraded" fits OSD_DOWN and PG_DEGRADED alike)."""
    wanted = _title_query_stems(text)
    scored = []
    for i in alerts:
        title = text_stems(sections[i].title)
        scored.append((len(wanted & title), -len(title - wanted), i))
    scored.sort(key=lambda s: (-s[0], -s[1], s[2]))
    if not scored or scored[0][0] < _MIN_TITLE_WORDS:
        return []
    return [i for matched, other, i in scored if (matched, other) == scored[0][:2]]


def _headed_by_words(sections: list[Section], text: str) -> int | None:
    """The one section (not the page's own, whole-document one) whose heading has most of
    free `text`'s words, at least _MIN_TITLE_WORDS of them (none on a tie)."""
    whole = 0 if _scope_end(sections, 0) == len(sections) else None
    return _by_title_words(sections, [i for i in range(len(sections)) if i != whole], text)


def _headed_by_name(sections: list[Section], names: tuple[str, ...]) -> int | None:
    """The one section (not the page's whole-document one) whose heading has most of the
    words of an alert name in `names` (`WhitehallUnenqueuedScheduledPublications`), at
    least NAME_HEADING_SHARE of them and _MIN_TITLE_WORDS; None on a tie, on none, and on a
    page whose text names the alert (its listing rows answer, `_listed_rows`)."""
    whole = 0 if sections and _scope_end(sections, 0) == len(sections) else None
    candidates = [i for i in range(len(sections)) if i != whole]
    for name in names:
        if not is_alert_name(name):
            continue  # a runbook_url's fragment: matched by anchor, never by words
        if any(name.casefold() in s.body.casefold() for s in sections):
            continue  # the page names the alert (a table of them): its own rows say where
        wanted = query_stems(" ".join(identifier_words(name)))
        best = _best_titles(sections, candidates, " ".join(identifier_words(name)))
        if len(best) != 1:
            continue
        shared = len(wanted & text_stems(sections[best[0]].title))
        if shared >= NAME_HEADING_SHARE * len(wanted):
            return best[0]
    return None


def closest_sections(sections: list[Section], candidates: list[int], text: str) -> list[str]:
    """The headings of the sections of `candidates` (an alert's or an error id's) nearest
    free `text`, best first (at most CLOSEST_SECTIONS, none that shares no word with it):
    the query's words in the heading count CLOSEST_TITLE_WEIGHT times, in the section's text
    (its subsections' too) once."""
    wanted = _title_query_stems(text)
    scored = []
    for i in candidates:
        title = text_stems(sections[i].title)
        body = text_stems(" ".join(sections[k].body for k in range(i, _scope_end(sections, i))))
        score = CLOSEST_TITLE_WEIGHT * len(wanted & title) + len(wanted & body)
        if score:
            scored.append((-score, i))
    return [sections[i].title.strip() for _, i in sorted(scored)[:CLOSEST_SECTIONS]]


def _spelled(sections: list[Section], alerts: list[int], text: str) -> int | None:
    """The one alert section whose name `text` spells out in words (`spelled_out`)."""
    spelled = spelled_out(text, [sections[i].title.strip() for i in alerts])
    return alerts[spelled[0]] if len(spelled) == 1 else None


def headed_by(titles: object, names: Iterable[str], question: str | None = None) -> bool:
    """Whether a runbook's `section_titles` has a section headed by one of the alert `names`,
    or (given the `question`) by an alert name the question spells out in words."""
    if not isinstance(titles, list):
        return False
    # A title is kept as written: ``## `KubeX` `` is "`KubeX`", the section of KubeX.
    read = [heading_text(str(t)) for t in titles]
    alerts = [title for title in read if is_alert_name(title)]
    wanted = {name.strip().casefold() for name in names}
    # A name as the pager writes it (`Backdoor:EC2/Spambot`) heads its section exactly.
    if any(title.casefold() in wanted for title in read):
        return True
    return question is not None and bool(spelled_out(question, alerts))


def _first_steps(
    sections: list[Section],
    indices: range,
    locators: dict[str, str],
    heads: bool = False,
    own: int | None = None,
) -> RunbookSteps | None:
    """The first steps-like section among `indices` with text of its own, or made only of
    subsections, read as they are in order and named as its cases (`_with_subsections`:
    "## Mitigation" holding only "### Disk full" and "### Quota"); else the text after a
    label line that marks steps ("How to **fix** it:", `_marker`); else the same for
    troubleshooting. A steps section that only says there is no procedure, or only where to
    get help (`_only_help`), gives way to a troubleshooting one (it is shown when there is
    none; the help, said in the note). With `heads`, steps a label marks in a subsection of
    section `own` (by default `indices[0]`) are shown under its title ("Write latency:"):
    they hold for that case only."""
    own = indices[0] if own is None else own
    said_none: RunbookSteps | None = None
    help_only: str | None = None  # the steps section that only says where to get help
    for titles, how in (
        (_STEPS_TITLE, "own"),
        (_STEPS_TITLE, "nested"),
        (_STEPS_TITLE, "marked"),
        (_TROUBLESHOOTING_TITLE, "own"),
        (_TROUBLESHOOTING_TITLE, "nested"),
        (_TROUBLESHOOTING_TITLE, "marked"),
    ):
        for i in indices:
            section = sections[i]
            bodies: list[str] = []
            made_of = False
            if how == "marked":
                head = f"{section.title}:\n" if heads and i != own else ""
                bodies = [head + text for text in _marked(section.body, titles)]
            elif titles.search(section.title):
                # A section made only of subsections is read as they are, in order, from the
                # first, in the first pass already: never a later one a title word picks
                # ("Node-Level Issues Resolution": a `kubectl drain`, where the file first
                # restarts the pod).
                made_of = _made_of_subsections(sections, i, titles, nested=how == "nested")
                bodies = [_subsections_text(sections, i) if made_of else section.body]
            for body in bodies:
                lines = rendered_lines(body)
                if not lines:
                    continue
                steps = _read(body, locators.get(section.anchor))
                if made_of:
                    steps = _with_subsections(sections, i, locators, steps)
                if _only_help(lines):
                    help_only = help_only or section.title.strip()
                elif not _says_no_steps(lines):
                    if help_only is None:
                        return steps
                    note = (
                        f"the section {help_only} only says where to get help if the issue "
                        f"is not resolved: the steps shown are those of {section.title.strip()}"
                    )
                    return steps.model_copy(
                        update={"note": "; ".join(filter(None, (note, steps.note)))}
                    )
                said_none = said_none or steps
    return said_none


# A line that is only a link in a list (`* [thanos-compact](#thanos-compact)`) or a table row.
_CONTENTS_LINE = re.compile(r"^\s*(?:[-*+]\s+\[[^\]]*\]\([^)]*\)\W*|\|.*)$")
NO_STEPS_NOTE = "the runbook has no steps: what is shown is a list of links or a table"


# A link in a list to a heading of the same file: `* [thanos-compact](#thanos-compact)`.
_SECTION_LINK = re.compile(r"^\s*[-*+]\s+\[[^\]]*\]\((#[^)\s]+)\)\W*$")


def _listed_rows(
    sections: list[Section], locators: dict[str, str], focus: SectionFocus
) -> RunbookSteps | None:
    """Of a runbook with no steps (a table of contents, then a table of alerts per section:
    Thanos' mixin `runbook.md`), the lines of the one section that list the alert asked
    about, or None (no alert asked about, or listed in no section or in several)."""
    names = [n for n in focus.names if is_alert_name(n)]
    if not names:
        return None
    word = re.compile(r"\b(?:" + "|".join(map(re.escape, names)) + r")\b")
    hits = [
        (section, [line for line in section.body.splitlines() if word.search(line)])
        for section in sections
    ]
    hits = [(section, lines) for section, lines in hits if lines]
    if len(hits) != 1:
        return None
    section, lines = hits[0]
    # A table's rows read with its header (`|Name|Summary|Description|...`).
    header = next((line for line in section.body.splitlines() if line.startswith("|")), None)
    if header is not None and lines[0].startswith("|") and header not in lines:
        lines = [header, *lines]
    note = (
        f"the runbook has no steps: what is shown is where section '{section.title}' of it "
        f"lists {names[0]}"
    )
    return RunbookSteps(
        lines=lines[:MAX_STEP_LINES],
        locator=locators.get(section.anchor),
        note=note,
        more=max(0, len(lines) - MAX_STEP_LINES),
    )


def _no_procedure(steps: RunbookSteps) -> RunbookSteps:
    """`steps` read from a text with no steps section, saying so when its lines are only
    links or table rows (Thanos' mixin `runbook.md`, a table of contents and a table of
    alerts, was shown as the steps, with no note); links to the file's own headings are
    said to be its sections, not other runbooks."""
    if steps.note is None and steps.lines and all(map(_CONTENTS_LINE.match, steps.lines)):
        anchors = [m.group(1) for m in map(_SECTION_LINK.match, steps.lines) if m]
        if anchors and len(anchors) == sum(1 for line in steps.lines if "](" in line):
            shown = ", ".join(anchors[:3]) + (", ..." if len(anchors) > 3 else "")
            note = (
                "the runbook has no steps: what is shown is its table of contents, links to "
                f"sections of this same runbook ({shown}), not to other runbooks"
            )
            return steps.model_copy(update={"note": note})
        return steps.model_copy(update={"note": NO_STEPS_NOTE})
    return steps


# A list item that is only a link to another page (`* [Interacting with Consul](../consul/..)`).
_POINTER_LINE = re.compile(r"^\s*[-*+]\s+\[[^\]]*\]\((?!#)[^)]*\)\W*$")


def _pointers_said(steps: RunbookSteps) -> RunbookSteps:
    """`steps` that are only links to other pages (GitLab's "Troubleshooting Pointers"),
    said to be pointers: the card showed them as the procedure, with no note."""
    if steps.note is not None or not steps.lines:
        return steps
    if not all(map(_POINTER_LINE.match, steps.lines)):
        return steps
    note = (
        "the steps shown are a list of links to other pages (pointers), not steps: "
        "follow the one that applies"
    )
    return steps.model_copy(update={"note": note})


OPENING_SECTION_NOTE = (
    "the runbook has no section of steps: shown is its opening text, up to its next section"
)


def _opening_section_index(sections: list[Section]) -> int | None:
    """The first section with text of its own, when another follows it: where the opening
    text of a page with no steps section ends (None when it is the page's last)."""
    first = next((i for i, s in enumerate(sections) if rendered_lines(s.body)), None)
    return first if first is not None and first + 1 < len(sections) else None


def _opening_section(ev: Evidence, sections: list[Section], steps: RunbookSteps) -> RunbookSteps:
    """`steps` read from the whole text of a page with no steps section, cut at the end of
    its first section with text (Patroni's `## About`): before, they ran on into the next
    section (`## Scaling the cluster up`'s "Increase the node count"), unmarked."""
    first = _opening_section_index(sections)
    if steps.note is not None or first is None:
        return steps
    lines = (ev.content or "").splitlines()[: sections[first + 1].line]
    after = sections[first + 1 :]
    # The sections beside it, else (an opening under the page's `#` title, every other
    # heading `##`) the outermost of those under it: before, the list was empty, "()".
    level = sections[first].level
    if not any(s.level <= level for s in after):
        level = min(s.level for s in after)
    later = [t for s in after if s.level <= level and (t := s.title.strip())]
    named = ", ".join(later[:3]) + (", ..." if len(later) > 3 else "")
    note = OPENING_SECTION_NOTE
    if later:
        note += f"; the sections after it ({named}) are not shown"
    return _read("\n".join(line for line in lines if not _HEADING_LINE.match(line)), note=note)


def _plain_steps(ev: Evidence) -> RunbookSteps:
    """A document without recorded structure: the rule before sections were read."""
    content = ev.content or ""
    lines = content.splitlines()
    titles = ev.props.get("section_titles")
    locators = ev.props.get("section_locators")
    if isinstance(titles, list) and isinstance(locators, list):
        for title, loc in zip(titles, locators, strict=False):
            if not _STEPS_TITLE.search(str(title)):
                continue
            heading = re.compile(r"^#{1,6}\s+" + re.escape(str(title)) + r"\s*#*\s*$")
            start = next((i for i, line in enumerate(lines) if heading.match(line)), None)
            if start is None:
                continue
            body = []
            for line in lines[start + 1 :]:
                if _HEADING_LINE.match(line):
                    break
                body.append(line)
            if any(line.strip() for line in body):
                return _read("\n".join(body), str(loc))
    text = [line for line in lines if not _HEADING_LINE.match(line)]
    return _read("\n".join(text))


def _structure(ev: Evidence) -> tuple[list[Section], dict[str, str]] | None:
    """The sections of an imported Markdown runbook and their locators by anchor."""
    titles = ev.props.get("section_titles")
    recorded = ev.props.get("section_locators")
    sections = sections_of(ev.content or "")
    if not (isinstance(titles, list) and isinstance(recorded, list)) or not sections:
        return None
    # The importer's locators (`path#anchor`, `path@commit#anchor`), by anchor.
    locators = {str(loc).rpartition("#")[2]: str(loc) for loc in recorded if "#" in str(loc)}
    for section in sections:
        # Imported before anchors kept `_` (`OSD_DOWN` was `#osddown`): its recorded locator.
        legacy = section.anchor.replace("_", "")
        if section.anchor not in locators and legacy in locators:
            locators[section.anchor] = locators[legacy]
    return sections, locators


# An error id as logs and pages write it: words joined by `-`, three or more
# (`err-mimir-sample-out-of-order`), a code like `PAY-4097`, or a health code in capitals
# joined by `_`, two parts or more (Ceph's `OSD_DOWN`, `MON_DISK_LOW`); not the head or tail
# of a longer name. A shouted word (`DOWN`) has one part; an env var (`NEO4J_URI`) is taken
# too: it costs a heading search and names a section only where one is headed by it.
_CODE_WORD = re.compile(
    r"(?<![\w.-])(?:[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+){2,}|[A-Z][A-Z0-9]{1,9}-\d{2,6}"
    r"|[A-Z][A-Z0-9]*(?:_[A-Z][A-Z0-9]*)+)"
    r"(?![\w-]|\.\w)"
)
_CODE_WORDS = 3  # the error ids read from one text


def code_words(text: str) -> list[str]:
    """The error-id-shaped words of `text`, in order, each once (at most _CODE_WORDS): what
    may head a section of its own (Mimir's `### err-mimir-sample-out-of-order`). Finding
    types (`Recon:IAMUser/MaliciousIPCaller`) come first: a pasted finding's `us-east-1`
    and the like do not crowd them out of the three."""
    return list(dict.fromkeys([*finding_types(text), *_CODE_WORD.findall(text)]))[:_CODE_WORDS]


# Runbooks read per heading searched for: a heading names a page or two, not the catalogue.
HEADED_CANDIDATES = 10


def heading_searches(headings: Iterable[str]) -> list[PlanStep]:
    """One fulltext search of the tenant's runbooks per heading (an alert name, an error
    id): a runbook with a section so headed is among its first hits."""
    return [
        PlanStep(
            template_id="fulltext_search",
            params={"query": heading},
            options={"label": "Runbook"},
            evidence_type="runbook",
            limit=HEADED_CANDIDATES,
        )
        for heading in headings
    ]


def has_heading(ev: Evidence, heading: str) -> bool:
    """Whether runbook `ev` has a section headed exactly `heading`, in any case."""
    titles = ev.props.get("section_titles")
    wanted = heading_text(heading).casefold()
    if not isinstance(titles, list):
        return False
    return any(heading_text(str(t)).casefold() == wanted for t in titles)


def code_headed(run: LookupSteps, text: str) -> tuple[str, list[str]] | None:
    """The first error id `text` types (`code_words`) that heads a section of a runbook
    the subject may read, and those runbooks' ids; one recorded stage (a fulltext search
    per id). None when the text types no error id (no read)."""
    codes = code_words(text)
    if not codes:
        return None  # no read, no round
    for code, hits in zip(codes, run.stage(heading_searches(codes)), strict=True):
        headed = sorted({ev.element_id for ev in hits if has_heading(ev, code)})
        if headed:
            return code, headed
    return None


def _code_sections(sections: list[Section]) -> list[int]:
    """The indexes of the sections whose heading is an error id (`code_words`), whole."""
    return [
        i for i, s in enumerate(sections) if (title := heading_text(s.title)) and _is_code(title)
    ]


def _is_code(title: str) -> bool:
    """Whether a heading is an error id, whole (a finding type heads a page, not a code's
    section of a page of codes)."""
    return _CODE_WORD.findall(title) == [title]


# A code with a digit or a capital (`BILL-2002`, `OSD_DOWN`): no tool or setting is so named.
_STRONG_CODE = re.compile(r"[A-Z0-9]")


def _key_code_sections(sections: list[Section]) -> list[int]:
    """The sections headed by an error id that make a page one of a section per code: an id
    with a digit or a capital, or lowercase words joined by `-` that share their first word
    with another such heading (Mimir's `err-mimir-...`). A lone hyphenated heading is a tool
    or a setting (`redis-memory-analyzer`, `client-output-buffer-limit`), not a code."""
    coded = _code_sections(sections)
    firsts = [heading_text(sections[i].title).split("-")[0].casefold() for i in coded]
    return [
        i
        for i, first in zip(coded, firsts, strict=True)
        if _STRONG_CODE.search(heading_text(sections[i].title)) or firsts.count(first) >= 2
    ]


def _keyed_sections(sections: list[Section]) -> list[int]:
    """The indexes of the sections headed by an alert's name or an error id (Ceph's page of
    health codes, `### OSD_DOWN`): one section per key, whose steps are that key's only."""
    return sorted({*_alert_sections(sections), *_key_code_sections(sections)})


def _alert_sections(sections: list[Section]) -> list[int]:
    """The indexes of the sections whose heading is an alert's name (in backticks or not:
    ``## `KubeContainersWaitingInError` ``)."""
    return [i for i, s in enumerate(sections) if is_alert_name(heading_text(s.title))]


def _chosen(sections: list[Section], alerts: list[int], focus: SectionFocus) -> int | None:
    """The section `focus` is about: named by it, else (free text) by its title's words."""
    chosen = _named(sections, focus.names)
    if chosen is None and focus.text and len(alerts) >= 2:
        chosen = _by_title_words(sections, alerts, focus.text)
    return chosen


def alert_sectioned(ev: Evidence) -> bool:
    """Whether runbook `ev` holds sections for two or more alerts (Tempo's `runbook.md`)."""
    structure = _structure(ev)
    return structure is not None and len(_alert_sections(structure[0])) >= 2


def chosen_heading(ev: Evidence, focus: SectionFocus) -> str | None:
    """The heading of the alert section of runbook `ev` that the card shows for `focus`
    (named by it, else the one whose title has most of its free text's words), when `ev`
    holds sections for two or more alerts; None otherwise."""
    structure = _structure(ev)
    if structure is None:
        return None
    sections = structure[0]
    alerts = _keyed_sections(sections)
    if len(alerts) < 2:
        return None
    chosen = _chosen(sections, alerts, focus)
    return None if chosen is None else heading_text(sections[chosen].title)


def alert_section(ev: Evidence, focus: SectionFocus) -> str | None:
    """The locator of the section `focus` is about, in a runbook with sections for several
    alerts, or of the section an error id `focus` names heads (None in any other document:
    its own locator says where to read)."""
    if not focus.names:
        return None  # nothing named: no need to read the text's sections
    structure = _structure(ev)
    if structure is None:
        return None
    sections, locators = structure
    alerts = _keyed_sections(sections)
    if len(alerts) < 2:
        chosen = _code_named(sections, focus.names)
        return None if chosen is None else locators.get(sections[chosen].anchor)
    chosen = _chosen(sections, alerts, focus)
    return None if chosen is None else locators.get(sections[chosen].anchor)


def _code_named(sections: list[Section], names: tuple[str, ...]) -> int | None:
    """The one section headed by an error id that `names` name (`## BILL-2002` of a page of
    error codes): asked about by that id however few alerts' sections the page has."""
    codes = set(_code_sections(sections))
    named = {i for name in names if (i := _named(sections, (name,))) in codes}
    return named.pop() if len(named) == 1 else None


# A section that only refers to another of the same file ("Same as [`MimirX`](#MimirX).",
# "See MimirX.", "This alert is like [`MimirX`](#MimirX) but it fires when queries are
# failing."): at most this many lines, starting with these words.
_SAME_AS = re.compile(
    r"^\W*(?:same as|see|(?:this (?:alert|one) is (?:just )?)?(?:like|similar to))\b",
    re.IGNORECASE,
)
_LIKE = re.compile(r"^\W*(?:this (?:alert|one) is (?:just )?)?(?:like|similar to)\b", re.IGNORECASE)
_QUOTED_MAX = 200  # characters of a "like X but ..." sentence quoted in the note
_SAME_AS_LINES = 2
# A link to a heading of the same file, anywhere in a line: its anchor without the `#`.
_SAME_FILE_ANCHOR = re.compile(r"\]\(#([^)\s]+)\)")


def _same_as(sections: list[Section], chosen: int) -> int | None:
    """The section of the same file that section `chosen` only refers to, when its text is
    nothing but that ("Same as MimirX"), else None."""
    lines = rendered_lines(sections[chosen].body)
    if not lines or len(lines) > _SAME_AS_LINES or not _SAME_AS.match(lines[0]):
        return None
    if _scope_end(sections, chosen) != chosen + 1:
        return None  # it has subsections of its own: more than a reference
    text = " ".join(lines)
    target = _named(sections, (*_SAME_FILE_ANCHOR.findall(text), *alert_names(text)))
    return None if target is None or target == chosen else target


def _empty_section(
    sections: list[Section], locators: dict[str, str], chosen: int, said: str | None
) -> RunbookSteps | None:
    """The card of section `chosen` when it has no text at all (None otherwise): said so;
    when its heading sits right above another of its level (`## A` then `## B`, nothing
    between), the text under both headings is for both, and the steps shown are that one's."""
    end = _scope_end(sections, chosen)
    if any(rendered_lines(sections[i].body) for i in range(chosen, end)):
        return None
    title = sections[chosen].title.strip()
    locator = locators.get(sections[chosen].anchor)
    below = sections[end] if end < len(sections) else None
    # Stacked: its own heading alone (a comment between the two is no shared text).
    level = sections[chosen].level
    if below is None or below.level != level or end != chosen + 1 or sections[chosen].body.strip():
        note = f"the section {title} is empty: the runbook gives no steps for it"
        return _read("", locator, note)
    steps = _section_steps(sections, locators, end, said)
    note = (
        f"the section {title} is empty: its heading sits right above {below.title.strip()}'s, "
        "with nothing between, so the text below both headings is for both: the steps shown "
        f"are those of {below.title.strip()}"
    )
    return steps.model_copy(update={"note": "; ".join(n for n in (note, steps.note) if n)})


def _section_steps(
    sections: list[Section], locators: dict[str, str], chosen: int, said: str | None = None
) -> RunbookSteps:
    """The steps of section `chosen` (its subsections' too); of a section that splits into
    cases (`_split`), those of the case the words `said` name, else its own text and the
    cases named, for the on-call to choose."""
    scope = range(chosen, _scope_end(sections, chosen))
    found = _first_steps(sections, scope, locators, heads=True)
    if found is not None:
        cases = _split(sections, locators, chosen, found)
        if cases is not None:
            return _case_steps(sections, locators, chosen, cases, said)
        skipped = _diagnosis_skipped(sections, locators, scope, found)
        return found if skipped is None else found.model_copy(update={"note": skipped})
    # A subsection's lines under its title ("Write latency:"): they hold for that case.
    text = "\n".join(
        line
        for i in scope
        for line in (*(("", f"{sections[i].title}:") if i != chosen else ()), sections[i].body)
    )
    return _no_procedure(_read(text, locators.get(sections[chosen].anchor)))


def _diagnosis_skipped(
    sections: list[Section], locators: dict[str, str], scope: range, found: RunbookSteps
) -> str | None:
    """What the card says when the steps `found` are a fix subsection ("### How to fix")
    that a diagnosis subsection ("### How to investigate") of the same section comes before:
    the fix depends on it ("a stuck pod: restart it"), and the card shows only the fix."""
    at = next((i for i in scope if locators.get(sections[i].anchor) == found.locator), None)
    if at is None or found.note or not _STEPS_TITLE.search(sections[at].title):
        return None
    before = [
        i
        for i in scope
        if i < at
        and _TROUBLESHOOTING_TITLE.search(sections[i].title)
        and rendered_lines(sections[i].body)
    ]
    if not before:
        return None
    diagnosis = sections[before[0]]
    where = locators.get(diagnosis.anchor) or diagnosis.anchor
    return (
        f"the steps shown are the section's {sections[at].title.strip()}; its "
        f"{diagnosis.title.strip()}, which comes first and says which of them applies, is "
        f"not shown: read it first at {where}"
    )


def _split(
    sections: list[Section], locators: dict[str, str], chosen: int, found: RunbookSteps
) -> list[int] | None:
    """The cases section `chosen` splits into: its direct subsections that are not steps or
    troubleshooting headings themselves ("Write Latency", "Read Latency", "Alertmanager" of
    Mimir's MimirRequestLatency) and hold steps, when there are two or more and the steps
    `found` for the section are in one of them (not in its own text, nor under a "How to
    fix" of its own). None when it does not split."""
    cases = [
        i
        for i in _children(sections, chosen)
        if not _STEPS_TITLE.search(sections[i].title)
        and not _TROUBLESHOOTING_TITLE.search(sections[i].title)
        and _first_steps(sections, range(i, _scope_end(sections, i)), locators) is not None
    ]
    if len(cases) < 2:
        return None
    read_in = {
        locators.get(sections[k].anchor) for i in cases for k in range(i, _scope_end(sections, i))
    }
    return cases if found.locator in read_in else None


# A word of the user's as written: what separates words in a page's line or a log line
# (`mimir-prod/query-frontend`, `job="query-frontend"`); `-`, `_` and `.` stay inside one.
_SAID_WORD = re.compile(r"[A-Za-z0-9](?:[\w.-]*[A-Za-z0-9])?")
_SAID_MIN = 4  # characters: shorter words ("is", "p99") tell no case from another


def _case_named(
    sections: list[Section], cases: list[int], said: str | None
) -> tuple[int, list[str]] | None:
    """The one case the user's words name, with the words that name it: a word that the
    title of only one case has ("read": "Read Latency"), or the text of only one case has as
    a whole word (`query-frontend`, `queries`); None when no word names one, or words name
    two (a word in the text of several cases tells none apart)."""
    if not said:
        return None
    titles = [text_stems(sections[i].title) for i in cases]
    texts = [
        {
            word.casefold()
            for k in range(i, _scope_end(sections, i))
            for word in _SAID_WORD.findall(f"{sections[k].title}\n{sections[k].body}")
        }
        for i in cases
    ]
    named: dict[int, list[str]] = {}
    for stem in sorted(query_stems(said)):
        having = [n for n, title in enumerate(titles) if stem in title]
        if len(having) == 1:
            named.setdefault(having[0], []).append(stem)
    for word in dict.fromkeys(w.casefold() for w in _SAID_WORD.findall(said)):
        if len(word) < _SAID_MIN or not search_terms(word):
            continue
        having = [n for n, text in enumerate(texts) if word in text]
        if len(having) == 1:
            named.setdefault(having[0], []).append(word)
    if len(named) != 1:
        return None
    n, words = next(iter(named.items()))
    return cases[n], list(dict.fromkeys(words))


def _case_steps(
    sections: list[Section],
    locators: dict[str, str],
    chosen: int,
    cases: list[int],
    said: str | None,
) -> RunbookSteps:
    """The steps of section `chosen`, which splits into `cases`: of the case the words
    `said` name, under its title; else the section's own text (it says how to choose:
    "Establish if the alert is about the read or write path"), with the cases named."""
    title = sections[chosen].title.strip()
    named = _case_named(sections, cases, said)
    listed = [
        SectionCase(
            title=sections[i].title.strip(),
            locator=locators.get(sections[i].anchor),
            shown=named is not None and named[0] == i,
        )
        for i in cases
    ]
    if named is not None:
        case, words = named
        scope = range(case, _scope_end(sections, case))
        steps = _first_steps(sections, scope, locators, heads=True, own=chosen)
        assert steps is not None  # a case holds steps (`_split`)
        quoted = ", ".join(repr(w) for w in words[:3])
        note = (
            f"the section {title} has a subsection per case (under Cases): the words {quoted} "
            f"name {sections[case].title.strip()}, whose steps are shown"
        )
        joined = "; ".join(n for n in (note, steps.note) if n)
        return steps.model_copy(update={"note": joined, "cases": listed})
    note = (
        f"the section {title} has a subsection per case (under Cases) and the words given "
        "name none: shown is its own text, which says how to choose; read the case that "
        f'applies at its locator, or ask with its words: investigator runbook "{title} <case>"'
    )
    own = _read(sections[chosen].body, locators.get(sections[chosen].anchor), note)
    return own.model_copy(update={"cases": listed})


# A reference link in a step: `[text][label]`, `[label][]` or `[label]` alone.
_LINK_USE = re.compile(r"\[([^\]]+)\]\[([^\]]*)\]|\[([^\]]+)\](?![(:\[])")
MAX_LINKS = MAX_STEP_LINES


def _used_links(content: str, lines: list[str]) -> list[str]:
    """The definition lines (`_LINK_DEFINITION`, anywhere in `content` outside a fence) of
    the reference links `lines` use, in the order they are used, at most MAX_LINKS."""
    defined: dict[str, str] = {}
    reader = _fences()
    for line in content.splitlines():
        if reader.fence_line(line) or reader.inside:
            continue
        if match := _LINK_DEFINITION.match(line):
            defined.setdefault(match.group(1).strip().casefold(), line.strip())
    used = [
        (m.group(2) or m.group(1) or m.group(3) or "").strip().casefold()
        for line in lines
        for m in _LINK_USE.finditer(line)
    ]
    return [defined[label] for label in dict.fromkeys(used) if label in defined][:MAX_LINKS]


def runbook_steps(ev: Evidence, focus: SectionFocus | None = None) -> RunbookSteps:
    """The steps to show of runbook `ev` for what the lookup asked about (`focus`), with the
    definitions of the reference links they use (`RunbookSteps.links`)."""
    steps = _pointers_said(_steps_of(ev, focus))
    links = _used_links(ev.content or "", steps.lines)
    return steps.model_copy(update={"links": links}) if links else steps


def _steps_of(ev: Evidence, focus: SectionFocus | None) -> RunbookSteps:
    """The steps to show of runbook `ev` for what the lookup asked about (`focus`)."""
    structure = _structure(ev)
    if structure is None:
        return _plain_steps(ev)
    sections, locators = structure
    # A page of a section per alert or per code: no section lends its steps to another.
    alerts = _keyed_sections(sections)
    focus = focus or SectionFocus()
    chosen = _chosen(sections, alerts, focus)
    if chosen == 0 and _scope_end(sections, 0) == len(sections):
        chosen = None  # the whole document (a file named after its one alert): read as one
    if chosen is not None:
        empty = _empty_section(sections, locators, chosen, focus.said)
        if empty is not None:
            return empty
        same = _same_as(sections, chosen)
        if same is None:
            steps = _section_steps(sections, locators, chosen, focus.said)
            return _with_twins(sections, locators, alerts, chosen, steps)
        # "Same as MimirX": that section's steps, said where they come from.
        steps = _section_steps(sections, locators, same, focus.said)
        target = sections[same].title.strip()
        own = " ".join(rendered_lines(sections[chosen].body))
        if _LIKE.match(own):
            # "Like X but it fires when ...": X's steps, and the difference in its words.
            quoted = own if len(own) <= _QUOTED_MAX else own[: _QUOTED_MAX - 3] + "..."
            how = f"says it is like {target} ({quoted!r})"
        else:
            how = f"only refers to {target} ('Same as')"
        note = (
            f"the section {sections[chosen].title.strip()} {how}: the steps shown are "
            f"those of {target}"
        )
        return steps.model_copy(update={"note": "; ".join(n for n in (note, steps.note) if n)})
    headed = _headed_by_words(sections, focus.text) if focus.text and len(alerts) < 2 else None
    if headed is None and len(alerts) < 2:
        # A page of procedures one per alert, none headed by its name (GOV.UK's "Overdue
        # publications in Whitehall" / "Scheduled publications in Whitehall not queued"):
        # the one whose heading has most of the alert name's words, not the first.
        headed = _headed_by_name(sections, focus.names)
    if headed is not None:
        # A long page of many procedures: the one whose heading has the words asked about
        # ("replication lag": "Replication is lagging or has stopped"), not the first.
        return _section_steps(sections, locators, headed, focus.said)
    if len(alerts) < 2:
        found = _first_steps(sections, range(len(sections)), locators)
        plain = found or _opening_section(ev, sections, _no_procedure(_plain_steps(ev)))
        if found is None and plain.note is not None:
            # A table of contents: the rows of this file's sections that name the alert.
            return _listed_rows(sections, locators, focus) or plain
        return plain
    # Sections for several alerts, none asked about: their steps are not this lookup's.
    opening = (ev.content or "").splitlines()[: _opening_end(sections, alerts)]
    asked = ", ".join(focus.names) if focus.names else None
    about = f"none is about {asked}" if asked else "the lookup named none of them"
    coded = len(set(_code_sections(sections)) & set(alerts))
    key = {0: "an alert's name", len(alerts): "an error code"}.get(
        coded, "an alert's name or an error code"
    )
    note = (
        # Sections, not alerts: a page may have sections of alerts its rules do not define.
        f"the runbook has {len(alerts)} sections headed by {key} and {about}: "
        "the steps shown are its opening text"
    )
    if focus.names and (close := close_headings(list(focus.names), [s.title for s in sections])):
        # A section renamed by a letter (`MimirIngestersUnhealthy`): the one probably meant.
        names = " or ".join(close)
        note += (
            f"; did you mean {names}? (a heading spelled like it: the section may have been "
            f"renamed; --alert {close[0]} shows it)"
        )
    # Sections headed by an error id (`err-mimir-sample-out-of-order`) are as near as alerts'.
    near = sorted({*alerts, *_code_sections(sections)})
    tied = [sections[i].title.strip() for i in _best_titles(sections, alerts, focus.text or "")]
    if focus.text and (closest := closest_sections(sections, near, focus.text)):
        # The sections the words fit alike lead: the lookup could not choose among them.
        closest = list(dict.fromkeys([*tied, *closest]))[: max(CLOSEST_SECTIONS, len(tied))]
        # The opening text answers nothing: the sections nearest the words, to ask next.
        codes = sum(1 for title in closest if _is_code(title))
        how = {0: "--alert NAME", len(closest): "--error-code CODE"}.get(
            codes, "--alert NAME or --error-code CODE"
        )
        note += f"; closest sections: {', '.join(closest)} ({how} shows one)"
    return _read("\n".join(line for line in opening if not _HEADING_LINE.match(line)), note=note)


def _opening_end(sections: list[Section], alerts: list[int]) -> int:
    """The line where the opening text of a page of alert sections ends: its first heading
    of the alert sections' level (or above, the page's title aside). A section before the
    first alert's ("## Trace Lookup Failures") is another procedure, never the opening."""
    level = sections[alerts[0]].level
    return next(
        s.line
        for i, s in enumerate(sections)
        if i == alerts[0] or (s.level <= level and not (i == 0 and s.level < level))
    )


def _with_twins(
    sections: list[Section],
    locators: dict[str, str],
    alerts: list[int],
    chosen: int,
    steps: RunbookSteps,
) -> RunbookSteps:
    """`steps` of section `chosen`, saying where the page's other sections of the same
    heading are (Ceph's page heads two sections `POOL_FULL`): the card showed one, silently."""
    title = heading_text(sections[chosen].title).casefold()
    twins = [
        locators.get(sections[i].anchor) or sections[i].anchor
        for i in alerts
        if i != chosen and heading_text(sections[i].title).casefold() == title
    ]
    if not twins:
        return steps
    note = (
        f"the runbook has {len(twins) + 1} sections headed {sections[chosen].title.strip()}: "
        f"shown is the one at {steps.locator or locators.get(sections[chosen].anchor)}; "
        f"read the other{'s' if len(twins) > 1 else ''} at {', '.join(twins)}"
    )
    return steps.model_copy(update={"note": "; ".join(n for n in (note, steps.note) if n)})


def _excerpt(ev: Evidence, sections: list[Section], chosen: int, locator: str) -> Evidence:
    """`ev` narrowed to section `chosen` and its subsections, lines as written."""
    lines = (ev.content or "").splitlines()
    end = _scope_end(sections, chosen)
    stop = sections[end].line if end < len(sections) else len(lines)
    text = "\n".join(lines[sections[chosen].line : stop]).rstrip()
    return _cut_to(ev, text, locator)


def _cut_to(ev: Evidence, text: str, locator: str) -> Evidence:
    """`ev` with `text`, a part of its content, as its content, located at `locator`."""
    transformations = sorted({*ev.transformations, SECTION_EXCERPT})
    return ev.model_copy(
        update={
            "evidence_id": evidence_id_for(
                ev.element_id, ev.version, sha256_text(text), transformations
            ),
            "content": text,
            "locator": locator,
            "transformations": transformations,
        }
    )


def alert_excerpt(
    ev: Evidence, names: tuple[str, ...], question: str | None = None
) -> Evidence | None:
    """The section of runbook `ev` about the alert asked about, as evidence of its own, when
    `ev` holds sections for two or more alerts and the question is about one of them, or the
    section an error id `names` name heads (None otherwise: keep it whole). The alert is the
    one `names` name (alert names and `runbook_url` fragments); when they name none of its
    sections, the one whose name the `question` spells out in words.

    Call it on text whose integrity is checked: the excerpt is a part of it, and carries
    the record's `text_hash` of the whole.
    """
    if not (names or question) or SECTION_EXCERPT in ev.transformations:
        return None
    if "runbook" not in ev.evidence_types:
        return None
    structure = _structure(ev)
    if structure is None:
        return None
    sections, locators = structure
    alerts = _alert_sections(sections)
    if len(alerts) < 2:
        # A page of error codes (`## BILL-2002`): the section the id asked about heads.
        coded = _code_named(sections, names)
        if coded is None or (locator := locators.get(sections[coded].anchor)) is None:
            return None
        return _excerpt(ev, sections, coded, locator)
    named = {i for name in names if (i := _named(sections, (name,))) is not None}
    if not named and question and (spelled := _spelled(sections, alerts, question)) is not None:
        named = {spelled}
    if not named and names:
        # Named, and no section is about it (a heading renamed): what the card shows, the
        # opening text, never the whole page of other alerts' sections (too long to fit).
        return _opening_excerpt(ev, sections, alerts)
    if len(named) != 1:
        return None  # none is about the question, or two are: the whole text holds both
    chosen = named.pop()
    locator = locators.get(sections[chosen].anchor)
    return None if locator is None else _excerpt(ev, sections, chosen, locator)


def _opening_excerpt(ev: Evidence, sections: list[Section], alerts: list[int]) -> Evidence:
    """`ev` narrowed to its opening text (`_opening_end`), located at the file itself."""
    lines = (ev.content or "").splitlines()
    text = "\n".join(lines[: _opening_end(sections, alerts)]).rstrip()
    return _cut_to(ev, text, (ev.locator or "").partition("#")[0])


def excerpt_at(ev: Evidence, locator: str) -> Evidence | None:
    """The excerpt of `ev` a recorded `section_excerpt` names by its locator (replay): a
    locator without an anchor names the opening text."""
    structure = _structure(ev)
    if structure is None:
        return None
    sections, locators = structure
    if "#" not in locator:
        alerts = _alert_sections(sections)
        return _opening_excerpt(ev, sections, alerts) if len(alerts) >= 2 else None
    anchor = locator.rpartition("#")[2]
    for i, section in enumerate(sections):
        if section.anchor == anchor and locators.get(anchor) == locator:
            return _excerpt(ev, sections, i, locator)
    return None


# A runbook too long for the evidence budget, admitted as the part the card shows, bounded.
BUDGET_CUT = "budget_cut"
# Less room than this for a runbook: no part of it is worth reading; the budget error says so.
_CUT_MIN_TOKENS = 200


def card_focus(ev: Evidence, focus: SectionFocus) -> SectionFocus:
    """What `investigator runbook --alert` focuses on for runbook `ev` reached through an
    alert (`alert_focus`): the names of `focus`, then that alert's."""
    anchor = str(ev.context.get("anchor") or "")
    if ev.context.get("anchor_type") != "alert" or not anchor.startswith("alert:"):
        return focus
    name = alert_name_in(anchor)
    return focus.model_copy(update={"names": tuple(dict.fromkeys([*focus.names, name]))})


def budget_excerpt(ev: Evidence, focus: SectionFocus, room: int) -> Evidence | None:
    """Runbook `ev`, whose text does not fit `room` tokens, as the part the card shows for
    `focus`: the section its steps are in, then, if that does not fit either, that section's
    first lines that do (`BUDGET_CUT`, with `budget_cut` in its props saying how many of
    how many). None when `room` is too small for any part of it. Call it on checked text."""
    if room < _CUT_MIN_TOKENS or "runbook" not in ev.evidence_types:
        return None
    part = ev
    lines = (ev.content or "").splitlines()
    kept = len(lines)
    apart = _parts_apart(ev, focus) if SECTION_EXCERPT not in ev.transformations else []
    if apart:
        # Two alerts asked about, each with its own section: each answered from its own.
        part = _joined_parts(ev, apart) or ev
        lines = (part.content or "").splitlines()
        kept = len(lines)
    elif SECTION_EXCERPT not in ev.transformations:
        steps = runbook_steps(ev, focus)
        if steps.locator and "#" in steps.locator:
            part = excerpt_at(ev, steps.locator) or ev
            lines = (part.content or "").splitlines()
            kept = len(lines)
        elif (steps.note or "").startswith(OPENING_SECTION_NOTE):
            # The opening text the card shows, a prefix of the page (PatroniIsDown's `About`).
            structure = _structure(ev)
            first = _opening_section_index(structure[0]) if structure else None
            if structure is not None and first is not None:
                kept = structure[0][first + 1].line
    if EVIDENCE_HEADER_TOKENS + estimate_tokens("\n".join(lines[:kept])) > room:
        # Line by line from the section's start: the steps the card shows come first.
        kept, used = 0, EVIDENCE_HEADER_TOKENS
        for line in lines:
            used += estimate_tokens(line + "\n")
            if used > room:
                break
            kept += 1
    if kept == 0:
        return None
    return budget_cut_at(part, kept, len((ev.content or "").splitlines()), apart)


def _parts_apart(ev: Evidence, focus: SectionFocus) -> list[str]:
    """The locators of the parts the card shows for each alert `focus` names, one per alert
    (`--alert A`, then `--alert B`), when two or more alerts have parts of their own; else
    none (one alert, or all in one part: the card's choice for `focus` holds them)."""
    names = [n for n in focus.names if is_alert_name(n)]
    if len(names) < 2:
        return []
    found: list[str] = []
    for name in names:
        locator = runbook_steps(ev, SectionFocus(names=(name,), said=focus.said)).locator
        if locator is None or "#" not in locator:
            return []  # an alert without a section of its own: no part answers it
        if locator not in found:
            found.append(locator)
    return found if len(found) >= 2 else []


def _joined_parts(ev: Evidence, locators: list[str]) -> Evidence | None:
    """`ev` narrowed to the parts at `locators`, in that order, located at its file."""
    parts = [excerpt_at(ev, locator) for locator in locators]
    if any(p is None for p in parts):
        return None
    text = "\n\n".join((p.content or "") for p in parts if p is not None)
    return _cut_to(ev, text, (ev.locator or "").partition("#")[0])


def budget_cut_at(
    part: Evidence, kept: int, page_lines: int, parts: list[str] | None = None
) -> Evidence:
    """`part` (a runbook, its section, or the `parts` of it joined) cut to its first `kept`
    lines, said in its props (`budget_cut`: lines kept, of the part's, of the page's, and
    the parts' locators); replay cuts the same again."""
    lines = (part.content or "").splitlines()
    cut = _cut_to(part, "\n".join(lines[:kept]).rstrip(), part.locator or "")
    transformations = sorted({*cut.transformations, BUDGET_CUT})
    told: dict[str, object] = {"kept": kept, "of": len(lines), "page": page_lines}
    if parts:
        told["parts"] = list(parts)
    props = {**cut.props, "budget_cut": told}
    return cut.model_copy(
        update={
            "evidence_id": evidence_id_for(
                cut.element_id, cut.version, sha256_text(cut.content or ""), transformations
            ),
            "transformations": transformations,
            "props": props,
        }
    )


def budget_cut_again(whole: Evidence, recorded: dict[str, object]) -> Evidence | None:
    """The `BUDGET_CUT` excerpt a run recorded (`recorded`, its evidence payload), cut again
    from `whole`, the record re-read (replay)."""
    props = recorded.get("props")
    told = props.get("budget_cut") if isinstance(props, dict) else None
    if not isinstance(told, dict) or not isinstance(told.get("kept"), int):
        return None
    locator = str(recorded.get("locator") or "")
    parts = told.get("parts")
    if isinstance(parts, list) and parts and all(isinstance(p, str) for p in parts):
        joined = _joined_parts(whole, [str(p) for p in parts])
        if joined is None:
            return None
        return budget_cut_at(
            joined, told["kept"], len((whole.content or "").splitlines()), [str(p) for p in parts]
        )
    part = (excerpt_at(whole, locator) if "#" in locator else None) or whole
    return budget_cut_at(part, told["kept"], len((whole.content or "").splitlines()))


def budget_cut_words(ev: Evidence) -> str | None:
    """What a `BUDGET_CUT` excerpt holds of its page and how to read the rest, or None."""
    told = ev.props.get("budget_cut")
    if BUDGET_CUT not in ev.transformations or not isinstance(told, dict):
        return None
    kept, of, page = told.get("kept"), told.get("of"), told.get("page")
    parts = told.get("parts")
    if isinstance(parts, list) and parts:
        anchors = ", ".join("#" + str(p).rpartition("#")[2] for p in parts)
        part = f"the sections the card shows for each alert asked ({anchors})"
    elif "#" in (ev.locator or ""):
        part = "the section the card shows"
    else:
        part = "the page"
    held = f"{part}, {of} lines" if kept == of else f"the first {kept} of the {of} lines of {part}"
    return (
        f"{held}; the page ({page} lines) does not fit --budget-tokens: "
        "`investigator runbook` shows the card, a larger --budget-tokens reads it whole"
    )


# A runbook whose text, headings aside, is at most this many lines is a stub; so is one whose
# sections of steps, together, are ("Refer to the [NodeFilesystemSpaceFillingUp][1] runbook.").
_POINTER_LINES = 2
# A Markdown reference definition, `[1]: https://...`: a pointer's `[X][1]` names that file.
_REFERENCE = re.compile(r"^\s{0,3}\[([^\]]+)\]:\s*(\S+)", re.MULTILINE)
# The name of a Markdown file a pointer links (the importer names a runbook after its file).
LINKED_FILE = re.compile(r"(?<![\w.-])([A-Za-z0-9][\w.-]*)\.md\b")


def _steps_sections_lines(content: str) -> list[str]:
    """The lines of every section of steps of a page (`## Mitigation`, with its subsections),
    headings and reference definitions aside: what the page has of its own to do."""
    lines: list[str] = []
    within: int | None = None  # the level of the steps heading being read, if any
    # `sections_of` reads fences: a `# restart the pods` comment in a code block is no heading.
    for section in sections_of(content):
        if within is None or section.level <= within:
            within = section.level if _STEPS_TITLE.search(section.title) else None
        if within is not None:
            lines += [
                line
                for line in section.body.splitlines()
                if line.strip() and not _REFERENCE.match(line)
            ]
    return lines


def pointer_text(ev: Evidence) -> str:
    """What runbook `ev` says when that is short enough to be only a pointer: its text,
    headings aside, else the lines of its sections of steps, with the targets of the
    reference links they use. Empty when both are longer, or when a longer page has no
    section of steps: its opening paragraph naming another page is no pointer, the page
    has text of its own."""
    written = (ev.content or "").splitlines()
    lines = [line for line in written if line.strip() and not line.startswith("#")]
    if len(lines) > _POINTER_LINES:
        lines = _steps_sections_lines(ev.content or "")
    if not lines or len(lines) > _POINTER_LINES:
        return ""
    text = "\n".join(lines)
    targets = {m.group(1).casefold(): m.group(2) for m in _REFERENCE.finditer(ev.content or "")}
    used = re.findall(r"\]\[([^\]]+)\]", text)
    return "\n".join([text, *(targets[u.casefold()] for u in used if u.casefold() in targets)])


def file_of(ev: Evidence) -> str:
    """The file a runbook was imported from (its locator without commit or anchor)."""
    return (ev.locator or "").partition("#")[0].partition("@")[0]


def _named_by(ev: Evidence, others: list[Evidence]) -> Evidence | None:
    """The one of `others` whose file the pointer text of runbook `ev` names; of several,
    the longest path named."""
    text = pointer_text(ev)
    own = file_of(ev)
    named = [
        other
        for other in others
        if other.element_id != ev.element_id
        and (path := file_of(other))
        and path != own  # another version of this very file points nowhere else
        and re.search(r"(?<![\w.-])" + re.escape(path), text)
    ]
    return max(named, key=lambda o: (len(file_of(o)), o.element_id), default=None)


def pointed_at(ev: Evidence, others: list[Evidence]) -> Evidence | None:
    """The one of `others` that runbook `ev` only points at: `ev` is a stub, or its steps
    are, and names that runbook's file ("This alert has been moved to
    alerts/<operator>/KubeAPIDown.md"); of several, the longest path named. None when that
    runbook only points back at `ev`: of two pages that point at each other, neither is the
    other's answer."""
    target = _named_by(ev, others)
    if target is None:
        return None
    back = _named_by(target, [ev, *others])
    return None if back is not None and file_of(back) == file_of(ev) else target
