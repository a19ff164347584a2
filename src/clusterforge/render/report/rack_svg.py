"""One rack elevation as SVG text, from elevation.rack_view()'s drawing coordinates (colours: theme.py).

Formatted in Python, one function per part of the drawing, instead of a Jinja2 template: a report draws every
rack (~4,700 at 512 SUs, each a few hundred elements), and the template's loops with autoescaping were most of
`clusterforge report`'s own time. The text is what templates/report/rack.svg.j2 wrote (autoescape, trim_blocks,
lstrip_blocks): every value from the Plan is HTML-escaped as Jinja2 escaped it (markupsafe), numbers are written
as ``str()`` writes them, to one decimal (``.1f``) where the template rounded.
"""

from __future__ import annotations

from typing import Any

from markupsafe import escape

from clusterforge.render.report.theme import FONT

__all__ = ["rack_svg"]


def _h(value: Any) -> str:
    """``{{ value }}`` under autoescape."""
    return str(escape(value))


def rack_svg(v: dict[str, Any]) -> str:
    parts = [_header(v)]
    parts += [_feed(f) for f in v["feeds"]]
    parts.append(_frame(v))
    parts += [_device(d) for d in v["devices"]]
    parts.append(_footer(v))
    return "".join(parts)


def _header(v: dict[str, Any]) -> str:
    width, height, name = v["width"], v["height"], _h(v["name"])
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" class="rack-svg" width="{width}" height="{height}"'
        f' viewBox="0 0 {width} {height}" font-family="{_h(FONT)}" role="img" aria-label="Rack elevation {name}">\n'
        f"<title>Rack {name}</title>\n"
        f'<rect x="0.5" y="0.5" width="{width - 1}" height="{height - 1}" rx="10" fill="#ffffff" stroke="#dde1e7"/>\n'
        f'<text x="12" y="28" font-size="17" font-weight="700" fill="#141b26">{name}</text>\n'
        f'<text x="12" y="48" font-size="11" fill="#5d6b7a">{_h(v["subtitle"])}</text>\n'
        f'<rect x="{width - 108}" y="16" width="96" height="22" rx="11" fill="{_h(v["cooling_colour"])}"/>\n'
        f'<text x="{width - 60}" y="31" font-size="11" font-weight="700" fill="#ffffff" text-anchor="middle">'
        f'{_h(v["cooling"])}-cooled</text>\n'
    )


def _feed(f: dict[str, Any]) -> str:
    x, y, w, h, colour, label = f["x"], f["y"], f["w"], f["h"], _h(f["colour"]), _h(f["label"])
    dashed = "" if f["present"] else ' stroke-dasharray="3 3"'
    fraction = f["load_fraction"]
    return (
        f"<g>\n<title>{label}</title>\n"
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="3" fill="{colour}" fill-opacity="0.10"'
        f' stroke="{colour}" stroke-width="1"{dashed}/>\n'
        f'<rect x="{x + 2}" y="{y + h - (h - 4) * fraction - 2:.1f}" width="{w - 4}"'
        f' height="{(h - 4) * fraction:.1f}" rx="2" fill="{colour}" fill-opacity="0.35"/>\n'
        f'<text transform="translate({x + w / 2 + 3.5} {y + h - 8}) rotate(-90)" font-size="9.5" font-weight="700"'
        f' fill="{colour}">{label}</text>\n</g>\n'
    )


def _frame(v: dict[str, Any]) -> str:
    frame, inner = v["frame"], v["inner"]
    right, u_x = inner.x + inner.w, v["u_x"]
    lines = [
        f'<rect x="{frame.x}" y="{frame.y}" width="{frame.w}" height="{frame.h}" rx="4" fill="#2b3340"/>\n'
        f'<rect x="{inner.x}" y="{inner.y}" width="{inner.w}" height="{inner.h}" fill="#f4f6f9"/>\n'
    ]
    for u in v["u_labels"]:
        y = u["y"]
        lines.append(
            f'<line x1="{inner.x}" y1="{y + 3.5}" x2="{right}" y2="{y + 3.5}" stroke="#e2e6ec" stroke-width="1"/>\n'
            f'<text x="{u_x}" y="{y}" font-size="8" fill="#8a94a6" text-anchor="end">{_h(u["u"])}</text>\n'
        )
    return "".join(lines)


def _device(d: dict[str, Any]) -> str:
    box, stroke, text = d["box"], _h(d["stroke"]), _h(d["text"])
    parts = [
        f'<g class="device {_h(d["kind"])}">\n<title>{_h(d["title"])}</title>\n'
        f'<rect x="{box.x}" y="{box.y}" width="{box.w}" height="{box.h}" rx="2" fill="{_h(d["fill"])}"'
        f' stroke="{stroke}" stroke-width="1"/>\n'
        f'<rect x="{box.x}" y="{box.y}" width="4" height="{box.h}" fill="{stroke}"/>\n'
    ]
    parts += [f'<rect x="{t.x}" y="{t.y:.1f}" width="{t.w}" height="{t.h}" rx="2" fill="{stroke}"'
              f' fill-opacity="0.75"/>' for t in d["gpu_tiles"]]  # one line, no newline (as the template)
    for line in d["lines"]:
        y, size = box.y + line["dy"], line["size"]
        bold = ' font-weight="700"' if line["bold"] else ""
        parts.append(f'<text x="{box.x + 10}" y="{y}" font-size="{size}"{bold} fill="{text}">{_h(line["left"])}'
                     "</text>\n")
        if line["right"]:
            parts.append(f'<text x="{box.x + box.w - 6}" y="{y}" font-size="{size - 0.5}" fill="{text}"'
                         f' fill-opacity="0.8" text-anchor="end">{_h(line["right"])}</text>')
    parts.append("</g>\n")
    return "".join(parts)


def _footer(v: dict[str, Any]) -> str:
    bar, footer_y, feeds = v["bar"], v["footer_y"], v["feeds"]
    x, y, w, h, budget_x = bar["x"], bar["y"], bar["w"], bar["h"], bar["budget_x"]
    faded = "" if feeds[1]["present"] else ' fill-opacity="0.2"'
    return (
        f'<text x="{x}" y="{footer_y + 10}" font-size="11" font-weight="700" fill="#141b26">Power</text>\n'
        f'<text x="{x + w}" y="{footer_y + 10}" font-size="11" fill="#141b26" text-anchor="end">'
        f'{_h(v["power_text"])}</text>\n'
        f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="3" fill="#eef0f3"/>\n'
        f'<rect x="{x}" y="{y}" width="{bar["fill_w"]:.1f}" height="{h}" rx="3" fill="{_h(bar["colour"])}"/>\n'
        f'<line x1="{budget_x:.1f}" y1="{y - 4}" x2="{budget_x:.1f}" y2="{y + h + 4}" stroke="#141b26"'
        f' stroke-width="2" stroke-dasharray="3 2"/>\n'
        f'<text x="{budget_x - 3:.1f}" y="{y + h + 12}" font-size="8.5" fill="#141b26" text-anchor="end">'
        "budget</text>\n"
        f'<text x="{x}" y="{footer_y + 56}" font-size="9.5" fill="#5d6b7a">{_h(v["capacity_text"])}</text>\n'
        f'<rect x="{x}" y="{footer_y + 64}" width="10" height="10" rx="2" fill="{_h(feeds[0]["colour"])}"/>\n'
        f'<rect x="{x + 13}" y="{footer_y + 64}" width="10" height="10" rx="2" fill="{_h(feeds[1]["colour"])}"'
        f"{faded}/>\n"
        f'<text x="{x + 29}" y="{footer_y + 73}" font-size="9.5" fill="#141b26">{_h(v["feeds_text"])}</text>\n'
        f'<circle cx="{x + 5}" cy="{footer_y + 86}" r="4" fill="{_h(v["weight_colour"])}"/>\n'
        f'<text x="{x + 13}" y="{footer_y + 89.5}" font-size="9.5" fill="#141b26">{_h(v["weight_text"])}</text>\n'
        f'<circle cx="{x + 150}" cy="{footer_y + 86}" r="4" fill="{_h(v["floor_colour"])}"/>\n'
        f'<text x="{x + 158}" y="{footer_y + 89.5}" font-size="9.5" fill="#141b26">{_h(v["floor_text"])}</text>\n'
        f'<text x="{x}" y="{footer_y + 105}" font-size="9.5" fill="#5d6b7a">{_h(v["phase_text"])}</text>\n'
        "</svg>\n"
    )
