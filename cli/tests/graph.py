#!/usr/bin/env python3
"""`olmv1 catalog graph` on real packages, checked as a person would check it.

* DOT and Mermaid carry every bundle and every edge: the edges are computed here again,
  independently, from the catalog's YAML (replaces, skips, and skipRange for the simple
  `>=A <B` ranges the packages below use) and compared pair by pair.
* The SVG of the largest packages stays readable (a page, not a 6000pt-wide strip).
* Headless Chromium opens the SVG: a screenshot of sensible size that is not blank, and,
  in a page that embeds the SVG, the node labels the browser actually laid out (text with
  a non-empty bounding box) include the versions and channels expected.

Usage: graph.py OLMV1_BINARY OUTPUT_DIR   (OLMV1_SHARED = shared/; the screenshots stay in
OUTPUT_DIR for a person to look at).
"""
import os
import re
import struct
import subprocess
import sys
import tempfile
import zlib

import yaml

BIN, OUT = sys.argv[1], sys.argv[2]
SHARED = os.environ.get("OLMV1_SHARED", os.path.join(os.path.dirname(__file__), "../../../shared"))
CATALOG = os.path.join(SHARED, "data/catalogs/certified-operators-v4.18")
failures = []


def check(name, ok, detail=""):
    if not ok:
        failures.append(f"{name}: {detail}")
        print(f"FAIL {name}: {detail}")


def olmv1(*args):
    return subprocess.run([BIN, *args], capture_output=True, text=True, timeout=120)


# ------------------------------------------------------------ the oracle

def parse_version(text):
    m = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", text)
    return tuple(int(x) for x in m.groups()) if m else None


def in_range(version, rng):
    """Only the `>=A <B` form (what the packages checked here use)."""
    m = re.fullmatch(r">=\s*(\S+)\s+<\s*(\S+)", rng.strip())
    assert m, f"the oracle does not read skipRange {rng!r}"
    return parse_version(m.group(1)) <= version < parse_version(m.group(2))


def expected_edges(package):
    docs = [d for d in yaml.safe_load_all(open(os.path.join(CATALOG, package, "catalog.yaml"))) if d]
    versions = {}
    for d in docs:
        if d.get("schema") == "olm.bundle":
            for p in d.get("properties", []):
                if p.get("type") == "olm.package":
                    versions[d["name"]] = parse_version(p["value"]["version"])
    nodes, edges = set(), set()
    channels = [d for d in docs if d.get("schema") == "olm.channel"]
    for ch in channels:
        nodes.update(e["name"] for e in ch["entries"])
    for ch in channels:
        for e in ch["entries"]:
            olds = [e["replaces"]] if e.get("replaces") else []
            olds += e.get("skips", [])
            if e.get("skipRange"):
                olds += [n for n in nodes if versions.get(n) and in_range(versions[n], e["skipRange"])]
            edges.update((o, e["name"]) for o in olds if o in nodes and o != e["name"])
    return nodes, edges, [c["name"] for c in channels]


def dot_graph(text):
    names = dict(re.findall(r'^  (b\d+) \[label=<.*?<FONT POINT-SIZE="9">([^<]+)</FONT>', text, re.M))
    edges = {(names[a], names[b]) for a, b in re.findall(r"^  (b\d+) -> (b\d+) \[style", text, re.M)}
    return set(names.values()), edges


def mermaid_graph(text):
    names = dict(re.findall(r'^  (b\d+)\["<b>[^<]*</b><br/><small>([^<]+)</small>', text, re.M))
    edges = {(names[a], names[b]) for a, b in re.findall(r"^  (b\d+) -\.?-?>(?:\|[^|]*\|)? (b\d+)$", text, re.M)}
    return set(names.values()), edges


# ------------------------------------------------------------ a PNG, read by hand

def png_pixels(path):
    """(width, height, rows of RGB(A) bytes) of an 8-bit RGB or RGBA PNG."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    assert depth == 8 and color in (2, 6), f"PNG depth {depth} colour type {color}"
    bpp = 3 if color == 2 else 4
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return w, h, rows, bpp


def chromium(*args):
    cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
           "--hide-scrollbars", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120)


def laid_out_text(svg_path):
    """The text of every SVG <text> the browser gave a non-empty box, one per line."""
    page = os.path.join(os.path.dirname(svg_path), "page.html")
    # The charset said, not guessed: a page without one is decoded by what Chromium detects in
    # the bytes it has when it starts parsing.  Once (under ASan, the machine loaded) the label
    # with the "…" of a collapsed run of versions was not found among 61 laid-out texts while
    # every ASCII label was: the likely cause, a detection that went another way.
    with open(page, "w", encoding="utf-8") as f:
        f.write("<!doctype html><html><head><meta charset=\"utf-8\"></head><body>" +
                open(svg_path, encoding="utf-8").read().split("?>", 1)[-1] +
                "<pre id=out></pre><script>document.getElementById('out').textContent = "
                "[...document.querySelectorAll('svg text')].filter(t => t.getBBox().width > 0)"
                ".map(t => t.textContent).join('\\n');</script></body></html>")
    dom = chromium("--virtual-time-budget=5000", "--dump-dom", "file://" + page).stdout
    m = re.search(r"<pre id=\"out\">(.*?)</pre>", dom, re.S)
    return m.group(1).replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") if m else ""


# ------------------------------------------------------------ the checks

def check_usage():
    r = olmv1("catalog", "graph", "--help")
    check("help", r.returncode == 0 and "Usage: olmv1 catalog graph" in r.stdout, r.stderr)
    check("no-package", olmv1("catalog", "graph", CATALOG).returncode == 2)
    check("bad-format", olmv1("catalog", "graph", "-o", "png", CATALOG, "x").returncode == 2)
    r = olmv1("catalog", "graph", CATALOG, "no-such-package")
    check("unknown-package", r.returncode == 3 and "no package \"no-such-package\"" in r.stderr, r.stderr)
    r = olmv1("catalog", "graph", "-c", "nope", CATALOG, "gpu-operator-certified")
    check("unknown-channel", r.returncode == 3 and "it has:" in r.stderr and " stable" in r.stderr, r.stderr)


def check_every_edge(package):
    nodes, edges, channels = expected_edges(package)
    r = olmv1("catalog", "graph", "-o", "dot", CATALOG, package)
    check(f"{package}-dot-rc", r.returncode == 0, r.stderr)
    got_nodes, got_edges = dot_graph(r.stdout)
    check(f"{package}-dot-nodes", got_nodes == nodes, f"{len(got_nodes)} vs {len(nodes)}")
    check(f"{package}-dot-edges", got_edges == edges,
          f"{len(got_edges)} vs {len(edges)}; missing {sorted(edges - got_edges)[:3]} extra {sorted(got_edges - edges)[:3]}")
    check(f"{package}-dot-channels", len(re.findall(r"^  c\d+ \[shape=note", r.stdout, re.M)) == len(channels))
    r = olmv1("catalog", "graph", "-o", "mermaid", CATALOG, package)
    got_nodes, got_edges = mermaid_graph(r.stdout)
    check(f"{package}-mermaid", r.returncode == 0 and got_nodes == nodes and got_edges == edges,
          f"{len(got_nodes)} nodes, {len(got_edges)} edges vs {len(nodes)}, {len(edges)}")
    return nodes, edges, channels


def check_channel_filter():
    r = olmv1("catalog", "graph", "-o", "dot", "-c", "v24.3", CATALOG, "gpu-operator-certified")
    nodes, _ = dot_graph(r.stdout)
    check("channel-filter", r.returncode == 0 and len(nodes) == 16 and "channel <B>stable</B>" not in r.stdout,
          f"{len(nodes)} nodes")


def check_picture(package, want_labels, shot_name):
    svg = os.path.join(OUT, shot_name + ".svg")
    png = os.path.join(OUT, shot_name + ".png")
    with open(svg, "w") as f:
        r = subprocess.run([BIN, "catalog", "graph", CATALOG, package], stdout=f, stderr=subprocess.PIPE, text=True)
    check(f"{package}-svg-rc", r.returncode == 0, r.stderr)
    text = open(svg).read()
    m = re.search(r'<svg width="(\d+)pt" height="(\d+)pt"', text)
    w, h = (int(m.group(1)), int(m.group(2))) if m else (0, 0)
    # Readable: no dimension beyond a few screens, and not a 6000pt strip.
    check(f"{package}-svg-size", 0 < w <= 2500 and 0 < h <= 4000, f"{w}x{h}pt")
    if os.path.exists(png):
        os.unlink(png)
    r = chromium("--window-size=1400,1000", "--screenshot=" + png, "file://" + svg)
    check(f"{package}-screenshot", os.path.exists(png), r.stderr[-300:])
    if os.path.exists(png):
        pw, ph, rows, bpp = png_pixels(png)
        check(f"{package}-screenshot-size", (pw, ph) == (1400, 1000), f"{pw}x{ph}")
        inked = sum(1 for row in rows for i in range(0, len(row), bpp * 4) if row[i:i + 3] != b"\xff\xff\xff")
        colours = {row[i:i + 3] for row in rows[::10] for i in range(0, len(row), bpp * 10)}
        share = inked / (pw * ph / 4)
        check(f"{package}-screenshot-not-blank", 0.01 < share < 0.9 and len(colours) > 3,
              f"{share:.3f} of the page inked, {len(colours)} colours")
        print(f"screenshot: {png} ({pw}x{ph}, {share:.1%} inked)")
    shown = laid_out_text(svg)
    for label in want_labels:
        check(f"{package}-shows-{label}", label in shown.split("\n") or label in shown,
              f"not among the {len(shown.splitlines())} laid-out texts")


def main():
    os.makedirs(OUT, exist_ok=True)
    check_usage()
    for package in ("gpu-operator-certified", "scaleops-operator", "k10-kasten-operator-rhmp"):
        check_every_edge(package)
    check_channel_filter()
    # scaleops-operator has the most bundles (69) of certified-operators-v4.18.
    check_picture("scaleops-operator", ["package", "scaleops-operator", "1.31.5", "1.30.20", "stable-v1.31",
                                        "1.30.0 \u2026 1.30.18", "14 bundles"], "graph-scaleops-operator")
    check_picture("gpu-operator-certified", ["26.3.2", "gpu-operator-certified.v1.10.0", "v26.3", "stable"],
                  "graph-gpu-operator-certified")
    print(f"{'FAIL' if failures else 'ok'}: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
