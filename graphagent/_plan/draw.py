"""Draw a graph as SVG, offline: nodes in one column, in run order; other edges as side arcs.

Agents are a pipeline with loops, so one column reads top to bottom as the run goes: edges to the
next node are straight arrows, forward skips arc on the right, back edges (the loop) on the left,
and conditional edges are dashed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape

_BOX_H, _GAP, _CHAR_W, _ARC_STEP, _MARGIN = 30, 22, 7.2, 14, 12


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    conditional: bool


def svg(nodes: Sequence[str], edges: Sequence[Edge], notes: dict[str, str] | None = None) -> str:
    """An SVG drawing of ``nodes`` (in the order given) and ``edges``; ``notes`` adds a second,
    smaller line under a node's name (e.g. the wrappers around it)."""
    notes = notes or {}
    row = {node: i for i, node in enumerate(nodes)}
    arcs = [e for e in edges if e.source in row and e.target in row]
    left = [e for e in arcs if row[e.target] <= row[e.source]]
    right = [e for e in arcs if row[e.target] > row[e.source] + 1]
    width = max(_label_width(n, notes.get(n, "")) for n in nodes) + 24
    x0 = _MARGIN + _ARC_STEP * (len(left) + 1)
    total_w = x0 + width + _ARC_STEP * (len(right) + 1) + _MARGIN
    total_h = _MARGIN * 2 + len(nodes) * (_BOX_H + _GAP)
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
    for i, e in enumerate(left):
        parts.append(_arc(e, top, x0, -_ARC_STEP * (i + 1)))
    for i, e in enumerate(right):
        parts.append(_arc(e, top, x0 + width, _ARC_STEP * (i + 1)))
    parts.append("</svg>")
    return "\n".join(parts)


def _label_width(name: str, note: str) -> float:
    return max(len(name), len(note) * 0.85) * _CHAR_W


def _box(node: str, note: str, x: float, y: float, width: float) -> str:
    terminal = node in ("__start__", "__end__")
    fill = "#ffffff" if terminal else ("#e8e4ff" if "." in node else "#d6ecff")
    shape = (
        f'<rect x="{x}" y="{y}" width="{width}" height="{_BOX_H}" rx="{15 if terminal else 6}" '
        f'fill="{fill}" stroke="#555"/>'
    )
    cx = x + width / 2
    if not note:
        return shape + _text(cx, y + _BOX_H / 2 + 4, node, 12)
    return shape + _text(cx, y + 13, node, 12) + _text(cx, y + 25, note, 9, fill="#444")


def _text(x: float, y: float, text: str, size: int, fill: str = "#000") -> str:
    return (
        f'<text x="{x}" y="{y}" text-anchor="middle" font-size="{size}" fill="{fill}">'
        f"{escape(text)}</text>"
    )


def _arc(edge: Edge, top: Mapping[str, float], x: float, offset: float) -> str:
    y1 = top[edge.source] + _BOX_H / 2
    y2 = top[edge.target] + _BOX_H / 2
    side = x + offset
    return _line(f"M{x},{y1} C{side},{y1} {side},{y2} {x},{y2}", edge.conditional)


def _line(path: str, dashed: bool) -> str:
    dash = ' stroke-dasharray="4 3"' if dashed else ""
    return f'<path d="{path}" fill="none" stroke="#555"{dash} marker-end="url(#arrow)"/>'
