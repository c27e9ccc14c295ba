"""Convert LoCoMo (``locomo10.json``) into a recall dataset for ``plait bench recall``.

LoCoMo (Maharana et al., ACL 2024, "Evaluating Very Long-Term Conversational Memory of LLM
Agents") holds 10 conversations between two people, each up to 35 dated sessions, with
question-answer pairs whose ``evidence`` names the dialog turns (``"D1:3"``: session 1, turn 3)
that answer them. Its licence is CC BY-NC 4.0, so plait does not ship the file or its conversion:
get ``data/locomo10.json`` from the LoCoMo repository (sha256 ``79fa87e9…8ff4``), convert it and
keep the output out of git::

    uv run python datasets/convert_locomo.py locomo10.json -o /tmp/locomo10.recall.json
    uv run plait bench recall --dataset /tmp/locomo10.recall.json

How LoCoMo maps onto the dataset format (:mod:`plait.devtools.recall`):

- one :class:`Conversation` per LoCoMo sample (id ``conv-26`` …), one :class:`BenchSession` per
  session, started at the session's date-time (``"1:56 pm on 8 May, 2023"``, taken as UTC);
- turn ids are the sample id and LoCoMo's dialog id (``conv-26:D1:3``); the speaker stays the
  person's name (the harness turns names into discovery events, which drain, and keeps the name
  nowhere else), the text is what they said; a shared photo adds its caption
  (``[shares a photo: …]``) unless ``--no-captions``. ``--speaker-prefix`` writes the text as
  ``"Name: what they said"``, so the name reaches the index as it would in a transcript;
- categories are named as the data's labels read (the paper lists them in another order):
  1 multi-hop, 2 temporal, 3 open-domain, 4 single-hop, 5 adversarial. Adversarial questions ask
  about something the conversation does not say; their evidence is the turn they twist. They are
  kept (as their own category) unless ``--skip-adversarial``;
- malformed evidence is repaired where the intent is plain (``"D8:6; D9:17"``, ``"D:11:26"``,
  ``"D30:05"``); evidence naming no turn is dropped, and a question left without evidence is
  skipped. What was dropped is reported on stderr.
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

ADVERSARIAL = 5
SESSION_KEY = re.compile(r"^session_(?P<number>\d+)$")
DATE_FORMAT = "%I:%M %p on %d %B, %Y"


def session_time(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as a UTC datetime."""
    return datetime.strptime(text.strip(), DATE_FORMAT).replace(tzinfo=UTC)


def turn_text(raw: dict[str, Any], *, captions: bool, speaker_prefix: bool) -> str:
    """What was said, with the caption of a shared photo and the speaker's name if asked for."""
    text = raw.get("text", "").strip()
    caption = raw.get("blip_caption")
    if captions and caption:
        text = f"{text} [shares a photo: {caption}]".strip()
    return f"{raw['speaker']}: {text}" if speaker_prefix else text


def sessions_of(
    sample: dict[str, Any], *, captions: bool, speaker_prefix: bool
) -> list[BenchSession]:
    """The sample's sessions in order, each with its date-time and turns."""
    conversation = sample["conversation"]
    numbers = sorted(
        int(match["number"]) for key in conversation if (match := SESSION_KEY.match(key))
    )
    return [
        BenchSession(
            id=f"s{number}",
            started_at=session_time(conversation[f"session_{number}_date_time"]),
            turns=[
                Turn(
                    id=f"{sample['sample_id']}:{raw['dia_id']}",
                    speaker=raw["speaker"],
                    text=turn_text(raw, captions=captions, speaker_prefix=speaker_prefix),
                )
                for raw in conversation[f"session_{number}"]
            ],
        )
        for number in numbers
        if conversation[f"session_{number}"]
    ]


def questions_of(
    sample: dict[str, Any], known: set[str], *, skip_adversarial: bool, dropped: Counter[str]
) -> list[Question]:
    """The sample's questions with evidence that names known turns."""
    questions = []
    for index, raw in enumerate(sample["qa"], start=1):
        if skip_adversarial and raw["category"] == ADVERSARIAL:
            dropped["adversarial questions skipped"] += 1
            continue
        question = locomo_question(sample["sample_id"], index, raw, known, dropped)
        if question is not None:
            questions.append(question)
    return questions


def convert(
    samples: list[dict[str, Any]],
    *,
    captions: bool = True,
    speaker_prefix: bool = False,
    skip_adversarial: bool = False,
) -> tuple[Dataset, Counter[str]]:
    """The recall dataset of LoCoMo's samples, and counts of what was left out."""
    dropped: Counter[str] = Counter()
    conversations = []
    for sample in samples:
        sessions = sessions_of(sample, captions=captions, speaker_prefix=speaker_prefix)
        known = {turn.id for session in sessions for turn in session.turns}
        conversations.append(
            Conversation(
                id=sample["sample_id"],
                sessions=sessions,
                questions=questions_of(
                    sample, known, skip_adversarial=skip_adversarial, dropped=dropped
                ),
            )
        )
    return Dataset(name="locomo10", conversations=conversations), dropped


def main(argv: list[str] | None = None) -> None:
    """Read LoCoMo, write the recall dataset, say what was left out."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("source", type=Path, help="LoCoMo's locomo10.json")
    parser.add_argument("-o", "--output", type=Path, required=True, help="dataset JSON to write")
    parser.add_argument("--no-captions", action="store_true", help="leave out photo captions")
    parser.add_argument(
        "--speaker-prefix", action="store_true", help='turn text as "Name: what they said"'
    )
    parser.add_argument("--skip-adversarial", action="store_true", help="drop category 5")
    args = parser.parse_args(argv)
    samples = json.loads(args.source.read_text(encoding="utf-8"))
    dataset, dropped = convert(
        samples,
        captions=not args.no_captions,
        speaker_prefix=args.speaker_prefix,
        skip_adversarial=args.skip_adversarial,
    )
    write_dataset(dataset, args.output, dropped)


if __name__ == "__main__":
    main()
