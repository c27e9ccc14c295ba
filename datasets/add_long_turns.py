"""Add long off-topic turns to a recall dataset: LongMemEval's shape on data that lacks it.

LongMemEval's haystacks mix short user turns with long assistant answers; LoCoMo's and
REALTALK's turns are all short. This writes a copy of a dataset (any ``plait bench recall``
dataset) where each conversation also holds ``--sessions`` sessions of ``--turns`` long turns,
each turn ``--chunk`` consecutive turns of the *other* conversations joined: text in the same
register that answers none of the questions. The sessions fall at random times within the
conversation's span (``--seed``); the questions and their evidence are unchanged::

    uv run python datasets/add_long_turns.py /tmp/realtalk.json -o /tmp/realtalk.long.json
    uv run plait bench recall --dataset /tmp/realtalk.long.json

A dataset of one conversation has nothing to borrow from and is refused.
"""

from __future__ import annotations

import argparse
import random
from collections import Counter
from pathlib import Path

from plait.devtools.recall import (
    BenchSession,
    Conversation,
    Dataset,
    Turn,
    load_dataset,
    write_dataset,
)


def long_sessions(
    conversation: Conversation,
    others: list[Turn],
    rng: random.Random,
    *,
    sessions: int,
    turns: int,
    chunk: int,
) -> list[BenchSession]:
    """``sessions`` sessions of ``turns`` long turns borrowed from ``others``."""
    starts = [session.started_at for session in conversation.sessions]
    first, span = min(starts), max(starts) - min(starts)
    added = []
    for number in range(sessions):
        started = first + span * rng.random()
        long_turns = []
        for position in range(turns):
            at = rng.randrange(0, max(1, len(others) - chunk))
            text = "\n".join(turn.text for turn in others[at : at + chunk])
            turn_id = f"{conversation.id}:long{number}:{position}"
            long_turns.append(Turn(id=turn_id, speaker="assistant", text=text))
        added.append(BenchSession(id=f"long{number}", started_at=started, turns=long_turns))
    return added


def with_long_turns(
    dataset: Dataset, *, sessions: int = 30, turns: int = 6, chunk: int = 15, seed: int = 1
) -> Dataset:
    """The dataset with long off-topic sessions added to every conversation."""
    if len(dataset.conversations) < 2:
        raise ValueError("a dataset of one conversation has no other conversation to borrow from")
    rng = random.Random(seed)
    conversations = []
    for conversation in dataset.conversations:
        others = [
            turn
            for other in dataset.conversations
            if other.id != conversation.id
            for _, _, turn in other.turns()
        ]
        added = long_sessions(
            conversation, others, rng, sessions=sessions, turns=turns, chunk=chunk
        )
        merged = sorted([*conversation.sessions, *added], key=lambda s: s.started_at)
        conversations.append(conversation.model_copy(update={"sessions": merged}))
    return Dataset(name=f"{dataset.name}+long", conversations=conversations)


def main(argv: list[str] | None = None) -> None:
    """Read a dataset, write it with long turns added."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="a recall dataset JSON")
    parser.add_argument("-o", "--output", type=Path, required=True, help="dataset JSON to write")
    parser.add_argument("--sessions", type=int, default=30, help="long sessions per conversation")
    parser.add_argument("--turns", type=int, default=6, help="long turns per session")
    parser.add_argument("--chunk", type=int, default=15, help="borrowed turns per long turn")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    dataset = load_dataset(args.source)
    try:
        longer = with_long_turns(
            dataset, sessions=args.sessions, turns=args.turns, chunk=args.chunk, seed=args.seed
        )
    except ValueError as error:
        parser.error(str(error))
    added = Counter({"long turns added": args.sessions * args.turns * len(dataset.conversations)})
    write_dataset(longer, args.output, added)


if __name__ == "__main__":
    main()
