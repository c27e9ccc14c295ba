"""plait's graphs drawn in layers: no box on another, no line through a box or on another line."""

from __future__ import annotations

import pytest

from plait.devtools.graph_picture import Box, Line, Picture, overlaps, picture
from plait.graphs import cache_refresh, compaction, drain, hooks


@pytest.mark.parametrize(
    ("graph", "xray"),
    [
        (hooks.graph, False),
        (hooks.graph, True),
        (compaction.graph, False),
        (drain.graph, False),
        (cache_refresh.graph, False),
    ],
)
def test_each_graph_is_drawn_with_nothing_over_anything(graph: object, xray: bool) -> None:
    drawing = picture(graph, xray=xray)
    assert set(drawing.boxes) == set(graph.get_graph(xray=xray).nodes)  # type: ignore[attr-defined]
    assert len(drawing.lines) == len(graph.get_graph(xray=xray).edges)  # type: ignore[attr-defined]
    assert overlaps(drawing) == []


def test_overlaps_names_boxes_that_meet_and_lines_through_a_box() -> None:
    boxes = {
        "a": Box("a", 0, 0, 40, 20),
        "b": Box("b", 10, 5, 40, 20),  # on top of a
        "c": Box("c", 0, 100, 40, 20),
        "d": Box("d", 0, 200, 40, 20),
    }
    through_c = Line("a", "d", ((0, 10), (0, 190)), routed=False)
    back = Line("d", "a", ((0, 190), (0, 10)), routed=True)  # on top of a -> d
    drawing = Picture(boxes=boxes, lines=[through_c, back])
    assert overlaps(drawing) == [
        "a / b",
        "a -> d on d -> a",
        "a -> d through c",
        "d -> a through c",
    ]
