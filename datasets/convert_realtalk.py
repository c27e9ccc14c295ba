"""Convert REALTALK (``data/Chat_*.json``) into a recall dataset for ``plait bench recall``.

REALTALK (Lee et al., 2025, "REALTALK: A 21-Day Real-World Dataset for Long-Term
Conversation", arXiv 2502.13270) is LoCoMo's real-world sequel by the same group: ten
conversations between people who messaged each other for 21 days, 18-25 sessions each, with
memory-probing questions whose ``evidence`` names the messages (``"D3:12"``) that answer them.
Its repository (github.com/danny911kr/REALTALK) states no licence, so plait neither ships the
files nor their conversion: fetch ``data/Chat_*.json`` from it, convert, keep the output out of
git::

    uv run python datasets/convert_realtalk.py REALTALK/data -o /tmp/realtalk.json
    uv run plait bench recall --dataset /tmp/realtalk.json

(the folder, or the ``Chat_*.json`` files themselves).

How REALTALK maps onto the dataset format (:mod:`plait.devtools.recall`):

- one :class:`Conversation` per file (id the file's name, ``Chat_1_Emi_Elise``), one
  :class:`BenchSession` per ``session_N``, started at its ``session_N_date_time``
  (``"29.12.2023, 22:42:04"``, day first, taken as UTC);
- turn ids are the conversation id and the message's dialog id (``Chat_1_Emi_Elise:D1:6``); the
  speaker is the person's name, the text the message's ``clean_text`` (a shared photo has no
  caption in the data; a message with no text is left out and counted);
- categories are LoCoMo's labels, which REALTALK keeps: 1 multi-hop, 2 temporal, 3 open-domain;
- evidence is repaired where the intent is plain (``"D5:12;D5:16"``, ``"D12:3-D12:5"``,
  ``"D5:3."``); an id naming no message (REALTALK's dialog ids skip the messages its cleaning
  removed) is dropped, and a question left without evidence is skipped. What was dropped is
  reported on stderr.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from plait.devtools.recall import (
    BenchSession,
    Conversation,
    Dataset,
    Question,
    Turn,
    locomo_question,
    write_dataset,
)

SESSION_KEY = re.compile(r"^session_(?P<number>\d+)$")
DATE_FORMAT = "%d.%m.%Y, %H:%M:%S"


def session_time(text: str) -> datetime:
    """``"29.12.2023, 22:42:04"`` as a UTC datetime."""
    return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def sessions_of(chat_id: str, chat: dict[str, Any], dropped: Counter[str]) -> list[BenchSession]:
    """The chat's sessions in order, each with its date-time and the messages that have text."""
    numbers = sorted(int(match["number"]) for key in chat if (match := SESSION_KEY.match(key)))
    sessions = []
    for number in numbers:
        turns = []
        for raw in chat[f"session_{number}"]:
            text = str(raw.get("clean_text") or "").strip()
            if not text:
                dropped["messages without text"] += 1
                continue
            turns.append(Turn(id=f"{chat_id}:{raw['dia_id']}", speaker=raw["speaker"], text=text))
        if turns:
            started = session_time(chat[f"session_{number}_date_time"])
            sessions.append(BenchSession(id=f"s{number}", started_at=started, turns=turns))
    return sessions


def questions_of(
    chat_id: str, chat: dict[str, Any], known: set[str], dropped: Counter[str]
) -> list[Question]:
    """The chat's questions with evidence that names known messages."""
    questions = []
    for index, raw in enumerate(chat.get("qa", []), start=1):
        question = locomo_question(chat_id, index, raw, known, dropped)
        if question is not None:
            questions.append(question)
    return questions


def convert(chats: dict[str, dict[str, Any]]) -> tuple[Dataset, Counter[str]]:
    """The recall dataset of REALTALK's chats (by conversation id), and what was left out."""
    dropped: Counter[str] = Counter()
    conversations = []
    for chat_id, chat in chats.items():
        sessions = sessions_of(chat_id, chat, dropped)
        known = {turn.id for session in sessions for turn in session.turns}
        questions = questions_of(chat_id, chat, known, dropped)
        conversations.append(Conversation(id=chat_id, sessions=sessions, questions=questions))
    return Dataset(name="realtalk", conversations=conversations), dropped


def main(argv: list[str] | None = None) -> None:
    """Read REALTALK's chat files, write the recall dataset, say what was left out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "sources", type=Path, nargs="+", help="REALTALK's data/Chat_*.json, or its data folder"
    )
    parser.add_argument("-o", "--output", type=Path, required=True, help="dataset JSON to write")
    args = parser.parse_args(argv)
    paths = [
        found
        for source in args.sources
        for found in (sorted(source.glob("Chat_*.json")) if source.is_dir() else [source])
    ]
    if not paths:
        parser.error("no Chat_*.json in " + ", ".join(map(str, args.sources)))
    chats = {path.stem: read_chat(parser, path) for path in sorted(paths, key=chat_number)}
    dataset, dropped = convert(chats)
    write_dataset(dataset, args.output, dropped)


def read_chat(parser: argparse.ArgumentParser, path: Path) -> dict[str, Any]:
    """One chat file, or the parser's error naming the file and what is wrong with it."""
    try:
        chat = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        parser.error(f"{path}: cannot read: {error.strerror or error}")
    except json.JSONDecodeError as error:
        parser.error(f"{path}: not JSON: {error}")
    if not isinstance(chat, dict) or not any(SESSION_KEY.match(key) for key in chat):
        parser.error(f"{path}: not a REALTALK chat (no session_N lists)")
    return chat


def chat_number(path: Path) -> tuple[int, str]:
    """``Chat_10_…`` sorts after ``Chat_9_…``."""
    match = re.match(r"Chat_(\d+)", path.name)
    return (int(match[1]) if match else 0, path.name)


if __name__ == "__main__":
    main()
