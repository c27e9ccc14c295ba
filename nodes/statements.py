"""User and assistant text → statements: what a message decides, rules, prefers, plans or finds.

Pure functions (stdlib, ``plait.state`` and :mod:`plait.state.supersede`), bounded work: only the
first ``SCAN_MAX`` characters of a message are read and at most ``STATEMENTS_MAX`` statements are
examined, so a 10 MB message costs what 64 KB cost.

The steps: :func:`normalize` unwraps what hosts add around a prompt (the literal quotes of
``opencode run "…"``, markdown, code fences), the text is cut into statements (sentences, bullets,
lines, ``;`` and markers such as ``Rule:``, ``TODO:`` or ``Decision:`` anywhere in a message),
and each statement is classified. A heading or a label line (``## Conventions``, ``Plan:``) gives
its kind to the bullets under it; text inside code blocks is never promoted.

What the assistant says is read with other rules: its decisions, plans and findings count, its
rules and preferences do not (a model's "always pin versions" is advice, not the user's rule), and
each statement carries its ``speaker`` so the snapshot can rank the assistant's below the user's.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Literal

from plait.state.events import EventKind, SessionEvent, Speaker
from plait.state.supersede import (
    ARROW,
    CATEGORY_OF,
    chosen,
    decision_subject,
    disparaged_choices,
    has_reversal_cue,
    rejected_choices,
    word_set,
)

SCAN_MAX = 65_536
STATEMENTS_MAX = 64
STATEMENT_MAX = 400
LINES_MAX = 2_000
UNWRAP_MAX = 3
LINE_MAX = 8_192
WORD_MAX = 40


class StatementKind(StrEnum):
    """What one statement says."""

    DECISION = "decision"
    RULE = "rule"
    CONSTRAINT = "constraint"
    PREFERENCE = "preference"
    TASK = "task"
    TASK_DONE = "task_done"
    FINDING = "finding"
    QUESTION = "question"
    CHATTER = "chatter"
    # an option listed under "Options:" or "Alternatives:", weighed and not chosen
    OPTION = "option"
    NONE = "none"


EVENT_KIND: dict[StatementKind, EventKind] = {
    StatementKind.DECISION: EventKind.DECISION,
    StatementKind.RULE: EventKind.RULE,
    StatementKind.CONSTRAINT: EventKind.RULE,
    StatementKind.PREFERENCE: EventKind.PREFERENCE,
    StatementKind.TASK: EventKind.TASK_CREATE,
    StatementKind.TASK_DONE: EventKind.TASK_COMPLETE,
    StatementKind.FINDING: EventKind.DISCOVERY,
}
USER_ONLY = frozenset({StatementKind.RULE, StatementKind.CONSTRAINT, StatementKind.PREFERENCE})


@dataclass(frozen=True, kw_only=True, slots=True)
class Statement:
    """One statement of a message.

    Attributes:
        kind: What it says.
        text: Its words, markers ("TODO:") and markdown removed, at most ``STATEMENT_MAX``.
        subject: What it is about (for a decision: its slot, else its choice's category, else
            its choice); "" for statements that promote nothing.
        negated: Choices it turns away from ("requests" in "use httpx, not requests").
        reverses: A decision that supersedes an earlier one (a reversal cue or a rejected
            choice); the fold decides which, with :func:`plait.state.supersede.supersedes`.
        speaker: ``user`` or ``assistant``; the assistant's statements rank below the user's.
    """

    kind: StatementKind
    text: str
    subject: str = ""
    negated: tuple[str, ...] = ()
    reverses: bool = False
    speaker: Speaker = "user"

    @property
    def event_kind(self) -> EventKind | None:
        """The session event this statement becomes, or ``None`` when it promotes nothing."""
        return EVENT_KIND.get(self.kind)


@dataclass(frozen=True, kw_only=True, slots=True)
class Unit:
    """A line (or a paragraph's joined lines) with what its markdown said about it."""

    text: str
    section: StatementKind | None = None
    checkbox: str | None = None
    group: int = 0


# -- normalize ----------------------------------------------------------------------------------
QUOTE_PAIRS = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "\u00ab": "\u00bb"}
QUOTE_PAIRS |= {"\u201e": "\u201c", "`": "`"}
CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\ufeff]")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")
BLOCKQUOTE = re.compile(r"^(?:>\s?)+")
HEADING = re.compile(r"^#{1,6}\s+")
BULLET = re.compile(r"^(?:[-*+\u2022\u2023\u25e6]|\d{1,3}[.)])\s+")
CHECKBOX = re.compile(r"^\[(?P<mark>[ xX])\]\s*")
STRONG = re.compile(r"\*\*|(?<!\w)__|__(?!\w)")
EMPHASIS = re.compile(
    r"(?<![\w*])\*(?=\S)(?P<a>[^*\n]+?)(?<=\S)\*(?![\w*])|"
    r"(?<!\w)_(?=\S)(?P<b>[^_\n]+?)(?<=\S)_(?!\w)"
)
SPACES = re.compile(r"[ \t\u00a0]+")


def bounded(text: object) -> str:
    """A message as text: at most ``SCAN_MAX`` characters, no control bytes, plain newlines."""
    if isinstance(text, bytes | bytearray):
        text = bytes(text[: SCAN_MAX * 4]).decode("utf-8", errors="replace")
    raw = text if isinstance(text, str) else ("" if text is None else str(text))
    raw = raw[:SCAN_MAX].replace("\r\n", "\n").replace("\r", "\n")
    return CONTROL.sub("", raw.encode("utf-8", "replace").decode("utf-8"))


def unwrap_quotes(text: str) -> str:
    """Strip quotes wrapped around a whole message (``"…"``, ``'…'``, ``“…”``), nested ones too.

    ``opencode run "Rule: …"`` delivers the quotes with the prompt; quotes escaped by a
    backslash inside are unescaped with them.
    """
    for _ in range(UNWRAP_MAX):
        stripped = text.strip()
        if len(stripped) < 2 or QUOTE_PAIRS.get(stripped[0]) != stripped[-1]:
            return stripped
        inner = stripped[1:-1].replace("\\" + stripped[0], stripped[0])
        if not wraps_whole(stripped[0], inner):
            return stripped
        text = inner
    return text.strip()


def wraps_whole(quote: str, inner: str) -> bool:
    """Whether the outer quotes enclose the whole text (not ``"a" and "b"``)."""
    if quote in ("'", "\u2018"):
        return not re.search(r"(?<![A-Za-z])'|'(?![A-Za-z])", inner)
    if quote == "`":
        return "`" not in inner and "\n" not in inner.strip()
    closing = QUOTE_PAIRS[quote]
    if closing != quote:
        first_close, first_open = inner.find(closing), inner.find(quote)
        return first_close == -1 or -1 < first_open < first_close
    if inner.count(quote) % 2:
        return False
    first = inner.find(quote)
    return first == -1 or bool(re.match(rf"(?:^|[\s(\[])\{quote}\S", inner[max(0, first - 1) :]))


def strip_markdown(line: str) -> tuple[str, bool, bool, str | None]:
    """One line without quote marks, heading marks, bullets, checkboxes and emphasis.

    Returns:
        The text, whether it was a heading, whether a bullet, and its checkbox mark (" ", "x").
    """
    line = BLOCKQUOTE.sub("", line[:LINE_MAX].strip())
    heading = bool(HEADING.match(line))
    line = HEADING.sub("", line)
    bullet = bool(BULLET.match(line))
    line = BULLET.sub("", line)
    box = CHECKBOX.match(line)
    line = CHECKBOX.sub("", line)
    line = EMPHASIS.sub(lambda m: m.group("a") or m.group("b"), STRONG.sub("", line))
    return (
        SPACES.sub(" ", line).strip(),
        heading,
        bullet,
        box.group("mark").lower() if box else None,
    )


def prose_lines(text: str) -> Iterator[str]:
    """The lines of a text outside fenced code blocks (a fence is a blank line)."""
    fence = ""
    for count, line in enumerate(text.split("\n")):
        if count >= LINES_MAX:
            return
        match = FENCE.match(line)
        if match and (not fence or match.group(1)[0] == fence[0]):
            fence = "" if fence else match.group(1)
            yield ""
        elif not fence:
            yield line


def prepare(text: object) -> str:
    """A message bounded, unwrapped from its quotes, with typographic apostrophes made plain."""
    return unwrap_quotes(bounded(text)).replace("\u2019", "'").replace("\u2018", "'")


def normalize(text: object) -> str:
    """A message as plain prose: wrapping quotes, code fences and markdown removed.

    Text inside fenced code blocks is dropped; inline code keeps its words without the ticks.
    """
    lines = (strip_markdown(line)[0] for line in prose_lines(prepare(text)))
    joined = "\n".join(lines).replace("`", "")
    return re.sub(r"\n{3,}", "\n\n", joined).strip()


# -- units and sections -------------------------------------------------------------------------
SECTION_LABEL = re.compile(
    r"^(?:the |my |our |your )?(?:summary of |recap of )?(?P<label>rules|ground rules|"
    r"conventions|constraints|guidelines|requirements|decisions|decided|what we (?:agreed|decided)|"
    r"todos?|to-?dos|todo list|tasks|task list|plan|next steps?|"
    r"remaining(?: work| tasks| steps)?(?: on my side)?|"
    r"things (?:we|i) (?:still )?owe(?: before [\w ]{1,20})?|"
    r"follow[- ]ups?|preferences|done|completed|code style|style guide|"
    r"here'?s how i'?d (?:sequence|do|approach|tackle) it|"
    r"(?:the )?(?:options|alternatives|candidates|choices|contenders|pros and cons|trade-?offs))"
    r"(?: (?:on|in|at|during|for) (?:the |our |this |today'?s |next )?(?:call|meeting|sync|standup|"
    r"review|discussion|today|tomorrow|(?:this |next )?week|sprint|repo|project|codebase)|"
    r"(?<=plan) for (?:the|our|this) [\w -]{1,30}(?=:$)|"
    r"(?<=ions|ives|ates|ices|ders|cons|offs) (?:for|on) [\w ./-]{1,30})?"
    r"\s*:?$",
    re.IGNORECASE,
)
SECTION_KINDS = {
    "rules": StatementKind.RULE,
    "ground rules": StatementKind.RULE,
    "conventions": StatementKind.RULE,
    "guidelines": StatementKind.RULE,
    "constraints": StatementKind.CONSTRAINT,
    "requirements": StatementKind.CONSTRAINT,
    "decisions": StatementKind.DECISION,
    "decided": StatementKind.DECISION,
    "what we agreed": StatementKind.DECISION,
    "what we decided": StatementKind.DECISION,
    "code style": StatementKind.RULE,
    "style guide": StatementKind.RULE,
    "preferences": StatementKind.PREFERENCE,
    "done": StatementKind.TASK_DONE,
    "completed": StatementKind.TASK_DONE,
    **dict.fromkeys(
        ("options", "alternatives", "candidates", "choices", "contenders", "pros and cons")
        + ("tradeoffs", "trade-offs"),
        StatementKind.OPTION,
    ),
}


def section_kind(line: str, heading: bool) -> StatementKind | None | Literal[False]:
    """The kind a label line gives the lines under it; ``False`` when the line is no label."""
    match = SECTION_LABEL.match(line)
    if match is None or not (heading or line.endswith(":") or len(line.split()) <= 2):
        return False
    label = match.group("label").lower().removeprefix("the ")
    return SECTION_KINDS.get(label, StatementKind.TASK)


# A label closing a line after a sentence: "The export is done. Remaining work:"
TRAILING_LABEL = re.compile(r"^(?P<head>.*?[.!?])\s+(?P<label>[^.!?:]{2,60}:)\s*$")


def labels_apart(lines: Iterable[str]) -> Iterator[str]:
    """The lines, a label that closes a line after a sentence moved to a line of its own."""
    for line in lines:
        match = TRAILING_LABEL.match(line)
        if match and section_kind(match.group("label"), False) is not False:
            yield match.group("head")
            yield match.group("label")
        else:
            yield line


def units(text: str) -> Iterator[Unit]:
    """The lines of a prepared text as units, with the section and checkbox each one is under.

    A line that continues a sentence of the line before (no closing punctuation before it,
    lower case after it) is joined to it; a blank line or a label line ends a paragraph and a
    section (a label line opens a new one), a heading ends a section.
    """
    section: StatementKind | None = None
    pending: list[Unit] = []
    group = 0
    for raw in labels_apart(prose_lines(text)):
        line, heading, bullet, box = strip_markdown(raw)
        label = section_kind(line, heading) if line else None
        if not line or label is not False:
            section, group = (label or None), group + 1
            yield from pending
            pending = []
            continue
        if heading:
            section = None
        if pending and not bullet and continues(pending[-1].text, line):
            pending[-1] = replace(pending[-1], text=f"{pending[-1].text} {line}")
            continue
        yield from pending
        pending = [Unit(text=line, section=section, checkbox=box, group=group)]
    yield from pending


def continues(previous: str, line: str) -> bool:
    """Whether a line continues the sentence of the line before it (a note's arrow line ends)."""
    if re.search(ARROW, previous):
        return False
    return not re.search(r"[.!?:;)\]]$", previous) and bool(re.match(r"[a-z(]", line))


# -- splitting ----------------------------------------------------------------------------------
MARKER_WORDS = (
    r"rules? of thumb(?: for (?:this|the|our) [\w-]+)?|rules?|constraints?|conventions?|"
    r"polic(?:y|ies)|todos?|to-do|tood|tasks?|"
    r"next(?: steps?| up(?: after this(?: one)?)?)?|"
    r"decisions?(?: (?:on|for|about) (?:the |our )?[\w/-]+(?: [\w/-]+)?)?|"
    r"decided|decison|desicion|decsion|note to self|note for later|"
    r"design (?:choice|decision)(?: (?:on|for|about) (?:the |our )?[\w/-]+(?: [\w/-]+)?)?|"
    r"notes?|nb|"
    r"fyi|preferences?|pref|done|fixed|completed|important|"
    r"follow[- ]ups?(?: for (?:later|whoever has time))?|"
    r"remaining(?: work(?: on [\w -]{1,20}?)?| on my side)?|later|still to ?do|"
    r"parking this(?: for [\w ]{1,20}?)?|"
    r"pending(?: items?)?|ticket idea|future work|for v\d+(?:\.\d+)?|still outstanding|"
    r"what remains|left for (?:a )?follow-?up"
)
# A statement ends at a sentence end, ";", or before a marker; inline code is never cut.
BOUNDARY = re.compile(
    rf"`[^`\n]*+`|(?P<end>(?<![.!?])[.!?]++[\"')\]]*+\s+|;\s*+|"
    rf"(?<!\s)\s++(?=(?:{MARKER_WORDS})\s*:\s*\S)|(?<!\s)\s++(?=(?-i:TODO|TOOD)\b)|"
    r",?\s+(?=and (?:please )?(?:remember to|don'?t forget|do not forget)\b)|"
    # a request, a second choice or a next step after a comma: "use X, can you set it up?"
    r",\s+(?=(?:can|could|would) you\b|then\b)|,?\s+(?=and let'?s\b))",
    re.IGNORECASE,
)
ABBREVIATIONS = word_set("e.g i.e etc vs cf approx incl no mr mrs dr st fig eg ie al")
LEADING_FILLER = re.compile(
    r"^(?:(?:and|also|but|so|plus|oh|ok|okay|well|anyway|hey|hi|hmm+|btw|ps)\b[,!]?\s+)+",
    re.IGNORECASE,
)


def cut_points(text: str) -> Iterator[int]:
    """Where a unit's text splits into statements."""
    for match in BOUNDARY.finditer(text):
        if match.group("end") is None:
            continue
        before = text[max(0, match.start() - WORD_MAX) : match.start()].rsplit(None, 1)[-1:]
        before = before or [""]
        word = before[0].lower().strip("(\"'")
        if match.group("end")[0] == "." and (word in ABBREVIATIONS or len(word) == 1):
            continue
        yield match.end() if match.group("end").strip() else match.start()


def split_unit(text: str) -> Iterator[str]:
    """A unit's statements, in order (lazily: the caller stops when it has enough)."""
    start = 0
    for point in cut_points(text):
        piece = clean_piece(text[start:point])
        start = point
        if piece:
            yield piece
    last = clean_piece(text[start:])
    if last:
        yield last


def clean_piece(piece: str) -> str:
    """A statement without ticks, leading filler words and closing punctuation."""
    piece = piece.replace("`", "").strip()
    piece = LEADING_FILLER.sub("", piece) if len(piece.split()) > 1 else piece
    piece = piece.rstrip(" ;,").rstrip(".").strip()
    return piece[:STATEMENT_MAX] if re.search(r"[^\W\d_]", piece) else ""


# -- classification -----------------------------------------------------------------------------
# "Done: x", and "Done — x" / "Done - x" (a dash with a space before it).
MARKER = re.compile(
    rf"^(?P<marker>{MARKER_WORDS})(?:\s*:|\s+[\u2014\u2013-])\s*(?P<rest>.*)$", re.IGNORECASE
)
BARE_TODO = re.compile(r"^(?:todo|tood)\b[\s,-]*(?P<rest>\S.*)$", re.IGNORECASE)
LONE_WORD = re.compile(r"(?:for|to|the|and|on|in|of)", re.IGNORECASE)
MARKER_KINDS = {
    "rule": StatementKind.RULE,
    "convention": StatementKind.RULE,
    "polic": StatementKind.RULE,
    "constraint": StatementKind.CONSTRAINT,
    "todo": StatementKind.TASK,
    "to-do": StatementKind.TASK,
    "tood": StatementKind.TASK,
    "task": StatementKind.TASK,
    "next": StatementKind.TASK,
    "follow": StatementKind.TASK,
    "remaining": StatementKind.TASK,
    "later": StatementKind.TASK,
    "still": StatementKind.TASK,
    "note to self": StatementKind.TASK,
    "note for later": StatementKind.TASK,
    "design": StatementKind.DECISION,
    "parking": StatementKind.TASK,
    "pending": StatementKind.TASK,
    "ticket": StatementKind.TASK,
    "future": StatementKind.TASK,
    "for v": StatementKind.TASK,
    "what remains": StatementKind.TASK,
    "left for": StatementKind.TASK,
    "decision": StatementKind.DECISION,
    "decided": StatementKind.DECISION,
    "decison": StatementKind.DECISION,
    "desicion": StatementKind.DECISION,
    "decsion": StatementKind.DECISION,
    "pref": StatementKind.PREFERENCE,
    "done": StatementKind.TASK_DONE,
    "fixed": StatementKind.TASK_DONE,
    "completed": StatementKind.TASK_DONE,
}

QUESTION_START = re.compile(
    r"^(?!(?:where|when) (?:possible|needed|necessary|applicable|appropriate|in doubt)\b)"
    r"(?:(?:how|what|what's|whats|why|where|when|which|who|whose)\b|"
    r"(?:is|are|was|were|do|does|did|can|could|would|will|should|shall|may|have|has)"
    r" (?:it|we|you|u|i|they|this|that|there|the)\b)",
    re.IGNORECASE,
)
HEDGE = re.compile(
    r"\b(?:not sure|unsure|maybe|perhaps|i wonder|wondering|what if|considering whether|"
    r"not certain|i don'?t know|idk|might want|could we|should we\b.*\?|just curious|"
    r"^not saying\b|torn between|on the fence|haven'?t (?:made up my mind|decided)|"
    r"not decided yet|if (?:we|i) ever|(?:we|i)'?d probably|part of me|"
    r"(?:keep|still|been) (?:going )?back and forth|on the other hand|my suggestion would be|"
    r"leave the (?:final )?(?:call|decision) to|"
    # a question put as a statement: "the question is whether we keep the model in the bundle"
    r"^the (?:\w+ )?question (?:is|remains)\b|\bstill an open question\b)",
    re.IGNORECASE,
)
# Someone else's word, reported: "the design doc says we use optimistic locking", "Sam says we
# should always use an ORM": neither a decision nor a rule of the speaker's.
REPORTED = re.compile(
    r"\b(?:says|said|claims|claimed|suggests|suggested|argues|argued|thinks|insists|"
    r"(?:always )?wanted to)\b(?: (?:in|at|on) [\w ]{1,20}?)?(?: that)? (?:we|you|i|to)\b|"
    # "folks said the quickstart should…" (not "as I said, the…": the speaker's own)
    r"(?<!\bi )(?<!\bwe )\b(?:says|said|suggested|argued|insists|insisted)(?: that)? "
    r"(?:the|our|it|this)\b|"
    r"\b(?:docs?|documentation|guide|readme|manual|spec|article|book|tutorial) "
    r"(?:say|says|said|recommends?|suggests?)\b|"
    # someone else's wish ("the PM wants us to try X") or what evidence showed
    r"\b(?:wants|wanted|asks|asked|tells|told) (?:us|me) to\b|"
    r"\b(?:showed|shows|revealed|proved) that\b|"
    # someone pushing for something: "Priya keeps saying we should…", "Mei is proposing we
    # adopt…", "Priya's take is that we should…"
    r"\b(?:keeps?|kept) (?:saying|suggesting|telling (?:us|me)|pushing for|asking (?:us|me|for))\b|"
    r"\w's (?:take|view|opinion|position|suggestion|proposal|idea|pitch) (?:is|was)\b|"
    r"\b(?:is|are|was|were) (?:proposing|suggesting|pushing for|arguing for|lobbying for|"
    r"pitching)\b|"
    r"(?<!\bi )(?<!\bwe )\b(?:proposes|proposed|recommends|recommended)(?: that)? (?:we|us)\b",
    re.IGNORECASE,
)
# A line of pasted notes in someone else's name: "Keisha: wants to try Terragrunt", "Ana:
# prefers cutting tests over sharding" (a name, then what that person wants or thinks)
SOMEONE_ELSES_LINE = re.compile(
    r"^(?!(?:Me|Mine|My|I|We|Us|Our)\b)[A-Z][\w.'-]{0,20}:\s+[^.!?]{0,80}?\b(?:wants|wanted|"
    r"suggests|suggested|prefers|preferred|proposes|proposed|thinks|thought|argues|argued|"
    r"likes|liked|objects|objected|pushes|pushed|votes|voted|is for|is against)\b"
)
CHATTER_WORDS = word_set(
    "yes yep yeah yup ya y ok okay k kk sure fine good great perfect nice "
    "cool thanks thank you u ty thx tysm lgtm ship it sounds looks go ahead "
    "for do that so please pls plz proceed continue carry on keep going "
    "right correct exactly agreed approved works me a lot much very hi "
    "hello hey hmm hm hmmm lol wow oops interesting awesome nvm alright all "
    "wait no nope got makes sense true indeed excellent amazing done that's "
    "thats this is fine now then too well job work again the and let's lets "
    "try yup sgtm ack noted understood makes"
)
DONE = re.compile(
    r"\b(?:is|are|'s|was|were) (?:now |all |finally |already )?"
    r"(?:done|finished|complete|completed|wrapped up)\b|"
    r"^(?:(?:i|we)(?:'ve| have)? )?(?:just |now )?(?:finished|completed)\b|"
    r"\b(?:is|are) (?:now )?in place(?: now)?\.?$|\bcan be ticked off\b",
    re.IGNORECASE,
)
PREFERENCE = re.compile(
    r"\b(?:i|we)(?:'d| would)? (?:really |much |personally |generally |usually |kind of )?"
    r"(?:prefer|prefere|rather)\b|\bi'?d rather\b|\b(?:team|everyone|we) prefers?\b|"
    r"\bif it (?:were|was) (?:only )?up to me\b|\bi'?d personally\b|"
    r"^(?:please |pls |plz )?prefere?s?\b|"
    r"\bi (?:really |personally |much |do |quite |rather )?like "
    r"(?!it\b(?! when)|that\b|this\b|to know\b|you to\b)|\bi'?d like (?!you\b|to\b|it\b|that\b)|"
    # taste in other words: a fan of, partial to, tend to like, favour, lean towards, my taste
    r"\bi(?:'m| am) (?:a (?:big |huge |real )?fan of|partial to|fond of|keen on)\b|"
    r"\bi(?:'m| am) (?:more of )?an? [\w -]{1,20}? (?:person|guy|girl|kind of (?:person|dev))\b|"
    r"\bi (?:tend to|usually|generally|really) (?:like|love|enjoy|prefer|favou?r)\b|"
    r"\b(?:i|we)(?:'d| would)? (?:also |generally |usually |really |always )?(?:favou?r|enjoy|"
    r"lean (?:towards?|toward))\b|\bmy (?:personal )?(?:taste|preference|inclination)\b|"
    r"\b(?:if it'?s up to me|given the choice|if i had my way|personally,? i find|if you ask me|"
    r"the way i like it)\b|\bi'?d love (?:it if|to see)\b|"
    r"\bi'?d (?:go for|reach for) (?!it\b|that\b|this\b)|"
    r"\b(?:i'?m |i am )?not (?:a (?:big |huge |real )?fan of|keen on|fond of)\b|"
    r"\b(?:would|will|'d) make me (?:very |really )?happy\b|\bi'?d take [\w .+#-]{1,60}? over\b|"
    r"\bi(?:'m| am) (?:much |a lot |far )?more comfortable with\b.{1,60}\bthan\b|"
    r"\bi (?:really |strongly |kind of |kinda )?(?:dislike|hate|can'?t stand|detest)\b|"
    # taste said as what reads better to the speaker
    r"\b(?:for me|to me|to my eye|imo|in my opinion)\b,? .{0,60}?\b(?:reads?|looks?|feels?|is) "
    r"(?:much |a lot |way |far )?(?:better|nicer|cleaner|clearer|more natural|more readable|"
    r"easier)\b|\b(?:reads?|looks?|feels?) (?:much |a lot |way |far )?(?:better|nicer|cleaner|"
    r"clearer|more natural|more readable) to me\b",
    re.IGNORECASE,
)
# "no" that forbids nothing: "no time for…", "no rush", "no idea of…"
NO_IDIOM = r"(?!(?:time|rush|worries|problem|idea|clue|way|luck|need)\b)"
STRONG_RULE = re.compile(
    r"\b(?:always|alway|allways|alwyas|alwasy|awlays)\b|\b(?:never|nevr|neevr)\b(?! mind\b)"
    # what the speaker has never done is no rule: "never written either tbh"
    r"(?! (?:written|tried|done|seen|heard|touched|worked|been|had|gotten|got)\b)|"
    r"\b(?:must|mustn'?t)\b|\bshall not\b|"
    r"\b(?:from now on|going forward|moving forward|from here on|henceforth|in future)\b|"
    r"\b(?:make sure|ensure that|be sure to)\b|"
    r"^(?:for [\w ./-]{1,40}:\s*)?(?:please |pls |plz )?(?:don'?t|dont|do not|no need to)\s+"
    r"(?!use\b|using\b|forget\b|worry\b|know\b|think\b|mind\b|go with\b|switch\b|bother\b)\w+|"
    rf"^no (?:more )?{NO_IDIOM}"
    r"[\w.()+-]+(?: [\w.()+-]+){0,2} (?:in|on|inside|within|outside|for|between|"
    r"across)\b|^no (?:more )?[\w.()+-]+(?: [\w.()+-]+)?,? ever$|"
    rf"^no {NO_IDIOM}\w+ of \w+|"
    r"^no (?:more )?[\w.()+-]+$|\b(?:our|the) (?:convention|policy|rule) (?:is|here is)\b|"
    r"^nothing (?:in|under|inside|from|outside) [\w./ -]{1,30}? (?:may|can|should|shall)\b|"
    r"^(?:anything|everything|any \w+|all \w+) (?:over|above|under|below|longer than|bigger than|"
    r"more than) \d+ [\w ]{1,20}?(?:should|has to|needs to|gets?)\b|"
    r"\b(?:are|is|should be) (?:all )?(?:snake_case|camel ?case|pascal ?case|kebab-case|"
    r"plural nouns?|singular nouns?|lower ?case|upper ?case|upper_snake_case|"
    r"screaming_snake_case)\b|^\d+[- ]spaces? indent|"
    r"\b(?:under no circumstances|in no case|no exceptions)\b|,\s*ever[.!]*$|"
    # an ultimatum: "migrations run inside a transaction or they don't run at all"
    r"\bor (?:it|they|you) (?:don'?t|doesn'?t|won'?t|do not|does not) \w+(?: at all)?\b|"
    r"\bwe (?:don'?t|do not|never) \w+[\w -]{0,40}? here\b|"
    r"^(?:but |and |so )?(?:nobody|no one) (?:touches|edits|changes|merges|runs|deploys|pushes|"
    r"uploads|commits|writes|adds|calls|imports|creates)\b|"
    r"^only (?:the )?[\w -]{1,30}? (?:publishes|deploys|merges|"
    r"releases|touches|writes|edits|may|can)\b|\bonly (?:goes|go) through\b|"
    r"^nothing gets \w+ed\b|\b(?:is|are) mine to (?:edit|change|touch)\b|\band nothing else\b|"
    r"^(?:every|each|all|any) [\w -]{1,30}? (?:gets?|has|have|comes? with) "
    r"(?:a|an|its own|their own)\b|"
    r"\bstays? (?:read-only|private|internal)\b|\bstays? in the \S+ (?:files?|folder|directory)\b|"
    r"\b(?:is|are) (?:a no-no|not to be \w+ed)\b|"
    r"\b(?:is|are) for [\w -]{1,20}? only\b|^(?:please )?stick to\b.{0,40}\b(?:all|every|new)\b|"
    r"^(?:please |pls )no [\w.()+-]+(?: [\w.()+-]+)? (?:in|on|inside|within|for)\b|"
    r"\b(?:files?|classes|functions|branches|tables|columns|modules|tests?) (?:are|is) named\b|"
    r"\b(?:branch|file|class|table|column|commit|tag|module|package) names "
    r"(?:follow|use|must|should|are)\b|"
    r"\b(?:whatever the|no matter (?:what|which))\b|(?:^|:\s*)indent (?:with|using) \w+ spaces?\b|"
    r"\bstays? (?:backwards?|backward)[- ]compatible\b|"
    r"\b(?:do|does|must|should) not go (?:in|into)\b|\b(?:don'?t|doesn'?t|never) go (?:in|into)\b|"
    r"^in this (?:project|repo|codebase|team),? we (?:don'?t|do not|never|are not|aren'?t)\b|"
    r"^(?:please |pls )?(?:don'?t|dont|do not) use \S+ (?:in|inside|for) (?:the |our |any |new )?"
    r"[\w./ -]{0,30}?(?:code|files?|modules?|tests?|components?)\b|"
    r"^(?:all|every|each|any) (?:new )?[\w -]{1,40}? (?:require|requires|need|needs) "
    r"(?:a|an|at least|one|two|\d+)\b",
    re.IGNORECASE,
)
STYLE_WORDS = re.compile(
    r"\b(?:snake_case|camel ?case|pascal ?case|kebab-case|indentation|indent|\d+ spaces|tabs|"
    r"line length|docstrings?|type hints?|commit messages?|conventional commits|naming|"
    r"formatting|imports|quotes|trailing commas?|spelling|wording|tone|capitali[sz]ation|"
    r"punctuation)\b",
    re.IGNORECASE,
)
WEAK_RULE = re.compile(
    r"^(?:please |pls |plz )?(?:keep|avoid)\b(?! using\b| going\b| it\b| that\b| this\b)|"
    r"\b(?:is|are) (?:banned|forbidden|not allowed|prohibited|off[- ]limits)\b|"
    r"\b(?:every time|each time|whenever(?! you (?:have|get|can|find)\b)|after (?:each|every)|"
    r"before (?:each|every))\b",
    re.IGNORECASE,
)
DEICTIC = r"(?!(?:this|that|these|those|the following|it|them|one)\b)"
USER_DECISION = re.compile(
    # (not after "before", "after", "once", "when", "until": "before we ship the beta, …")
    r"\b(?=[wi])(?<!before )(?<!after )(?<!once )(?<!when )(?<!until )"
    r"(?:we|i)(?:'ll| will| shall|'re going to| are going to|'m going to| am going to| should|"
    r" can)? ?(?:use|go with|stick with|stay with|switch to|adopt|keep|deploy (?:to|with|on)|host|"
    r"ship|move to|migrate to|standardi[sz]e on|pick|choose|opt for|settle on|"
    r"take (?!a\b|care\b|the time\b))\b|"
    r"\bwe(?:'re| are) (?:going with|using|switching|migrating|moving|standardi[sz]ing on|"
    r"adopting|sticking with|staying (?:on|with)|keeping|dropping|"
    r"not (?:doing|using|going with|adding|building))\b|"
    # a short answer to "which one?": "postgres, obviously.", "neither, just inline it"
    r"^(?!(?:yes|yeah|yep|no|nope|ok|okay|sure|that|this|it|me|you)\b)[\w.+#-]+(?: [\w.+#-]+)?,? "
    r"(?:obviously|definitely|for sure|of course|hands down|no question)[.!]*$|"
    r"^neither\b[^\w]*\s*(?:just|let'?s)\s+\w+|"
    r"^(?:please |let'?s )?keep (?:the |our |using )?(?-i:[A-Z])[\w.+#-]*(?: [\w.+#-]+){0,2} "
    r"(?:for|as|in|on)\b|"
    r"\b(?:we|i)(?:'ve| have)? (?:chose|picked|went with|opted for|settled on|adopted|"
    r"switched to|moved to|migrated to)\b|"
    r"\bwe(?:'ll| will| should)? (?:store|put|keep) [\w .-]{1,40} in\b|"
    r"\blet'?s (?:just |simply |actually )?(?:use|go with|go for|stick with|stay with|switch|"
    r"adopt|keep|move|migrate|deploy|host|store|write|build|pick|choose|opt|skip|drop|"
    r"do(?! (?:that|this|it|so)\b))\b|\blet'?s not \w+|"
    # a way of doing it that replaces another: "let's render them in the browser instead"
    r"\blet'?s (?:just )?(?!(?:see|check|look|try|wait|talk|think|ask|test|run|debug|read|"
    r"discuss|revisit|focus)\b)[a-z]+ [^,;]{1,80}\binstead\b|"
    r"\b(?:we|i)(?:'ve| have)? decided?\b|\bdecided (?:to|on|that)\b|\bdecision (?:is|was)\b|"
    rf"(?<!\bkeep )\bgo(?:ing)? (?:with\b|w/)|\bstick(?:ing)? with\b|\bopt(?:ed)? for\b|"
    r"\bsettle on\b|"
    # back to a choice: "go back to npm", "Back to plain pip-tools."
    r"\b(?:go|going|switch|switching|move|moving|head|heading) back to (?!the\b|it\b|that\b|this\b|"
    r"where\b|what\b|how\b|work\b|sleep\b|bed\b|square one\b|you\b|me\b|my\b|normal\b|basics\b)|"
    r"^back to (?!the\b|it\b|that\b|this\b|work\b|you\b|square one\b)|"
    # "revert to Jest", "roll back to the REST client"; not to a version or a commit
    r"\b(?:revert(?:ing)?|roll(?:ing)? back) to (?!(?:the |a |an )?(?:previous|last|old|older|"
    r"earlier|original|prior|former|initial|working|known|good|stable|main|master)\b|"
    r"(?:it|that|this|what|how|where|normal|v?\d)\b|commit\b)|"
    r"\b(?:run|deploy|host) (?:it|them|everything|this|the [\w-]+) on (?-i:[A-Z])|"
    r"^(?-i:[A-Z])[\w.+#-]*(?: [\w.+#-]+)? over (?-i:[A-Z])[\w.+#-]*(?: [\w.+#-]+)? "
    r"(?:for|in|on)\b|"
    r"\bdecision to (?:use|go|adopt|switch|move|keep|build|write)\b|\bdecided against\b|"
    r"\b(?:the|our|my) final (?:call|answer|decision|verdict|choice)\b|"
    r"\b(?:between|vs\.?|versus)\b.{1,80}\b[\w.+#-]+ wins\.?$|"
    r"^(?:the )?scope (?:for [\w .-]{1,20} )?is\b|"
    r"\block(?:ing)? (?:those|these|it|that|them|this) in\b|"
    r"\b(?:we|i)(?:'ll| will|'re going to| are going to|'m going to) (?:build|write|implement|"
    r"train|do) [\w ./-]{1,40}? (?:on|in|with|using) (?-i:[A-Z])|"
    r"\bwe(?:'ll| will|'re going to| are going to) move [\w -]{1,30}? to\b|"
    # a number settled: "let's make the default page size 50", "keep the retries at 3"
    r"\blet'?s (?:make|set|cap|limit|pin|keep) (?:it |them |the [\w -]{1,30}? )?"
    r"(?:to |at |as )?\d|"
    r"\b(?:we|i)(?:'ll| will) (?:cap|limit|set|pin|keep) (?:it|them|the [\w -]{1,30}?) "
    r"(?:to|at) \d|"
    r"(?:^|,\s*)keep (?:the |our )?[\w -]{1,30}? at \d|"
    r"\b(?:should|will) (?:time ?out|expire|last|retry|wait|live) "
    r"(?:after |for |within |up to )?\d|"
    r"\b(?:ttl|timeout|limit|size|cap|retries|expiry|concurrency) (?:stays|remains|should stay) "
    r"(?:at )?\d|"
    r"^(?:the )?(?:cap|limit|max(?:imum)?|timeout|ttl|default [\w ]{1,20}?) "
    r"(?:is|will be|should be) \d|"
    r"^(?:a |an |the )?(?:plain |simple |single )?(?!(?:this|that|it|which|one|anything|something|"
    r"either|any|that'?s|i|we|you|they|he|she)\b)[\w.+#-]+(?: [\w.+#-]+){0,2} will do\.?$|"
    r"(?:^|[:,;]\s*)(?:please |pls |actually,? |now |(?:go ahead|just go) and |just )?"
    r"(?:use|switch to|adopt|keep using) "
    rf"{DEICTIC}|"
    r"\bswitch(?:ing)? (?:the |our )?[\w.-]+(?: [\w.-]+)? (?:to|from|over to)\b|"
    r"\b(?:switch\w*|migrat\w*|mov\w*)\b[^.;]{0,40}\bfrom\b[^.;]{0,40}\bto\b|"
    r"(?:\bthe |^(?:our )?)[\w -]{1,30}? (?:should|will|is going to) be (?:a |an )?"
    r"(?-i:[A-Z])[\w.+-]*|"
    r"^(?:option|approach|variant|choice) (?:[a-z]|\d+)\b(?!.*\b(?:option|approach|variant) "
    r"(?:[a-z]|\d+)\b)|"
    r"\b(?:is|are) the way to go\b|^(?:\w+,? )?[\w.+#-]+(?: [\w.+#-]+)? it is\b|"
    r"\b(?:we|i)(?:'ll| will)? lean on\b|"
    r"\b(?:our|the|my) (?:choice|pick|call) (?:for [\w /-]{1,30} )?(?:is|will be)\b|"
    r"\b(?:best|right|safest|simplest) (?:option|choice|approach|bet)(?: here)? (?:is|would be)\b|"
    r"^(?:please |just )?(?:pick|choose|go for|settle on|standardi[sz]e on) (?!one\b|a\b|an\b)|"
    r"\b(?:should|will|is going to) be (?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)"
    r" [a-z]+|"
    r"^(?:please )?(?:bump|raise|lower|increase|decrease|reduce|change) (?:the |our )?"
    r"[\w -]{1,30}? to (?:\d|one|two|three|four|five|six|seven|eight|nine|ten)|"
    r"\bmakes? more sense than\b|\b(?:should|will) live in\b|"
    # a home for something, named as a file or a path: "Config goes in pyproject.toml"
    r"^[\w .-]{1,30}? (?:goes|go|lives|live) (?:in|into|under) [\w./-]*[./]\w+|"
    r"\b(?:goes|go) (?:up |down )?to \d|\b(?:goes|go|moves?) from \d+ to \d|"
    r"\b(?:gets?|will be) (?:written|stored|built|deployed|served|shipped|rendered|streamed|"
    r"generated|published|signed|encrypted|compressed|hashed|packaged|bundled) "
    r"(?:as|in|to|with|on|via|using) |"
    r"^(?:please )?move (?:the |our )?[\w -]{1,30}? over to \S|"
    r"\bmoves? out of [\w.-]+(?: [\w.-]+)? (?:and )?in(?:to)? \S|"
    # polite: "it might be best if we kept the flags in LaunchDarkly"
    r"\b(?:it'?d|it would|it might) be best (?:if we|to)\b|"
    r"\bwe (?:leave out|leave (?:the |our )?[\w -]{1,30}? out)\b|"
    r"\b(?:come|comes) out of (?-i:[A-Z])|"
    r"\b(?:we|i)(?:'ll| will)? (?:partition|shard|key|sort|group|index) (?:it |them )?(?:by|on) |"
    r"^(?:just |please )?(?:ship|deploy|host) (?:it|them|this|everything) on \S|"
    r"^(?:the )?[\w -]{1,30}? (?:goes|go) on \S|(?:^|,\s*)(?:the )?[\w -]{1,30}? stays on \S|"
    r"\b(?:moves?|migrates?|switch(?:es)?) (?:over )?to (?-i:[A-Z])|"
    r"(?:^|,\s*|\bso\s+)(?:please |let'?s )?default (?:the |our )?[\w -]{1,30}? to\b|"
    r",\s*(?!(?:this|that|it|which)\b)[\w.+#-]+(?: [\w.+#-]+){0,3} (?:is|are) (?:plenty|enough|"
    r"sufficient|good enough|fine for)\b|"
    # an instruction that replaces something: "generate them in CI instead."
    r"^(?:please |just )?(?!(?:let|tell|ask|show|see|do)\b)[a-z]+ [^,;]{1,80}\binstead[.!]?$|"
    r"^(?!(?:this|that|it|which)\b)[\w.+#-]+(?: [\w.+#-]+){0,2} (?:is|are) (?:enough|sufficient|"
    r"good enough)\b",
    re.IGNORECASE,
)
# "Retries: exponential backoff", or in notes "auth → keycloak"; a chain of arrows
# ("upload → S3 → lambda") is a flow described, not a choice
SLOT_COLON = re.compile(
    rf"^(?:for (?:the |our )?)?(?P<slot>[a-z][\w /-]{{1,30}}?)(?::|\s*{ARROW})\s+"
    rf"(?P<choice>(?:(?!{ARROW}).)+)$",
    re.I,
)
META_SLOTS = word_set(
    "context goal note question problem issue bug error output result summary "
    "background hint example update fyi status info warning reason quick one "
    "more thing ps edit tldr also btw here plan important why because so hey "
    "hi ok okay hmm well yes no please thanks step "
    "chore feat fix refactor revert wip"
)
ASSISTANT_DECISION = re.compile(
    r"\bi(?:'ll| will|'m going to| am going to)\s+(?:use|go with|stick with|switch|pin|"
    r"keep(?! (?:it |that |this )?in mind)|opt for|"
    r"store [\w.-]+(?: [\w.-]+)? in|write [\w.-]+(?: [\w.-]+)? in)\b|"
    r"\bi(?:'m| am) (?:going with|using|switching|sticking with|keeping)\b|"
    r"\bi(?:'ve| have)? ?(?:decided|chose|chosen|opted|went with|settled on|picked|switched|"
    r"moved|migrated|replaced)\b|"
    r"^(?:going with|switching to|sticking with|opting for)\b|\bwe should use\b|"
    r"\blet'?s (?:use|go with|stick with|switch|keep)\b|(?:^|:\s*)use\b|"
    r"\bi (?:won'?t|will not) (?:use|add|introduce|pull in)\b|"
    r"^instead of [^,]{1,60}, i(?:'ll| will)\b|\bi(?:'ll| will) \w+ .{0,80}\binstead of\b|"
    r"\bwill live in\b|\bi(?:'m| am) capping\b|\bi(?:'ll| will) cap\b|"
    r"\bwill be (?:stored|kept|cached) (?:per|in|as|on)\b",
    re.IGNORECASE,
)
FINDING = re.compile(
    r"\b(?:root cause|the cause (?:is|was)|caused by|turns out|found that|i found|found it|"
    r"the (?:issue|problem|bug|culprit|reason) (?:is|was)|(?:fails|failed|failing|breaks|broke|"
    r"hangs|crashes|crashed|happen|happens|happened|occur|occurs|jumped|dropped|spiked|"
    r"regressed|rose|fell|doubled|halved) because|is due to|was due to|"
    r"(?:come|comes|came|stems|stemmed) from)\b|"
    r"^(?:the )?problem (?:is|was)\b|\bwhich is why\b|\b(?:was|were|is|are) coming from\b|"
    r"\b(?:is|are|was|were) (?:so )?(?:slow|flaky|failing|hanging|empty|wrong|missing|broken|"
    r"stale) because\b",
    re.IGNORECASE,
)
USER_TASK = re.compile(
    r"\b(?:remember to|remind(?: me)?(?: later| again)? to|don'?t forget|do not forget|"
    r"dont forget)\b|"
    r"\b(?:still|later|eventually|at some point|afterwards)\b.{0,40}\b(?:need|needs|have|has) to\b|"
    r"\bstill needs?\b|\b(?:we|i)(?:'ll| will) [a-z]+ .{0,60}\blater\b|"
    r"\b(?:we|i)(?:'ll| will) (?:also |still )?need (?:a|an|some|another)\b"
    r".{0,60}\blater\b|\b(?:need|needs|have) to\b.{0,60}\b(?:later|eventually|at some point)\b|"
    r"^later,? (?:we|i|you)\b|"
    r"\b(?:later(?: on)?|at some point|eventually|down the line)\b,? (?:we|i|you) (?:should|"
    r"could|must|ought to)\b|"
    r"(?:^|,\s*)(?:put|add) .{1,80}\b(?:on|to) (?:the|our) (?:list|backlog)\b|"
    r"\bcircle back to\b|\b(?:we|i|you) should\b.{0,80}\b(?:sometime|some time|at some point|"
    r"eventually|one day|someday)\b|"
    # deferred work: "on my list", "can wait until after the release", "for v2", "down the road"
    r"\b(?:is|are) on (?:my|our|the) (?:list|radar|todo list|backlog)\b|"
    r"\b(?:a problem|one|something) for (?:after|later|next)\b|\bfor after (?:the )?\w+\b|"
    r"\bcan wait (?:until|till|for)\b|\b(?:needs|wants) (?:doing|fixing|adding|removing|writing|"
    r"cleaning up|updating)\b|\b(?:goes|go|comes|come) (?:in|into) (?:a )?(?:follow-?up|separate|"
    r"later|next)\b|\bcomes? afterwards\b|\bnext in line\b|\bopen (?:a )?(?:ticket|issue) for\b|"
    r"\bwe owe\b|\b(?:somebody|someone) (?:should|has to|needs to|ought to)\b|"
    r"^(?:longer term|long term|down the road|one day|someday|at some (?:stage|point)|"
    r"in the long run|eventually|sometime (?:this|next) \w+)\b|"
    r"^not (?:for )?(?:today|now|yet),? but\b|"
    r"\b(?:gotta|got to|have to|has to|ought to)\b.{0,60}\b(?:eventually|at some (?:point|stage)|"
    r"sometime|someday|down the road|when there'?s time)\b|"
    r"\bpark(?:ing)? (?:the |this |that )?[\w -]{1,40}? (?:for now|until|for later)\b|"
    r"^(?:before|after|once|when) [^,]{1,60},? .{0,80}\b(?:have to|has to|need to|needs to|ought "
    r"to|can be \w+ed|needs \w+ing)\b",
    re.IGNORECASE,
)
# How the model opens a step of its plan: "Next, …", "Then …", "After that …"
PLAN_OPENER = r"(?:next(?: up)?|then|after that|afterwards|later)"
ASSISTANT_TASK = re.compile(
    rf"^(?:{PLAN_OPENER}|(?:once|after|when)\b[^,]{{0,60}},)[, ]*(?:i'll|"
    r"i will|we'll|"
    r"we will|i need to|we need to|i should|i can)\b|\bnext,? i(?:'ll| will)\b|"
    r"\b(?:i|we) still (?:need|have) to\b|\bi(?:'ll| will) (?:also |then )\w+|"
    r"\bafter that,? i(?:'ll| will)\b|\bthen i(?:'ll| will)\b|"
    r"^(?:before|after|once|when)\b[^,]{0,60}, i (?:need to|have to|still have to)\b|"
    r"^then,? (?:add|write|run|fix|update|remove|move|extract|refactor|wire|document)\b|"
    r"^step \d+ (?:is|will be)\b|^(?:my|the) plan(?: is)?:? (?:first,? )?\w|"
    r"\bi'?ll hold (?:off (?:on )?)?[\w -]{1,40}? until\b|"
    r"\bwhat'?s (?:still )?(?:open|left|remaining) is\b|"
    r"\bi'?ll (?:add|do|handle|write) (?:it |that |them |this )?(?:afterwards|later|next)\b",
    re.IGNORECASE,
)
CONJOINED = re.compile(
    r"^(?P<left>.+?\b(?:for|in|as|on)\b.+?)(?:,? and |, )(?P<right>(?:use |keep |go with |adopt )?"
    r"(?P<head>[\w.+#-]+)(?: [\w.+#-]+)? (?:for|in|as|on) .+)$",
    re.IGNORECASE,
)


def kind_and_text(piece: str, unit: Unit, speaker: Speaker) -> tuple[StatementKind, str]:
    """A statement's kind and its text (without its marker)."""
    if is_question(piece):
        return StatementKind.QUESTION, piece
    if unit.checkbox is not None:
        return (StatementKind.TASK_DONE if unit.checkbox == "x" else StatementKind.TASK), piece
    marked = marker_kind(piece)
    if marked is not None and marked[0] is not None:
        return marked[0], marked[1]
    if marked is not None:
        piece = marked[1]
    if unit.section is not None and not is_chatter(piece):
        return unit.section, piece
    classify_text = classify_assistant if speaker == "assistant" else classify_user
    return classify_text(piece), piece


def marker_kind(piece: str) -> tuple[StatementKind | None, str] | None:
    """A statement that opens with a marker (``Rule:``, ``TODO``…): its kind and the rest.

    "Note:" or "Important:" give no kind (``None``): what follows them says it.
    """
    match = MARKER.match(piece) or BARE_TODO.match(piece)
    if match is None:
        return None
    rest = match.group("rest").strip()
    marker = (match.groupdict().get("marker") or "todo").lower()
    kind = next((k for stem, k in MARKER_KINDS.items() if marker.startswith(stem)), None)
    if not rest or LONE_WORD.fullmatch(rest):
        return None  # "TODO for" before "later: …" (a marker of its own)
    return kind, rest


def is_question(piece: str) -> bool:
    """A question asks; it decides nothing ("?" at its end, or a short wh-question)."""
    stripped = piece.rstrip(" )\"'\u201d")
    if stripped.endswith("?"):
        return True
    single = not re.search(r"[,;:.!]\s", stripped) and len(stripped.split()) <= 12
    return single and bool(QUESTION_START.match(stripped))


def is_chatter(piece: str) -> bool:
    """An approval, a thank-you or a greeting that asks for nothing ("ok, go ahead, thanks")."""
    words = re.findall(r"[a-z']+", piece.lower())
    return len(words) <= 10 and all(word in CHATTER_WORDS for word in words)


# After someone else's word, the speaker's own: "prof said we can pick any language so we
# decided on Python"
OWN_AFTER_REPORTED = re.compile(
    r"(?:[,;]\s*|\s)(?:so|but|and so|and then|which is why|that'?s why)\s+(?=(?:we|i)\b)", re.I
)
# A quotation of four or more words ("Marta: \"I'd rather we didn't add…\"") is someone's words
QUOTATION = re.compile(r'"(?:[^"\s]+\s+){3,}[^"]*"|\u201c(?:[^\u201d\s]+\s+){3,}[^\u201d]*\u201d')


# "don't forget to X" asks for future work, whatever rule words follow ("or we'll never…"),
# unless it comes back again and again ("remember to update the changelog after each feature")
TASK_FIRST = re.compile(
    r"^(?:and |also |oh and )?(?:please )?(?:don'?t forget|do not forget|remember) to\b", re.I
)
# What a style word is given: "commit messages in imperative mood, subject line max 72 chars"
STYLE_VALUE = re.compile(
    r"\b(?:in|use|max|at most|under|below) (?:\w+ )?(?:case|mood|tense|voice|style|\d+)\b", re.I
)
# Work put off: "we must add pagination, but not now, after the release"
DEFERRED = re.compile(
    r"(?:\bbut|,)\s*not (?:now|today|in this (?:change|pr|release))\b|\bafter the release\b", re.I
)
RECURRING = re.compile(
    r"\b(?:(?:after|before) (?:each|every)|every time|each time|whenever|always)\b", re.I
)


def classify_user(text: str) -> StatementKind:
    """The kind of a user's statement that carries no marker."""
    if is_chatter(text):
        return StatementKind.CHATTER
    unquoted = QUOTATION.sub(" ", text)
    if unquoted != text and not unquoted.strip(" .,;:!-"):
        return StatementKind.NONE
    text = unquoted
    if SOMEONE_ELSES_LINE.match(text):
        return StatementKind.NONE
    if reported := REPORTED.search(text):
        own = OWN_AFTER_REPORTED.search(text, reported.end())
        return classify_user(text[own.end() :]) if own else StatementKind.NONE
    if DONE.search(text):
        return StatementKind.TASK_DONE
    if PREFERENCE.search(text):
        return StatementKind.PREFERENCE
    if PAST.search(text):
        return StatementKind.NONE
    if TASK_FIRST.match(text) and not RECURRING.search(text):
        return StatementKind.TASK
    if DEFERRED.search(text) and not re.match(r"not\b", text, re.I):
        return StatementKind.TASK
    styled = STYLE_WORDS.search(text) and (
        USER_DECISION.search(text) or slot_colon(text) or STYLE_VALUE.search(text)
    )
    if (STRONG_RULE.search(text) or styled) and not ONE_OFF.search(text):
        return StatementKind.RULE
    # work put off is a task, whatever it would choose ("at some point we have to replace X");
    # what recurs ("remember to update the changelog after each feature") may be a rule
    task = USER_TASK.search(text) is not None
    if task and not RECURRING.search(text):
        return StatementKind.TASK
    if is_user_decision(text):
        return StatementKind.DECISION
    if WEAK_RULE.search(text):
        return StatementKind.RULE
    return StatementKind.TASK if task else StatementKind.NONE


# An instruction for this once is no standing rule: "don't run the whole suite this time"; nor
# a choice when it says so: "use the staging replica for this one query"
JUST_ONCE = r"(?:just )?this once|for this one \w+"
ONE_OFF = re.compile(
    rf"\b(?:this time|{JUST_ONCE}|for this (?:run|pr|one|commit|change)|right now)\b", re.I
)
ONCE = re.compile(rf"\b(?:{JUST_ONCE})\b", re.I)
# How things were: "Historically we used Jenkins for all of this".
PAST = re.compile(
    r"^(?:historically|originally|back then|in the past|years ago|last year|previously)\b|"
    r"\b(?:we|i) used to\b|"
    r"\b(?:we|i|they) never (?:\w+ed|had|did|was|were|got|saw|went|knew|ran|wrote|took)\b|"
    # what keeps happening, not what to do: "every time X is added we end up with two ways"
    r"\b(?:we|you|it|they) (?:always )?end(?:s)? up (?:with|having|doing)\b|"
    # "back in 2021 we switched…", "last sprint we decided on…", "we tried RabbitMQ before and
    # dropped it", "we were going to use Kafka"
    r"^back in (?:(?:early|late|mid)[- ])?(?:19|20)\d\d\b|"
    r"^last (?:sprint|week|month|quarter|year|time|release)\b|"
    r"\b(?:we|i|they) tried \w+(?:[ -]\w+)? (?:before|once|last \w+|a while (?:ago|back)|"
    r"years ago)\b|"
    r"\b(?:we|i|they) were (?:going|planning) to\b|"
    # how things are: "we currently run Postgres 13 on RDS"
    r"\b(?:we|i) (?:currently|presently) \w+\b|"
    r"^(?:currently|at the moment|as of (?:now|today)),? (?:we|our|the)\b",
    re.IGNORECASE,
)


# Work asked for at hand, not a standing choice: "can you change that query so it uses a join
# instead of two selects", "use the existing helper instead of the loop you wrote"
AT_HAND = re.compile(
    r"^(?:(?:hey|ok|okay|also|oh|and|so),? )?(?:can|could|would) you\b|"
    r"\byou (?:just )?(?:wrote|added|made|did|put in)\b|"
    r"\bin (?:that|the same) (?:function|method|file|test|class|query|component|loop)\b",
    re.IGNORECASE,
)


def is_user_decision(text: str) -> bool:
    """Whether a user's statement makes (or reverses) a choice."""
    if HEDGE.search(text) or ONCE.search(text) or AT_HAND.search(text):
        return False
    if USER_DECISION.search(text) or slot_colon(text):
        return True
    return has_reversal_cue(text) and bool(rejected_choices(text))


# What a request opens with: "Turn 3: refactor x.py" asks for work, it chooses nothing.
REQUEST_VERB = re.compile(
    r"(?:please )?(?:fix|refactor|add|run|write|update|implement|create|remove|delete|check|"
    r"look|investigate|rename|make|build|test|debug|review|clean|find|show|explain|read|open|"
    r"try|help)\b",
    re.IGNORECASE,
)


NUMBER_FIRST = re.compile(r"\d+(?:[.,]\d+)?\s*[a-z%]")
# What someone says after their name rather than a choice: a pronoun, a reply word or no word
SPOKEN = re.compile(
    r"[^\w\s`'\"(]|(?:i|i'll|i'm|i've|we|we're|we'll|you|he|she|they|ok|okay|lol|yes|yeah|yep|"
    r"sure|thanks|thx|agreed|same|\+1)(?![\w'])",
    re.IGNORECASE,
)
SLOT_WORDS = 3
SLOT_WORDS_WITH_NUMBER = 6
SLOT_CHOICE_WORDS = 10
SLOT_CHOICE_WORDS_WITH_NUMBER = 16


def slot_colon(text: str) -> bool:
    """A terse decision: ``Retries: exponential backoff``, ``For the frontend: React``."""
    match = SLOT_COLON.match(text)
    if match is None:
        return False
    slot, choice = match.group("slot"), match.group("choice")
    # longer when a number is the value: "Rate limit for the public API: 100 requests …"
    valued = NUMBER_FIRST.match(choice) is not None
    if len(slot.split()) > (SLOT_WORDS_WITH_NUMBER if valued else SLOT_WORDS):
        return False
    if re.search(r"\d", slot) or REQUEST_VERB.match(choice):  # "Step 2: fix the parser"
        return False
    if re.search(r"(?:error|exception|warning|failure|failed)$", slot, re.IGNORECASE):
        return False  # "getting ModuleNotFoundError: No module named 'yaml'"
    if " " not in slot and SPOKEN.match(choice):
        return False  # a line of a pasted chat: "Tom: 👍 finally", "Priya: I'll tell infra"
    longest = SLOT_CHOICE_WORDS_WITH_NUMBER if valued else SLOT_CHOICE_WORDS
    return slot.split()[0].lower() not in META_SLOTS and len(choice.split()) <= longest


PLAN_FIRST = re.compile(rf"{PLAN_OPENER}\b", re.IGNORECASE)


def classify_assistant(text: str) -> StatementKind:
    """The kind of an assistant's statement: decisions, plans and findings only."""
    if is_chatter(text):
        return StatementKind.CHATTER
    if FINDING.search(text):
        return StatementKind.FINDING
    if DONE.search(text):
        return StatementKind.TASK_DONE
    if PLAN_FIRST.match(text) and ASSISTANT_TASK.search(text):
        return StatementKind.TASK  # a plan's step, whatever it chooses: "Next I'll pin X to 4.67"
    if ASSISTANT_DECISION.search(text) and not HEDGE.search(text):
        return StatementKind.DECISION
    if ASSISTANT_TASK.search(text):
        return StatementKind.TASK
    return StatementKind.NONE


def make_statement(kind: StatementKind, text: str, speaker: Speaker) -> Statement:
    """A statement with its subject, rejected choices and reversal flag."""
    if speaker == "assistant" and kind in USER_ONLY:
        kind = StatementKind.NONE
    if kind not in EVENT_KIND:
        return Statement(kind=kind, text=text, speaker=speaker)
    negated = rejected_choices(text) if kind is StatementKind.DECISION else ()
    reverses = kind is StatementKind.DECISION and (bool(negated) or has_reversal_cue(text))
    return Statement(
        kind=kind,
        text=text,
        subject=decision_subject(text),
        negated=negated,
        reverses=reverses,
        speaker=speaker,
    )


# -- merging and splitting decisions ------------------------------------------------------------
def negative_only(statement: Statement) -> bool:
    """A decision that only turns away from something ("stop using X", "scratch the X")."""
    return (
        statement.kind is StatementKind.DECISION
        and bool(statement.negated)
        and not chosen(statement.text)
    )


def merge_reversals(found: list[Statement]) -> list[Statement]:
    """Join a bare rejection to the decision beside it: "Stop using X. Use Y." is one reversal.

    A bare rejection followed by a statement the rules gave no kind takes it in as what replaces
    the rejected choice: "Scratch the CSS-in-JS theme object. Plain CSS custom properties on
    :root." is one reversal, in both sentences' words.
    """
    merged: list[Statement] = []
    taken_in: Statement | None = None  # a rejection that took in its replacement takes no more
    for statement in found:
        previous = merged[-1] if merged else None
        if previous is not None and pairs_with(previous, statement):
            merged[-1] = joined(previous, statement)
        elif previous is not None and previous is not taken_in and replaced_by(previous, statement):
            merged[-1] = taken_in = with_replacement(previous, statement)
        else:
            merged.append(statement)
    return merged


def pairs_with(first: Statement, second: Statement) -> bool:
    """Whether two neighbouring decisions are one reversal (exactly one of them only rejects)."""
    both = first.kind is second.kind is StatementKind.DECISION
    return both and negative_only(first) != negative_only(second)


def joined(first: Statement, second: Statement) -> Statement:
    """The affirmative one's text, with the rejected choices and subject of both."""
    rejection, affirmation = (first, second) if negative_only(first) else (second, first)
    subject = decision_subject(f"{affirmation.text}. {rejection.text}")
    negated = tuple(dict.fromkeys(rejection.negated + affirmation.negated))
    return replace(affirmation, negated=negated, reverses=True, subject=subject)


def replaced_by(rejection: Statement, statement: Statement) -> bool:
    """Whether ``statement`` says what replaces a bare rejection's choice (a kindless sentence)."""
    return negative_only(rejection) and statement.kind is StatementKind.NONE


def with_replacement(rejection: Statement, replacement: Statement) -> Statement:
    """The rejection and the sentence after it as one reversal."""
    text = f"{rejection.text}; {replacement.text}"[:STATEMENT_MAX]
    return replace(rejection, text=text, subject=decision_subject(text), reverses=True)


def split_conjoined(statement: Statement) -> list[Statement]:
    """Two choices in one sentence: "use Postgres for persistence and Redis for caching"."""
    if statement.kind not in (StatementKind.DECISION, StatementKind.RULE):
        return [statement]
    halves = second_choice(statement)
    if halves:
        return halves
    match = CONJOINED.match(statement.text)
    if match is None or not names_a_choice(match.group("right"), match.group("head")):
        return [statement]
    left, right = (
        make_statement(statement.kind, match.group(side).strip(), statement.speaker)
        for side in ("left", "right")
    )
    return [left, *split_conjoined(right)]


# "keep the monorepo layout but move shared types into packages/types": a second choice.
SECOND_CHOICE = re.compile(
    rf"^(?P<left>.{{8,}}?),? but (?:also |then )?(?P<right>(?:move|put|store|use|keep|"
    rf"switch|split|adopt|go with) {DEICTIC}\S.{{4,}})$",
    re.IGNORECASE,
)


def second_choice(statement: Statement) -> list[Statement]:
    """A decision and a second choice after "but", as two decisions ([] when it is not that)."""
    match = SECOND_CHOICE.match(statement.text)
    if statement.kind is not StatementKind.DECISION or match is None:
        return []
    left = match.group("left").strip()
    classify = classify_assistant if statement.speaker == "assistant" else classify_user
    if classify(left) is not StatementKind.DECISION:
        return []
    right = match.group("right").strip()
    kind, speaker = StatementKind.DECISION, statement.speaker
    return [make_statement(kind, text, speaker) for text in (left, right)]


def names_a_choice(right: str, head: str) -> bool:
    """Whether the second half of "X for A and Y for B" opens with a verb or a named thing."""
    verb = re.match(r"(?:use|keep|go with|adopt) ", right, re.IGNORECASE)
    named = head[:1].isupper() or head.lower() in CATEGORY_OF or bool(re.search(r"[._+#]", head))
    return bool(verb) or named


# -- statements ---------------------------------------------------------------------------------
def pieces(text: object) -> Iterator[tuple[str, Unit]]:
    """Each statement's text with its unit, at most ``STATEMENTS_MAX``."""
    count = 0
    for unit in units(prepare(text)):
        for piece in split_unit(unit.text):
            yield piece, unit
            count += 1
            if count >= STATEMENTS_MAX:
                return


def statements(text: object, speaker: Speaker = "user") -> list[Statement]:
    """Everything a message states, each statement classified; bounded, never raises.

    Args:
        text: A user message or an assistant reply (``str``; ``bytes`` and other values are
            read leniently).
        speaker: ``"user"`` or ``"assistant"``: the assistant yields decisions, plans (tasks),
            completions and findings, never rules or preferences.

    Returns:
        At most ``STATEMENTS_MAX`` statements in order, questions and chatter included (their
        :attr:`Statement.event_kind` is ``None``).
    """
    who: Speaker = "assistant" if speaker == "assistant" else "user"
    found: list[Statement] = []
    groups: list[int] = []
    for piece, unit in pieces(text):
        kind, words = kind_and_text(piece, unit, who)
        for statement in split_conjoined(make_statement(kind, words, who)):
            found.append(statement)
            groups.append(unit.group)
    return merge_in_groups(found, groups)


# what is left of a sentence once a statement in it was taken out: a mark with nothing to mark
ORPHAN_MARKS = re.compile(r"(?:^|(?<=\s))[.,;:!?]+(?=\s|$)")


def without_preferences(text: str, said: Sequence[str] = ()) -> str:
    """``text`` with the preferences it states taken out; as it was when it states none.

    A preference is its speaker's own (their personal memory, :mod:`plait.state.recall`); the
    rest of what they said is the project's. ``said``: the words of preferences found in it
    otherwise (the drain's classifier), taken out too.
    """
    rules_found = [s.text for s in statements(text) if s.kind is StatementKind.PREFERENCE]
    found = [words for words in (*rules_found, *said) if words and words in text]
    if not found:
        return text
    for said in found:
        text = text.replace(said, " ")
    return " ".join(ORPHAN_MARKS.sub(" ", text).split())


def shared_turn(event: SessionEvent, said: Sequence[str] = ()) -> SessionEvent | None:
    """A team member's prompt as the project's recall keeps it: see :func:`without_personal`.

    The service owner's turns are kept whole, as before there were members: the owner's own
    recall reads them, and every recorded figure of the recall bench (whose user turns drain as
    prompts, with no capture to keep their preferences) was measured on them.
    """
    return event if event.member is None else without_personal(event, said)


def without_personal(event: SessionEvent, said: Sequence[str] = ()) -> SessionEvent | None:
    """A user's prompt with its preferences taken out (None: nothing else was in it).

    ``said``: preferences found in it beyond the rules' (:func:`without_preferences`). Any
    other event is returned as it is.
    """
    if event.kind is not EventKind.PROMPT or event.speaker == "assistant":
        return event
    summary = without_preferences(event.summary, said)
    body = without_preferences(event.body, said)
    if summary == event.summary and body == event.body:
        return event
    if not summary.strip() and not body.strip():
        return None
    return event.model_copy(update={"summary": summary or body[:200], "body": body})


# "The docs site uses MkDocs Material; keep it that way": the statement before is a decision.
CONFIRMATION = re.compile(
    r"^(?:so |and |please |let'?s )?(?:keep|leave) (?:it|that|things) (?:that way|like that|"
    r"as (?:it is|is)|unchanged)$|^(?:let'?s )?stick (?:with|to) (?:it|that)$",
    re.IGNORECASE,
)
STATUS_QUO = re.compile(r"\b(?:is|are|uses|runs on|lives in|stays|sits in|goes through)\b", re.I)


Pair = tuple[Statement, Statement]


def confirmed(previous: Statement, current: Statement) -> Pair:
    """A description of how things are, then "keep it that way": a decision."""
    describes = previous.kind is StatementKind.NONE and STATUS_QUO.search(previous.text)
    if describes and CONFIRMATION.match(current.text):
        previous = make_statement(StatementKind.DECISION, previous.text, previous.speaker)
    return previous, current


# The model saying it found something, with what it found in the next sentence.
ANNOUNCEMENT = re.compile(
    r"^(?:(?:ok(?:ay)?|aha|ah|right),? )?(?:found it|got it|found (?:the|a) "
    r"(?:bug|problem|issue|culprit|cause))$",
    re.IGNORECASE,
)
FOUND = (StatementKind.NONE, StatementKind.FINDING)


def announced(before: Statement, current: Statement) -> Pair:
    """The model announcing a find ("Found it."): the finding is the sentence after it."""
    announces = before.kind is StatementKind.FINDING and ANNOUNCEMENT.match(before.text)
    if announces and current.kind in FOUND:
        before = make_statement(StatementKind.NONE, before.text, before.speaker)
        current = make_statement(StatementKind.FINDING, current.text, current.speaker)
    return before, current


INSTEAD = re.compile(r"\binstead[.!]?$", re.IGNORECASE)


def alternative_of_rule(before: Statement, current: Statement) -> Pair:
    """What to do instead of what a rule forbids is the rule's, not a decision of its own.

    "Tests must not depend on the system clock; inject a clock instead." is one rule.
    """
    after_rule = before.kind is StatementKind.RULE and current.kind is StatementKind.DECISION
    if after_rule and INSTEAD.search(current.text):
        current = make_statement(StatementKind.NONE, current.text, current.speaker)
    return before, current


def after_rejection(before: Statement, statement: Statement) -> Pair:
    """A decision right after words that turn from a choice reverses it.

    "Poetry was a mistake. Back to plain pip-tools." and "nah, Celery's overkill. A plain
    asyncio TaskGroup will do.": the first sentence decides nothing, it names what the
    decision after it leaves (a decision before it is :func:`merge_reversals`' to join).
    """
    if statement.kind is not StatementKind.DECISION or before.kind is StatementKind.DECISION:
        return before, statement
    left = rejected_choices(before.text) + disparaged_choices(before.text)
    if left and not any(term in statement.text.lower() for term in left):
        negated = tuple(dict.fromkeys(statement.negated + left))
        statement = replace(statement, negated=negated, reverses=True)
    return before, statement


# Words that only stress the rule before them: "Every node must have a Span. No exceptions."
STRESS = re.compile(
    r"^(?:no exceptions|no excuses|period|full stop|non-?negotiable|(?:this is )?not optional|"
    r"i mean it|seriously)\b[.!,;:]*\s*",
    re.IGNORECASE,
)
RULES = (StatementKind.RULE, StatementKind.CONSTRAINT)


def stressed(before: Statement, current: Statement) -> Pair:
    """A rule stressed again ("No exceptions.") is the rule before it, not one of its own."""
    stress = STRESS.match(current.text)
    again = stress is not None and not STRONG_RULE.search(current.text[stress.end() :])
    if before.kind in RULES and current.kind in RULES and again:
        current = make_statement(StatementKind.NONE, current.text, current.speaker)
    return before, current


# What makes the statement before it a standing rule: "applies to every page you touch"
APPLIES = re.compile(r"^(?:this |that |it |which )?applies to (?:every|all|each|any)\b", re.I)


def applies_to_all(before: Statement, current: Statement) -> Pair:
    """A choice said to apply to every page (file, service…) is a rule (one, with its scope)."""
    if APPLIES.match(current.text) and before.kind in (StatementKind.DECISION, StatementKind.NONE):
        before = make_statement(StatementKind.RULE, before.text, before.speaker)
        current = make_statement(StatementKind.NONE, current.text, current.speaker)
    return before, current


# Undecided: "I keep going back and forth on whether the settings page should autosave."
DITHERING = re.compile(
    r"\b(?:back and forth|torn between|on the fence|can'?t decide|undecided)\b", re.I
)
# What ends the weighing with a choice: "Actually, let's just use RQ."
DECISIVE = re.compile(
    r"\b(?:let'?s|we'?ll|i'?ll|going with|decided|actually|final(?:ly)?|settled)\b", re.I
)


def weighed(before: Statement, current: Statement) -> Pair:
    """After the speaker says they are undecided, what follows weighs options (no second look).

    "I keep going back and forth on autosave. Autosave is nicer, but undo gets complicated."
    chooses nothing; "… Actually, let's just use RQ." does.
    """
    choosing = current.kind in (
        StatementKind.NONE,
        StatementKind.DECISION,
        StatementKind.PREFERENCE,
    )
    if choosing and DITHERING.search(before.text) and not DECISIVE.search(current.text):
        current = make_statement(StatementKind.OPTION, current.text, current.speaker)
    return before, current


# What neighbouring statements of one paragraph say together, read in this order
NEIGHBOUR_RULES = (
    confirmed,
    announced,
    alternative_of_rule,
    after_rejection,
    stressed,
    applies_to_all,
    weighed,
)


def with_neighbours(paragraph: list[Statement]) -> list[Statement]:
    """Each rule of :data:`NEIGHBOUR_RULES` over each pair of neighbours, then reversals joined."""
    result = list(paragraph)
    for rule in NEIGHBOUR_RULES:
        for index in range(1, len(result)):
            result[index - 1], result[index] = rule(result[index - 1], result[index])
    return merge_reversals(result)


def merge_in_groups(found: list[Statement], groups: list[int]) -> list[Statement]:
    """Read every paragraph's statements with their neighbours (:func:`with_neighbours`)."""
    merged: list[Statement] = []
    start = 0
    for index in range(1, len(found) + 1):
        if index == len(found) or groups[index] != groups[start]:
            merged.extend(with_neighbours(found[start:index]))
            start = index
    return merged


def promoted(found: list[Statement]) -> list[Statement]:
    """The statements that become session events (decisions, rules, tasks…)."""
    return [statement for statement in found if statement.event_kind is not None]


__all__ = [
    "SCAN_MAX",
    "STATEMENTS_MAX",
    "Speaker",
    "Statement",
    "StatementKind",
    "normalize",
    "promoted",
    "shared_turn",
    "statements",
    "unwrap_quotes",
    "without_personal",
    "without_preferences",
]
