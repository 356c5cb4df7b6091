"""Checks that a picture is well-formed and prints what it draws.

SVG: parses the XML and prints the title, the figures under it, the time
axis's ticks and caption, and per rank group its boxes as "CLASS@START-END"
in simulated time (from x and width at the plot's scale; a later chunk's
class as "F+chunk1"), so a test fails when a box moves, changes kind or
goes missing.
Trace: parses the JSON and prints, per process and thread, its complete
events as "NAME@START-END" in milliseconds.
"""

import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
LEFT, PLOT = 70.0, 960.0


def number(text):
    value = round(float(text), 2)
    return f"{value:g}"


def svg(path):
    root = ET.parse(path).getroot()
    texts = root.findall(f"{SVG}text")
    print(f"title: {texts[0].text}")
    print(f"figures: {texts[1].text}")
    axis = [g for g in root.iter(f"{SVG}g") if g.get("class") == "time-axis"]
    end = float(axis[0].get("data-end"))
    ticks = [t.text for t in axis[0].iter(f"{SVG}text")
             if t.get("class") == "tick"]
    caption = [t.text for t in axis[0].iter(f"{SVG}text")
               if t.get("class") == "caption"]
    print(f"axis: {' '.join(ticks)} | {caption[0]}")
    scale = PLOT / end
    for group in root.iter(f"{SVG}g"):
        if group.get("class") != "rank":
            continue
        boxes = []
        for rect in group.iter(f"{SVG}rect"):
            cls = rect.get("class")
            if cls in ("lane", "hatch"):
                continue
            cls = cls.replace(" ", "+")
            start = (float(rect.get("x")) - LEFT) / scale
            width = float(rect.get("width"))
            end = start + (width / scale if width > 2 else 0)
            boxes.append(f"{cls}@{number(start)}-{number(end)}")
        lines = group.findall(f"{SVG}polyline")
        print(f"{group.get('id')}: {' '.join(boxes)} | memory lines "
              f"{len(lines)}")
    legend = [g for g in root.iter(f"{SVG}g") if g.get("class") == "legend"]
    kinds = [r for r in legend[0].findall(f"{SVG}rect")
             if r.get("class") != "hatch"]
    print(f"legend: {len(kinds)} kinds")


def trace(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    names = {}
    rows = {}
    for event in data["traceEvents"]:
        key = (event["pid"], event.get("tid", 0))
        if event["ph"] == "M" and event["name"] == "thread_name":
            names[key] = event["args"]["name"]
        elif event["ph"] == "X":
            start = event["ts"] / 1000
            end = start + event["dur"] / 1000
            rows.setdefault(key, []).append(
                f"{event['name']}@{start:g}-{end:g}")
    for key in sorted(rows):
        print(f"pid {key[0]} {names[key]}: {' '.join(rows[key])}")


if __name__ == "__main__":
    (svg if sys.argv[1].endswith(".svg") else trace)(sys.argv[1])
