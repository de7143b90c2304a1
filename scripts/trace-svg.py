#!/usr/bin/env python3
"""Draws a `vkcnn profile --trace` file (Chrome's trace-event format) as an SVG timeline.

Perfetto and chrome://tracing are the tools to explore a trace; this script makes a still picture
of one for documents (the README's), with the standard library only. One row per track (process and
thread of the trace), one box per complete event ("ph": "X") coloured by the kind of layer its name
says, waits (barriers, launches) in grey, a time axis in microseconds or milliseconds, and the names
of the boxes wide enough to hold them.

usage: trace-svg.py TRACE.json OUT.svg [--width PIXELS] [--title TEXT]
"""
import argparse
import html
import json
import sys

ROW, AXIS, LEFT, LABEL_PX = 46, 34, 210, 6.2
KINDS = [  # (first words of a layer's name, colour): most specific first
    (("wait",), "#c8c8c8"),
    (("conv", "gemm", "matmul", "fc", "linear", "classifier", "features"), "#4e79a7"),
    (("pool", "avgpool", "maxpool", "global"), "#f28e2b"),
    (("relu", "clip", "sigmoid", "neuron", "add", "mul", "hardswish"), "#59a14f"),
    (("concat", "reshape", "flatten", "transpose", "to_tensor", "to_image"), "#b07aa1"),
    (("softmax", "reduce", "norm"), "#e15759"),
    (("level",), "#76b7b2"),
]
OTHER = "#9c755f"


def colour(name, category):
    if category == "wait":
        return KINDS[0][1]
    lowered = name.lower()
    for words, fill in KINDS:
        if any(w in lowered for w in words):
            return fill
    return OTHER


def read_trace(path):
    try:
        with open(path, encoding="utf-8") as f:
            trace = json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        sys.exit(f"trace-svg.py: TRACE.json '{path}' is not a trace file: {e}")
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    names, boxes = {}, []
    for e in events:
        track = (e.get("pid", 0), e.get("tid", 0))
        if e.get("ph") == "M" and e.get("name") in ("process_name", "thread_name"):
            names.setdefault(track, {})[e["name"]] = e.get("args", {}).get("name", "")
        elif e.get("ph") == "X":
            boxes.append((track, float(e["ts"]), float(e.get("dur", 0)), e.get("name", ""),
                          e.get("cat", "")))
    if not boxes:
        sys.exit(f"trace-svg.py: TRACE.json '{path}' has no complete events (\"ph\": \"X\")")
    return names, boxes


def axis_step(span):
    for step in (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000):
        if span / step <= 10:
            return step
    return span / 10


def draw(names, boxes, width, title):
    tracks = sorted({b[0] for b in boxes})
    start = min(b[1] for b in boxes)
    span = max(b[1] + b[2] for b in boxes) - start or 1.0
    scale = (width - LEFT - 20) / span
    height = AXIS + ROW * len(tracks) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="8" y="16" font-size="13" font-weight="bold">{html.escape(title)}</text>']
    step, unit = axis_step(span), "µs"
    divisor = 1000 if step >= 1000 else 1
    if divisor > 1:
        unit = "ms"
    tick = 0.0
    while tick <= span:
        x = LEFT + tick * scale
        out.append(f'<line x1="{x:.1f}" y1="{AXIS - 6}" x2="{x:.1f}" y2="{height - 24}" '
                   'stroke="#eeeeee"/>')
        out.append(f'<text x="{x:.1f}" y="{AXIS - 9}" text-anchor="middle" fill="#555">'
                   f'{tick / divisor:g} {unit}</text>')
        tick += step
    for row, track in enumerate(tracks):
        y = AXIS + row * ROW
        label = names.get(track, {})
        for k, key in enumerate(("process_name", "thread_name")):
            out.append(f'<text x="8" y="{y + 18 + 14 * k}" fill="#333">'
                       f'{html.escape(label.get(key, str(track))[:32])}</text>')
        for t, ts, dur, name, category in boxes:
            if t != track:
                continue
            x, w = LEFT + (ts - start) * scale, max(dur * scale, 0.6)
            out.append(f'<rect x="{x:.2f}" y="{y + 6}" width="{w:.2f}" height="{ROW - 12}" '
                       f'fill="{colour(name, category)}" stroke="white" stroke-width="0.3">'
                       f'<title>{html.escape(name)}: {dur:.1f} µs</title></rect>')
            if category != "wait" and w > LABEL_PX * 4:
                text = name[: int(w / LABEL_PX)]
                out.append(f'<text x="{x + 2:.2f}" y="{y + ROW / 2 + 4:.1f}" fill="white">'
                           f'{html.escape(text)}</text>')
    legend = [("convolution / matrix", KINDS[1][1]), ("pooling", KINDS[2][1]),
              ("neuron / arithmetic", KINDS[3][1]), ("layout", KINDS[4][1]),
              ("softmax / reduction", KINDS[5][1]), ("other", OTHER),
              ("wait (barrier or launch)", KINDS[0][1])]
    x = LEFT
    for text, fill in legend:
        out.append(f'<rect x="{x}" y="{height - 18}" width="10" height="10" fill="{fill}"/>')
        out.append(f'<text x="{x + 14}" y="{height - 9}" fill="#333">{text}</text>')
        x += 14 + LABEL_PX * len(text) + 14
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("trace", metavar="TRACE.json")
    parser.add_argument("out", metavar="OUT.svg")
    parser.add_argument("--width", type=int, default=1100, help="picture width in pixels")
    parser.add_argument("--title", default="", help="a title above the timeline")
    args = parser.parse_args()
    if args.width < LEFT + 100:
        parser.error(f"--width {args.width} leaves no room for the timeline (at least {LEFT + 100})")
    names, boxes = read_trace(args.trace)
    try:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(draw(names, boxes, args.width, args.title))
    except OSError as e:
        sys.exit(f"trace-svg.py: OUT.svg '{args.out}' could not be written: {e}")


if __name__ == "__main__":
    main()
