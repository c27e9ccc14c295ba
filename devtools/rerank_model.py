"""Train the models that reorder a search's best turns (``plait/state/rerank_weights.json``).

``uv run python -m plait.devtools.rerank_model locomo10.recall.json``: LoCoMo, converted with
``datasets/convert_locomo.py`` (not shipped: CC BY-NC); without it, only the model with an agent
is fitted and the shipped one between people is kept. Each conversation's turns go into a
recall index with the configured recall embedder's vectors (each text once, cached on disk), and
each question is ranked by the first stage (:func:`plait.state.ranking.rank_turns` without the
models). Of its :data:`~plait.state.rerank.RERANK_POOL` best turns, those the question names as
evidence are the positives: a logistic regression over the first stage's score (as a share of
the best) and :data:`~plait.state.rerank.RERANK_FEATURES` is fitted to them.

A model is fitted for each kind of conversation (:class:`~plait.state.rerank.Reranker`):

- between people, on LoCoMo conversations 1-5 only (:data:`CHOOSE_ON`), judged on 6-10;
- with an agent, on plait's own sets (:data:`AGENT_SETS`; a user's turns are prompts there): one
  on coding sessions (:data:`CODING_SETS`, ``datasets/devlog.json`` and ``codelog2`` to
  ``codelog13``), one on chats with an assistant (:data:`CHAT_SETS`, ``chatlog1`` to
  ``chatlog8``) and one on both, for a group whose kind is not known.

Each model reads its own features (:data:`PEOPLE_FEATURES`, :data:`AGENT_FEATURES`). The sorter
that tells a group's kind (:class:`~plait.state.rerank.KindSorter`) is a logistic regression over
the turns' vectors of the same sets, coding sessions against chats.

Printed: recall@10 and NDCG@10 of the first stage and of the model, for each of the sets it is
fitted on held out once (a model fitted on the others) and for them all held out, for LoCoMo
6-10, and each agent set's logit by a sorter fitted on the others. ``--judge`` judges the shipped
models on a dataset (each turn by the model of its kind of conversation, and of its group's kind).
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from plait.adapters.backends.embedders import choice_for, open_embedder
from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.devtools.logistic import fit_logistic
from plait.devtools.recall import (
    DEFAULT_KIND,
    KIND_BY_SPEAKER,
    Conversation,
    load_dataset,
    ndcg_at_k,
    recall_at_k,
)
from plait.state.base.settings import Settings
from plait.state.ranking import TurnIndex, rank_turns
from plait.state.recall import IndexedTurn, TextEmbedder
from plait.state.rerank import (
    CHAT,
    CODING,
    RERANK_FEATURES,
    RERANK_POOL,
    RERANK_WEIGHTS,
    KindSorter,
    Reranker,
    RerankModel,
    best_of,
    conversation_kind,
    pool_features,
    with_agent_rows,
)

TARGET = Path(__file__).parents[1] / "state" / RERANK_WEIGHTS
DATASETS = Path(__file__).parents[1] / "datasets"
CHOOSE_ON = 5  # LoCoMo's first five conversations
# the sets the models of a user with an agent are fitted on: coding sessions and chats with an
# assistant, all read already (the blind sets that judged them, codelog14 to codelog26 and
# chatlog9 to chatlog22, are not among them: docs/benchmarks.md)
CODING_SETS = ("devlog", *(f"codelog{n}" for n in range(2, 14)))
CHAT_SETS = tuple(f"chatlog{n}" for n in range(1, 9))
AGENT_SETS = (*CODING_SETS, *CHAT_SETS)
# what each model reads beside the score: chosen by leaving one set out, among the features
# tried (docs/benchmarks.md, "Recall")
PEOPLE_FEATURES = RERANK_FEATURES[:6]
AGENT_FEATURES = (
    "length (log of its words, at most 3)",
    "its session's place among the pool's (log)",
    "is a user's prompt",
    "its own vector's cosine with the query",
    "is a user's prompt, the query asking what the agent said or found",
    "its own vector's cosine with the query, the query asking what the agent said or found",
)
L2 = 1e-3
STEPS = 2000
RATE = 0.5
K = 10
# the sorter: its penalty, and the group logit beyond which it tells a kind, from how many turns.
# Leaving each set out, every set's logit was 3.0 or more from 0 (coding 3.6 to 7.7, chats -3.0
# to -5.7) and over its first 20 turns all but one's 2.5 or more (chatlog2's -1.9)
SORTER_L2 = 1e-2
SORTER_MARGIN = 2.0
SORTER_FEWEST = 20


@dataclass(frozen=True)
class Asked:
    """One question's first-stage pool: its turns' ids, scores, features and kinds, its evidence.

    ``conversation``: which conversation (or set) it is of, for leaving one out; ``agent``: per
    turn, whether its session is one with an agent; ``kind``: its group's
    (:func:`~plait.state.rerank.conversation_kind`).
    """

    conversation: int
    ids: list[str]
    scores: np.ndarray
    features: np.ndarray
    agent: np.ndarray
    evidence: list[str]
    kind: str | None = None

    def shares(self) -> np.ndarray:
        """Each turn's first-stage score as a share of the pool's best."""
        return self.scores / best_of(self.scores)

    def labels(self) -> np.ndarray:
        """1 for a turn the question names as evidence."""
        wanted = set(self.evidence)
        return np.array([turn_id in wanted for turn_id in self.ids], dtype=float)

    def ranked_by(self, models: Reranker | None) -> list[str]:
        """The pool's ids in the first stage's order, or in the models'."""
        if models is None:
            return self.ids
        order = models.reorder(self.scores, self.features, self.agent, self.kind)[1]
        return [self.ids[i] for i in order]


def indexed_turns(conversation: Conversation) -> list[IndexedTurn]:
    """The conversation's turns as the recall index keeps them, one group per conversation.

    A user's turn is a prompt, as the recall bench records it; anyone else's a discovery.
    """
    return [
        IndexedTurn(
            id=turn.id,
            group_id=conversation.id,
            session=session.id,
            seq=position,
            said_at=session.started_at,
            kind=KIND_BY_SPEAKER.get(turn.speaker.lower(), DEFAULT_KIND).value,
            key="",
            text=turn.text,
        )
        for session, position, turn in conversation.turns()
    ]


async def asked(
    number: int,
    conversation: Conversation,
    embedder: TextEmbedder | None,
    sorter: KindSorter | None = None,
) -> tuple[TurnIndex, list[Asked]]:
    """A conversation's group, and each of its questions ranked by the first stage over it.

    ``sorter`` tells the group's kind (:func:`~plait.state.rerank.conversation_kind`).
    """
    turns = indexed_turns(conversation)
    index = InMemoryRecallIndex(vector_model=embedder.name if embedder else None)
    await index.add_turns(turns)
    if embedder is not None:
        jobs = await index.pending_embeddings(10**9)
        await index.store_vectors(jobs, await embedder.embed_passages([j.text for j in jobs]))
    group = index.group(conversation.id)
    kind = conversation_kind(group, sorter)
    found = []
    for question in conversation.questions:
        vector = await embedder.embed_query(question.text) if embedder else None
        pool = rank_turns(
            group,
            question.text,
            query_vector=vector,
            limit=RERANK_POOL,
            now=question.asked_at,
            rerank=False,
        )
        positions = [turn.position for turn in pool]
        found.append(
            Asked(
                conversation=number,
                ids=[group.ids[position] for position in positions],
                scores=np.array([turn.score for turn in pool]),
                features=pool_features(group, positions, vector, question.text),
                agent=with_agent_rows(group, positions),
                evidence=list(question.evidence),
                kind=kind,
            )
        )
    return group, found


def fit(questions: Sequence[Asked], names: Sequence[str]) -> RerankModel:
    """The model over these features (``names``) fitted on these questions' pools.

    A feature without a value (a turn's own cosine, words alone) counts as its mean.
    """
    shares = np.concatenate([q.shares() for q in questions])
    columns = [RERANK_FEATURES.index(name) for name in names]
    features = np.concatenate([q.features[:, columns] for q in questions])
    known = (~np.isnan(features)).sum(axis=0)
    means = np.nansum(features, axis=0) / np.maximum(known, 1)  # 0 for a feature never known
    features = np.where(np.isnan(features), means, features)
    x = np.column_stack([shares, features])
    y = np.concatenate([q.labels() for q in questions])
    raw, bias = fit_logistic(x, y, l2=L2, steps=STEPS, rate=RATE)
    return RerankModel(
        features=tuple(names),
        score_weight=round(float(raw[0]), 6),
        weights=tuple(round(float(w), 6) for w in raw[1:]),
        means=tuple(round(float(m), 6) for m in means),
        bias=round(bias + float(raw[1:] @ means), 6),
    )


def alone(model: RerankModel) -> Reranker:
    """One model for every kind of conversation (to judge it on pools of its own kind)."""
    return Reranker(between_people=model, with_an_agent=model)


def figures(ranked: Sequence[tuple[list[str], list[str]]]) -> tuple[float, float]:
    """Mean recall@10 and NDCG@10 of ranked ids, each with its question's evidence."""
    if not ranked:
        return 0.0, 0.0
    recall = sum(recall_at_k(ids, evidence, K) for ids, evidence in ranked) / len(ranked)
    ndcg = sum(ndcg_at_k(ids, evidence) for ids, evidence in ranked) / len(ranked)
    return recall, ndcg


def scored(questions: Sequence[Asked], models: Reranker | None) -> tuple[float, float]:
    """Mean recall@10 and NDCG@10 of the questions, ranked by the first stage or the models."""
    return figures([(q.ranked_by(models), q.evidence) for q in questions])


def compared(
    label: str, count: int, before: tuple[float, float], after: tuple[float, float]
) -> str:
    """One printed row: figures before and after."""
    return (
        f"{label} ({count} questions): recall@10 {before[0]:.3f} -> {after[0]:.3f}, "
        f"NDCG@10 {before[1]:.3f} -> {after[1]:.3f}"
    )


def line(label: str, questions: Sequence[Asked], models: Reranker | None) -> str:
    """One printed row: the first stage's figures and the models'."""
    return compared(label, len(questions), scored(questions, None), scored(questions, models))


def fitted_leaving_each_out(
    questions: Sequence[Asked], names: Sequence[str], features: Sequence[str]
) -> tuple[RerankModel, dict[int, RerankModel]]:
    """Print each set (or conversation) held out once, then fit on them all.

    ``names``: every set's, by its number (``Asked.conversation``). Returned: the model fitted on
    all, and per set the one fitted without it.
    """
    numbers = sorted({q.conversation for q in questions})
    held: dict[int, RerankModel] = {}
    for number in numbers:
        held[number] = fit([q for q in questions if q.conversation != number], features)
        held_out = [q for q in questions if q.conversation == number]
        print(line(f"{names[number]} held out", held_out, alone(held[number])))
    ranked = [(q.ranked_by(alone(held[q.conversation])), q.evidence) for q in questions]
    first = names[numbers[0]]
    last = names[numbers[-1]]
    print(
        compared(
            f"{first} to {last}, each held out",
            len(questions),
            scored(questions, None),
            figures(ranked),
        )
    )
    model = fit(questions, features)
    print(line(f"{first} to {last}, fitted on", questions, alone(model)))
    return model, held


def turn_vectors(group: TurnIndex) -> np.ndarray:
    """The recall embedder's vector of each of a group's turns that has one, one row each.

    As the group's mean vector reads them: utterances only (:meth:`TurnIndex.is_utterance`).
    """
    rows = group.vectors.rows
    if rows is None:
        return np.zeros((0, 0), dtype=np.float32)
    count = min(len(group), rows.shape[0])
    counted = group.vectors.present(count) & np.array(
        [group.is_utterance(position) for position in range(count)], dtype=bool
    )
    return rows[:count][counted]


def fit_sorter(groups: Sequence[TurnIndex], coding: Sequence[bool], embedder: str) -> KindSorter:
    """The sorter fitted on these groups' turn vectors: a coding group's 1, a chat's 0."""
    vectors = [turn_vectors(group) for group in groups]
    x = np.concatenate(vectors)
    y = np.concatenate([np.full(len(v), float(c)) for v, c in zip(vectors, coding, strict=True)])
    raw, bias = fit_logistic(x, y, l2=SORTER_L2, steps=STEPS, rate=RATE)
    return KindSorter(
        embedder=embedder,
        weights=tuple(round(float(w), 6) for w in raw),
        bias=round(bias, 6),
        margin=SORTER_MARGIN,
        fewest=SORTER_FEWEST,
    )


def sorted_leaving_each_out(
    groups: Sequence[TurnIndex], names: Sequence[str], coding: Sequence[bool], embedder: str
) -> tuple[KindSorter, list[str | None]]:
    """Print each group's logit by a sorter fitted on the others; the sorter on all, and kinds.

    Returned beside the sorter: each group's kind told by the one fitted without it.
    """
    kinds = []
    for number, (group, name) in enumerate(zip(groups, names, strict=True)):
        others = [i for i in range(len(groups)) if i != number]
        sorter = fit_sorter([groups[i] for i in others], [coding[i] for i in others], embedder)
        mean, count = group.vectors.mean_row()
        kind = conversation_kind(group, sorter)
        logit = sorter.logit(mean) if mean is not None else float("nan")
        print(f"{name} held out: {count} turn vectors, logit {logit:.2f}, told {kind}")
        kinds.append(kind)
    return fit_sorter(groups, coding, embedder), kinds


async def questions_of(
    conversations: Sequence[Conversation],
    embedder: TextEmbedder | None,
    sorter: KindSorter | None = None,
) -> list[Asked]:
    """Every question of these conversations, each numbered by its conversation."""
    return [
        q
        for number, conversation in enumerate(conversations)
        for q in (await asked(number, conversation, embedder, sorter))[1]
    ]


async def agent_models(
    embedder: TextEmbedder | None,
) -> tuple[RerankModel, RerankModel, RerankModel, KindSorter | None]:
    """The models with an agent (on both kinds, coding, chats) and the sorter, each printed."""
    conversations = [
        load_dataset(DATASETS / f"{name}.json").conversations[0] for name in AGENT_SETS
    ]
    pooled = [await asked(n, c, embedder) for n, c in enumerate(conversations)]
    coding = [name in CODING_SETS for name in AGENT_SETS]
    sorter: KindSorter | None = None
    kinds: list[str | None] = [None] * len(pooled)
    if embedder is not None:
        groups = [group for group, _ in pooled]
        sorter, kinds = sorted_leaving_each_out(groups, AGENT_SETS, coding, embedder.name)
    questions = [q for _, found in pooled for q in found]
    both, both_held = fitted_leaving_each_out(questions, AGENT_SETS, AGENT_FEATURES)
    kinded = [q for q in questions if coding[q.conversation]]
    coding_model, coding_held = fitted_leaving_each_out(kinded, AGENT_SETS, AGENT_FEATURES)
    chats = [q for q in questions if not coding[q.conversation]]
    chat_model, chat_held = fitted_leaving_each_out(chats, AGENT_SETS, AGENT_FEATURES)

    # every set held out, by the model of the kind its held-out sorter told (both: not told)
    def held_out(number: int) -> RerankModel:
        if kinds[number] == CODING:
            return coding_held.get(number, coding_model)
        if kinds[number] == CHAT:
            return chat_held.get(number, chat_model)
        return both_held[number]

    by_kind = [(q.ranked_by(alone(held_out(q.conversation))), q.evidence) for q in questions]
    print(
        compared(
            "every agent set held out, by its kind's model",
            len(questions),
            figures(
                [(q.ranked_by(alone(both_held[q.conversation])), q.evidence) for q in questions]
            ),
            figures(by_kind),
        )
    )
    return both, coding_model, chat_model, sorter


async def main() -> None:
    """Fit the models and write them, or (``--judge``) judge the shipped ones."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "dataset",
        type=Path,
        nargs="?",
        help="LoCoMo as convert_locomo.py writes it (without it the model between people is kept)",
    )
    parser.add_argument(
        "--judge", action="store_true", help="only judge the shipped models on this dataset"
    )
    args = parser.parse_args()
    if args.judge and args.dataset is None:
        parser.error("--judge needs a dataset")
    embedder = open_embedder(choice_for(Settings()))
    shipped = Reranker.from_json(TARGET.read_text())
    if args.dataset is None:
        people = shipped.between_people
    else:
        dataset = load_dataset(args.dataset)
        questions = await questions_of(dataset.conversations, embedder, shipped.sorter)
        if args.judge:
            print(line(args.dataset.name, questions, shipped))
            return
        chosen = [q for q in questions if q.conversation < CHOOSE_ON]
        names = [f"LoCoMo conversation {n + 1}" for n in range(CHOOSE_ON)]
        people = fitted_leaving_each_out(chosen, names, PEOPLE_FEATURES)[0]
        judged = [q for q in questions if q.conversation >= CHOOSE_ON]
        print(line(f"LoCoMo conversations {CHOOSE_ON + 1}-, judging", judged, alone(people)))
    both, coding, chat, sorter = await agent_models(embedder)
    models = Reranker(
        between_people=people, with_an_agent=both, coding=coding, chat=chat, sorter=sorter
    )
    TARGET.write_text(models.to_json(), encoding="utf-8")
    print(f"wrote {TARGET}")


if __name__ == "__main__":
    asyncio.run(main())
