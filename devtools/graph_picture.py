"""plait's graphs laid out in layers with nothing drawn over anything else, for the notebooks.

A LangGraph graph's nodes are placed by grandalf's Sugiyama layout (layers top to bottom, the
order in each layer chosen to cross few edges); an edge that skips layers bends through a place
of its own in each layer it passes. Boxes are as wide as their names. :func:`overlaps` says what,
if anything, is drawn over something else (the notebook test checks there is nothing). grandalf
starts each layer in the order of a set of objects, so one layout may still run a line through
a box's corner where the next does not: :func:`picture` lays a graph out again until nothing is
on anything else. Needs the dev group (grandalf, matplotlib).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

CHAR_WIDTH = 7.5  # points per character of a node's name at the notebooks' font size
BOX_HEIGHT = 26.0
PADDING = 16.0
X_SPACE = 24.0
Y_SPACE = 60.0
PAIR_GAP = 5.0  # how far apart the two lines of a two-node cycle run
LAYOUT_TRIES = 20  # layouts tried for one with nothing on anything else (each about as likely)


@dataclass(frozen=True, slots=True)
class Box:
    """A node: its name and its rectangle (centre, width, height)."""

    name: str
    x: float
    y: float
    w: float
    h: float

    def holds(self, point: tuple[float, float], margin: float = 1.0) -> bool:
        """Whether ``point`` lies inside the box, more than ``margin`` from its edge."""
        px, py = point
        half_w, half_h = self.w / 2 - margin, self.h / 2 - margin
        return abs(px - self.x) < half_w and abs(py - self.y) < half_h

    def meets(self, other: Box) -> bool:
        """Whether two boxes overlap."""
        return abs(self.x - other.x) * 2 < self.w + other.w and abs(self.y - other.y) * 2 < (
            self.h + other.h
        )


@dataclass(frozen=True, slots=True)
class Line:
    """An edge as drawn: from its source's box to its target's, through ``points``."""

    source: str
    target: str
    points: tuple[tuple[float, float], ...]
    routed: bool  # chosen by a router (a conditional edge)


@dataclass(frozen=True, slots=True)
class Picture:
    """The boxes and lines of one graph, in points, y growing downwards."""

    boxes: dict[str, Box] = field(default_factory=dict)
    lines: list[Line] = field(default_factory=list)


@dataclass
class _VertexView:
    w: float
    h: float
    xy: tuple[float, float] = (0.0, 0.0)


@dataclass
class _EdgeView:
    points: list[tuple[float, float]] = field(default_factory=list)
    head_angle: float = 0.0

    def setpath(self, points: list[Any]) -> None:
        self.points = [(float(x), float(y)) for x, y in points]


def picture(graph: Any, *, xray: bool = False) -> Picture:
    """Lay out a compiled graph (``graph.get_graph(xray=…)``): its boxes and its lines.

    The first of :data:`LAYOUT_TRIES` layouts with nothing drawn over anything else, else the
    last one.
    """
    drawing = _laid_out(graph, xray)
    for _ in range(LAYOUT_TRIES - 1):
        if not overlaps(drawing):
            break
        drawing = _laid_out(graph, xray)
    return drawing


def _laid_out(graph: Any, xray: bool) -> Picture:
    """One layout of a compiled graph by grandalf."""
    from grandalf.graphs import Edge, Graph, Vertex  # the dev group's
    from grandalf.layouts import SugiyamaLayout
    from grandalf.routing import route_with_lines

    drawn = graph.get_graph(xray=xray)
    vertices = {name: Vertex(name) for name in drawn.nodes}
    for name, vertex in vertices.items():
        vertex.view = _VertexView(w=len(name) * CHAR_WIDTH + PADDING, h=BOX_HEIGHT)
    edges = []
    for drawn_edge in drawn.edges:
        edge = Edge(vertices[drawn_edge.source], vertices[drawn_edge.target])
        edge.view = _EdgeView()
        edges.append((drawn_edge, edge))
    layout = Graph(list(vertices.values()), [edge for _, edge in edges])
    offset = 0.0
    for component in layout.C:
        sugiyama = SugiyamaLayout(component)
        sugiyama.xspace, sugiyama.yspace = X_SPACE, Y_SPACE
        sugiyama.route_edge = route_with_lines
        roots = [v for v in component.sV if v.data == "__start__"]
        sugiyama.init_all(roots=roots or None)
        sugiyama.draw()
        placed = list(component.sV)
        left = min(v.view.xy[0] - v.view.w / 2 for v in placed)
        shift = offset - left
        for vertex in placed:
            x, y = vertex.view.xy
            vertex.view.xy = (x + shift, y)
        for _, edge in edges:
            if edge.v[0] in placed:
                edge.view.points = [(x + shift, y) for x, y in edge.view.points]
        offset = max(v.view.xy[0] + v.view.w / 2 for v in placed) + X_SPACE * 2
    boxes = {
        name: Box(name, v.view.xy[0], v.view.xy[1], v.view.w, v.view.h)
        for name, v in vertices.items()
    }
    pairs = {(e.source, e.target) for e, _ in edges}
    for drawn_edge, edge in edges:  # a cycle of two: its two lines side by side, not on each other
        if (drawn_edge.target, drawn_edge.source) in pairs:
            side = PAIR_GAP if drawn_edge.source < drawn_edge.target else -PAIR_GAP
            edge.view.points = [(x + side, y) for x, y in edge.view.points]
    lines = [
        Line(
            source=drawn_edge.source,
            target=drawn_edge.target,
            points=tuple(edge.view.points) or _straight(boxes, drawn_edge),
            routed=bool(drawn_edge.conditional),
        )
        for drawn_edge, edge in edges
    ]
    return Picture(boxes=boxes, lines=lines)


def _straight(boxes: dict[str, Box], edge: Any) -> tuple[tuple[float, float], ...]:
    """A line from centre to centre (an edge the layout gave no path)."""
    source, target = boxes[edge.source], boxes[edge.target]
    return ((source.x, source.y), (target.x, target.y))


def overlaps(drawing: Picture, samples: int = 40) -> list[str]:
    """What is drawn over something else: boxes that meet, a line on another or through a box."""
    found = []
    boxes = list(drawing.boxes.values())
    for index, box in enumerate(boxes):
        found += [f"{box.name} / {other.name}" for other in boxes[index + 1 :] if box.meets(other)]
    drawn = {line.points: line for line in drawing.lines}
    for line in drawing.lines:
        twin = drawn.get(tuple(reversed(line.points)))
        if twin is not None and (line.source, line.target) < (twin.source, twin.target):
            found.append(f"{line.source} -> {line.target} on {twin.source} -> {twin.target}")
    for line in drawing.lines:
        ends = {line.source, line.target}
        for (x0, y0), (x1, y1) in zip(line.points, line.points[1:], strict=False):
            along = [
                (x0 + (x1 - x0) * t / samples, y0 + (y1 - y0) * t / samples)
                for t in range(1, samples)
            ]
            crossed = {
                b.name for b in boxes if b.name not in ends and any(b.holds(p) for p in along)
            }
            found += [f"{line.source} -> {line.target} through {name}" for name in sorted(crossed)]
    return found


def draw(drawing: Picture, title: str, ax: Any = None) -> Any:
    """Draw a picture with matplotlib: solid lines always run, dashed orange ones are routed."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

    if ax is None:
        width = max(b.x + b.w / 2 for b in drawing.boxes.values()) / 72 + 1
        height = max(b.y + b.h / 2 for b in drawing.boxes.values()) / 72 + 1
        ax = plt.subplots(figsize=(max(width, 4), max(height, 3)))[1]
    for line in drawing.lines:
        colour = "#e6550d" if line.routed else "#444444"
        dashes: Literal["--", "-"] = "--" if line.routed else "-"
        xs, ys = zip(*line.points, strict=True)
        ax.plot(xs[:-1], ys[:-1], linewidth=1, color=colour, linestyle=dashes)
        head = FancyArrowPatch(
            line.points[-2], line.points[-1], arrowstyle="-|>", mutation_scale=10, color=colour
        )
        head.set_linestyle(dashes)
        ax.add_patch(head)
    for box in drawing.boxes.values():
        colour = "#d9d9d9" if box.name.startswith("__") else "#9ecae1"
        corner = (box.x - box.w / 2, box.y - box.h / 2)
        shape = FancyBboxPatch(corner, box.w, box.h, boxstyle="round,pad=0", color=colour)
        ax.add_patch(shape)
        ax.text(box.x, box.y, box.name, ha="center", va="center", fontsize=8)
    ax.set_title(title)
    ax.set_aspect("equal")
    ax.invert_yaxis()
    ax.autoscale_view()
    ax.axis("off")
    return ax


__all__ = ["Box", "Line", "Picture", "draw", "overlaps", "picture"]
