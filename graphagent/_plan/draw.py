"""Draw a graph as SVG, offline: nodes in one column, in run order; other edges as side arcs.

Agents are a pipeline with loops, so one column reads top to bottom as the run goes: edges to the
next node are straight arrows, forward skips arc on the right, back edges (the loop) on the left,
and conditional edges are dashed. An edge may carry a label (the jump a hook declared that takes
it), and a legend under the graph says what the lines, colours and labels mean.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

from graphagent._core.records import MODEL_NODE, TOOLS_NODE

_BOX_H, _GAP, _CHAR_W, _ARC_STEP, _MARGIN = 30, 22, 7.2, 14, 12
_LABEL_SIZE, _LABEL_CHAR_W = 9, 5.6
_LEGEND_ROW = 16
_TERMINALS = ("__start__", "__end__")
_FILLS = {"terminal": "#ffffff", "engine": "#d6ecff", "hook": "#e8e4ff"}
_LEGEND = (
    ("line", "always taken"),
    ("dashed", "taken when the state says so"),
    ("engine", "the agent's own node (model, tools)"),
    ("hook", "a middleware hook"),
    ("label", "where a hook's jump_to=X leads"),
)
_SAMPLE_W = {"label": 52}  # the other samples (a line, a box) are 24 wide


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    conditional: bool
    label: str = ""
    """Shown beside the edge: the jump targets that take it (``"jump_to: end"``), or nothing."""


def svg(nodes: Sequence[str], edges: Sequence[Edge], notes: dict[str, str] | None = None) -> str:
    """An SVG drawing of ``nodes`` (in the order given) and ``edges``, with a legend; ``notes``
    adds a second, smaller line under a node's name (e.g. the wrappers around it)."""
    notes = notes or {}
    row = {node: i for i, node in enumerate(nodes)}
    arcs = [e for e in edges if e.source in row and e.target in row]
    left = [e for e in arcs if row[e.target] <= row[e.source]]
    right = [e for e in arcs if row[e.target] > row[e.source] + 1]
    width = max(_label_width(n, notes.get(n, "")) for n in nodes) + 24
    x0 = _MARGIN + max(_ARC_STEP * (len(left) + 1), _side_extent(left))
    graph_w = x0 + width + max(_ARC_STEP * (len(right) + 1), _side_extent(right)) + _MARGIN
    graph_h = _MARGIN + len(nodes) * (_BOX_H + _GAP)
    total_w = max(graph_w, _MARGIN * 2 + _legend_width())
    total_h = graph_h + len(_LEGEND) * _LEGEND_ROW + _MARGIN
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{total_w:.0f}" height="{total_h}" '
        f'viewBox="0 0 {total_w:.0f} {total_h}" font-family="sans-serif" font-size="12">',
        '<defs><marker id="arrow" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="7" '
        'markerHeight="7" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>',
    ]
    top = {n: _MARGIN + i * (_BOX_H + _GAP) for i, n in enumerate(nodes)}
    for node in nodes:
        parts.append(_box(node, notes.get(node, ""), x0, top[node], width))
    mid_x = x0 + width / 2
    for e in arcs:
        if row[e.target] == row[e.source] + 1:
            y1, y2 = top[e.source] + _BOX_H, top[e.target]
            parts.append(_line(f"M{mid_x},{y1} L{mid_x},{y2}", e.conditional))
            parts.append(_edge_label(e.label, mid_x + 5, (y1 + y2) / 2 + 3, "start"))
    for i, e in enumerate(left):
        parts.append(_arc(e, top, x0, -_ARC_STEP * (i + 1)))
    for i, e in enumerate(right):
        parts.append(_arc(e, top, x0 + width, _ARC_STEP * (i + 1)))
    parts.append(_legend(graph_h))
    parts.append("</svg>")
    return "\n".join(part for part in parts if part)


def _label_width(name: str, note: str) -> float:
    return max(len(name), len(note) * 0.85) * _CHAR_W


def _side_extent(arcs: Sequence[Edge]) -> float:
    """How far the arcs on one side reach, their labels included."""
    return max(
        (_apex(_ARC_STEP * (i + 1)) + 4 + len(e.label) * _LABEL_CHAR_W for i, e in enumerate(arcs)),
        default=0,
    )


def _apex(offset: float) -> float:
    """How far from the column an arc with control points at ``offset`` reaches (3/4 of it)."""
    return offset * 0.75


def _kind(node: str) -> str:
    if node in _TERMINALS:
        return "terminal"
    return "engine" if node in (MODEL_NODE, TOOLS_NODE) else "hook"


def _box(node: str, note: str, x: float, y: float, width: float) -> str:
    kind = _kind(node)
    shape = (
        f'<rect x="{x}" y="{y}" width="{width}" height="{_BOX_H}" '
        f'rx="{15 if kind == "terminal" else 6}" fill="{_FILLS[kind]}" stroke="#555"/>'
    )
    cx = x + width / 2
    if not note:
        return shape + _text(cx, y + _BOX_H / 2 + 4, node, 12)
    return shape + _text(cx, y + 13, node, 12) + _text(cx, y + 25, note, 9, fill="#444")


def _text(
    x: float, y: float, text: str, size: int, fill: str = "#000", anchor: str = "middle"
) -> str:
    return (
        f'<text x="{x}" y="{y}" text-anchor="{anchor}" font-size="{size}" fill="{fill}">'
        f"{escape(text)}</text>"
    )


def _edge_label(label: str, x: float, y: float, anchor: str) -> str:
    """An edge's label, on a white halo so the lines it crosses do not hide it."""
    if not label:
        return ""
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" text-anchor="{anchor}" font-size="{_LABEL_SIZE}" '
        f'fill="#333" stroke="#fff" stroke-width="3" paint-order="stroke">{escape(label)}</text>'
    )


def _arc(edge: Edge, top: Mapping[str, float], x: float, offset: float) -> str:
    y1 = top[edge.source] + _BOX_H / 2
    y2 = top[edge.target] + _BOX_H / 2
    side = x + offset
    path = _line(f"M{x},{y1} C{side},{y1} {side},{y2} {x},{y2}", edge.conditional)
    reach = _apex(offset) + (4 if offset > 0 else -4)
    label = _edge_label(edge.label, x + reach, (y1 + y2) / 2 + 3, "start" if offset > 0 else "end")
    return path + label


def _line(path: str, dashed: bool) -> str:
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    return f'<path d="{path}" fill="none" stroke="#555"{dash} marker-end="url(#arrow)"/>'


def _legend_width() -> float:
    return max(_SAMPLE_W.get(m, 24) + 6 + len(text) * _LABEL_CHAR_W for m, text in _LEGEND)


def _legend(y0: float) -> str:
    """One row per kind of mark: a sample of it, then what it means."""
    rows = []
    x = _MARGIN
    for i, (mark, text) in enumerate(_LEGEND):
        y = y0 + i * _LEGEND_ROW + _LEGEND_ROW / 2
        if mark in ("line", "dashed"):
            rows.append(_line(f"M{x},{y} L{x + 24},{y}", mark == "dashed"))
        elif mark == "label":
            rows.append(_edge_label("jump_to: X", x, y + 3, "start"))
        else:
            rows.append(
                f'<rect x="{x}" y="{y - 5}" width="24" height="10" rx="3" '
                f'fill="{_FILLS[mark]}" stroke="#555"/>'
            )
        rows.append(_text(x + _SAMPLE_W.get(mark, 24) + 6, y + 3, text, 9, "#333", "start"))
    return "".join(rows)
