"""The flame graph's zoom, reset and search code, run under node against a stand-in DOM (no
browser here; see fixtures/flamegraph_dom.js). Skipped where node is not installed."""
from __future__ import annotations

import json
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import pytest

from conftest import HERE, SVG, run

NODE = shutil.which("node") or shutil.which("nodejs")


@pytest.mark.skipif(not NODE, reason="node is not installed")
def test_zoom_reset_and_search(dapprof, target, tmp_path):
    out_file = tmp_path / "graph.svg"
    out = run([dapprof, "record", "--pid", str(target.pid), "--duration", "1", "--idle",
               "-o", str(out_file)])
    assert out.returncode == 0, out.stderr
    root = ET.parse(out_file).getroot()
    script = root.find(SVG + "script").text
    groups = [g for g in root.iter(SVG + "g") if g.get("class") == "f"]
    frames = [{"attrs": dict(g.attrib), "rect": dict(g.find(SVG + "rect").attrib),
               "text": dict(g.find(SVG + "text").attrib), "title": g.find(SVG + "title").text}
              for g in groups]
    names = [g.get("data-n") for g in groups]
    zoom = next(i for i, n in enumerate(names) if n.startswith("mittel_schicht_ü ("))
    proc = subprocess.run([NODE, str(HERE / "fixtures" / "flamegraph_dom.js")],
                          input=json.dumps({"script": script, "frames": frames, "zoom": zoom,
                                            "search": "^leaf_spin"}),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)

    W, XPAD = 1200, 10
    x0 = [float(f["attrs"]["data-x"]) for f in frames]
    w0 = [float(f["attrs"]["data-w"]) for f in frames]
    d = [int(f["attrs"]["data-d"]) for f in frames]
    zx, zw, zd = x0[zoom], w0[zoom], d[zoom]
    z = result["zoomed"]
    assert result["unzoom_visible"]
    assert z[zoom]["x"] == pytest.approx(XPAD) and z[zoom]["w"] == pytest.approx(W - 2 * XPAD)
    for i, s in enumerate(z):
        inside = x0[i] >= zx - 1e-6 and x0[i] + w0[i] <= zx + zw + 1e-6
        if d[i] < zd and x0[i] <= zx + 1e-6 and x0[i] + w0[i] >= zx + zw - 1e-6:  # ancestor
            assert not s["hidden"] and s["parent"] and s["w"] == pytest.approx(W - 2 * XPAD)
        elif d[i] >= zd and inside:  # the zoomed frame and what it called, scaled
            scale = (W - 2 * XPAD) / zw
            assert not s["hidden"]
            assert s["x"] == pytest.approx(XPAD + (x0[i] - zx) * scale, abs=1e-3)
            assert s["w"] == pytest.approx(w0[i] * scale, abs=1e-3)
        else:
            assert s["hidden"], names[i]
    # Reset restores the original layout.
    for i, s in enumerate(result["reset"]):
        assert not s["hidden"] and not s["parent"]
        assert s["x"] == pytest.approx(x0[i], abs=1e-3) and s["w"] == pytest.approx(w0[i], abs=1e-3)
    # Search marks exactly the matching frames and reports their share of all samples.
    matched = [i for i, s in enumerate(result["searched"]) if s["matched"]]
    assert matched and all(names[i].startswith("leaf_spin") for i in matched)
    assert all(result["searched"][i]["matched"] for i, n in enumerate(names)
               if n.startswith("leaf_spin"))
    share = sum(w0[i] for i in matched) / (W - 2 * XPAD) * 100
    m = re.fullmatch(r"Matched: (\d+\.\d\d)% of samples", result["matched"])
    assert m and float(m.group(1)) == pytest.approx(share, abs=0.006), result["matched"]
    assert result["details"].startswith("all | ")
