"""Convert LongMemEval (``longmemeval_s*.json``) into a recall dataset for ``plait bench recall``.

LongMemEval (Wu et al., ICLR 2025, "Benchmarking Chat Assistants on Long-Term Interactive
Memory") asks 500 questions, each over its own haystack of user-assistant chat sessions (about
50 in the ``_s`` file, about 500 in ``_m``); the turns that hold the answer carry
``"has_answer": true``. It is MIT-licensed, but plait does not ship it (about 270 MB): get the
file from the authors' release, convert it, keep the output out of git::

    uv run python datasets/convert_longmemeval.py longmemeval_s_cleaned.json -o lme.json
    uv run plait bench recall --dataset lme.json

How LongMemEval maps onto the dataset format (:mod:`plait.devtools.recall`):

- one :class:`Conversation` per question (its own haystack), id the ``question_id``; one
  :class:`BenchSession` per haystack session, started at its date (``"2023/05/20 (Sat) 02:21"``,
  taken as UTC), in the haystack's order;
- turn ids are ``question_id:session_id:position``; the speaker is the role (``user``,
  ``assistant``), the text the content as it is: long assistant turns are not cut here;
- the evidence is every turn with ``has_answer``; a question with none (the abstention
  questions, ``…_abs``, whose answer is nowhere) is skipped and counted;
- the category is the ``question_type`` (``multi-session``, ``temporal-reasoning``,
  ``knowledge-update``, ``single-session-user`` …); the question is asked at its
  ``question_date``, so "two weeks ago" in it counts from then, not from the day of the run;
- ``--split dev`` keeps the questions whose id hashes even, ``--split test`` the others: choose
  parameters on one, judge on the other. ``--limit N`` keeps the first N questions of each
  category (a haystack of 50 sessions is about 500 turns: all 500 questions are ~250,000 turns).
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plait.devtools.recall import BenchSession, Conversation, Dataset, Question, Turn, write_dataset

DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"
SPLITS = ("all", "dev", "test")


def session_time(text: str) -> datetime:
    """``"2023/05/20 (Sat) 02:21"`` as a UTC datetime."""
    return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def in_split(question_id: str, split: str) -> bool:
    """Whether a question belongs to the split (a stable hash of its id: even is dev)."""
    if split == "all":
        return True
    even = hashlib.sha256(question_id.encode()).digest()[0] % 2 == 0
    return even == (split == "dev")


def conversation_of(item: dict[str, Any], dropped: Counter[str]) -> Conversation | None:
    """One question and its haystack, or None when no turn of it holds the answer."""
    qid = str(item["question_id"])
    sessions, evidence = [], []
    haystack = zip(
        item["haystack_session_ids"], item["haystack_dates"], item["haystack_sessions"], strict=True
    )
    for session_id, date, raw_turns in haystack:
        turns = []
        for position, raw in enumerate(raw_turns):
            text = str(raw.get("content", "")).strip()
            if not text:
                dropped["empty turns"] += 1
                continue
            turn = Turn(id=f"{qid}:{session_id}:{position}", speaker=raw["role"], text=text)
            turns.append(turn)
            if raw.get("has_answer"):
                evidence.append(turn.id)
        if turns:
            started = session_time(date)
            sessions.append(BenchSession(id=str(session_id), started_at=started, turns=turns))
    if not evidence:
        dropped["questions without an answer turn (abstention)"] += 1
        return None
    asked = item.get("question_date")
    question = Question(
        id=qid,
        text=item["question"],
        evidence=evidence,
        category=item["question_type"],
        asked_at=session_time(asked) if asked else None,
    )
    return Conversation(id=qid, sessions=sessions, questions=[question])


def convert(
    items: list[dict[str, Any]], *, split: str = "all", limit: int | None = None
) -> tuple[Dataset, Counter[str]]:
    """The recall dataset of LongMemEval's questions, and counts of what was left out."""
    dropped: Counter[str] = Counter()
    taken: defaultdict[str, int] = defaultdict(int)
    conversations = []
    for item in items:
        if not in_split(str(item["question_id"]), split):
            continue
        category = item["question_type"]
        if limit is not None and taken[category] >= limit:
            dropped[f"over --limit ({category})"] += 1
            continue
        conversation = conversation_of(item, dropped)
        if conversation is not None:
            taken[category] += 1
            conversations.append(conversation)
    return Dataset(name=f"longmemeval-{split}", conversations=conversations), dropped


def main(argv: list[str] | None = None) -> None:
    """Read LongMemEval, write the recall dataset, say what was left out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="longmemeval_s.json (or _m, _oracle)")
    parser.add_argument("-o", "--output", type=Path, required=True, help="dataset JSON to write")
    parser.add_argument("--split", choices=SPLITS, default="all", help="dev: even id hashes")
    parser.add_argument("--limit", type=int, help="at most this many questions per category")
    args = parser.parse_args(argv)
    items = json.loads(args.source.read_text(encoding="utf-8"))
    dataset, dropped = convert(items, split=args.split, limit=args.limit)
    write_dataset(dataset, args.output, dropped)


if __name__ == "__main__":
    main()
