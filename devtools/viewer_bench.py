"""``plait bench viewer``: the web viewer's page server time on a large project.

The viewer app of ``plait serve`` runs in process (httpx's ASGI transport: no socket, no
browser), so the figure is the server's time for a page, from request to the last byte.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import httpx

from plait.adapters.hosts.http import create_app
from plait.devtools.bench import Timing, percentiles, seed_session, timed
from plait.state.observations import OBSERVATION_TYPES, check_draft

if TYPE_CHECKING:
    from plait.memory import Memory

TOKEN = "bench-token"
SMALL_SESSIONS = 99
SMALL_SESSION_EVENTS = 20
WARM_UP = 3
# progress notes age out and session summaries condense: the others all stay
LASTING_TYPES = tuple(t for t in OBSERVATION_TYPES if t not in ("progress", "session_summary"))


async def seed_project(memory: Memory, events: int, observations: int) -> str:
    """One session of ``events`` events, 99 small ones, ``observations`` observations.

    Returns the big session's id.
    """
    for index in range(SMALL_SESSIONS):
        await seed_session(
            memory, f"ses_small_{index}", SMALL_SESSION_EVENTS, enqueue_group=memory.group_id
        )
    await seed_session(memory, "ses_big", events, enqueue_group=memory.group_id)
    for index in range(observations):
        draft = check_draft(
            title=f"Observation {index}: module_{index % 97} uses pattern {index % 13}",
            content=f"What: module_{index % 97} follows pattern {index % 13}. Why: case {index}.",
            type=LASTING_TYPES[index % len(LASTING_TYPES)],
            files=[f"src/module_{index % 97}.py"],
            topic_key=f"bench/observation-{index}",  # one each: no twin merges into another
        )
        await memory.observations.save(draft)
    return "ses_big"


async def logged_in(client: httpx.AsyncClient) -> None:
    """Log the client into the viewer with a one-time link."""
    headers = {"authorization": f"Bearer {TOKEN}"}
    link = (await client.post("/v1/viewer/login", headers=headers)).json()["path"]
    await client.get(link)


def page_paths(big_session: str, observation_id: str) -> dict[str, str]:
    """The pages measured, by name."""
    return {
        "sessions": "/ui/sessions",
        "session timeline (last page)": f"/ui/sessions/{big_session}",
        "session timeline (page 500)": f"/ui/sessions/{big_session}?page=500",
        "memory (newest)": "/ui/memory",
        "memory (page 50)": "/ui/memory?page=50",
        "memory search": "/ui/memory?q=module_42+pattern",
        "memory filtered (type, file)": "/ui/memory?type=decision&file=module_7",
        "observation": f"/ui/memory/{observation_id}",
        "recall": "/ui/recall?q=module_42+pattern",
        "knowledge graph (300 facts at most)": "/ui/graph?limit=300",
        "health": "/ui/health",
    }


async def bench_viewer(
    memory: Memory, *, events: int = 100_000, observations: int = 5_000, rounds: int = 50
) -> tuple[list[Timing], int]:
    """Seed the project, then time each page ``rounds`` times (after warm-up requests).

    Returns the timings and how many observations the project holds.
    """
    big = await seed_project(memory, events, observations)
    newest = await memory.observations.listed()
    app = create_app(memory, token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    timings = []
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        await logged_in(client)
        for name, path in page_paths(big, newest[-1].id).items():
            samples = []
            for round_ in range(rounds + WARM_UP):
                response: list[httpx.Response] = []

                async def get(path: str = path, into: list[httpx.Response] = response) -> None:
                    into.append(await client.get(path))

                elapsed = await timed(get)
                if response[0].status_code != 200 or re.search("Not logged in", response[0].text):
                    raise RuntimeError(f"{path}: {response[0].status_code}")
                if round_ >= WARM_UP:
                    samples.append(elapsed)
            timings.append(percentiles(name, samples))
    return timings, len(newest)


__all__ = ["bench_viewer"]
