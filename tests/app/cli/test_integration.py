"""record as other programs drive it: Mercurial's py-spy backend, and being killed."""
from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from conftest import CHECKS, DEBIAN_PYTHON, HERE, read_line, run, wait_until

HARNESS = HERE / "fixtures" / "hg_harness.py"


@pytest.mark.parametrize("fmt", [None, "speedscope", "raw"])
def test_mercurial_calling_convention(dapprof, tmp_path, fmt):
    out_file = tmp_path / "hg-profile"
    out = run([DEBIAN_PYTHON, str(HARNESS), dapprof, str(out_file), *([fmt] if fmt else [])])
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout.splitlines()[-1])
    assert result["returncode"] == 0, out.stderr
    assert result["first_line"].startswith("dapprof> Sampling process "), result
    assert "warning" not in out.stderr  # Mercurial asks for --native, which is supported
    assert "Stopped sampling: interrupted (SIGINT)" in out.stderr
    text = out_file.read_text(encoding="utf-8")
    if fmt == "raw":
        assert any("hg_command_work (" in line for line in text.splitlines()), text
    elif fmt == "speedscope":
        import jsonschema
        doc = json.loads(text)
        jsonschema.validate(doc, json.loads((HERE / "speedscope-schema.json").read_text()))
        assert any(f["name"] == "hg_command_work" for f in doc["shared"]["frames"])
    else:  # py-spy's default, a flame graph
        import xml.etree.ElementTree as ET
        root = ET.fromstring(text.encode("utf-8"))
        names = [g.get("data-n") or "" for g in root.iter("{http://www.w3.org/2000/svg}g")]
        assert any(n.startswith("hg_command_work (") for n in names)


def read_counter(path: Path) -> int:
    def value():
        try:
            text = path.read_text().strip()
        except FileNotFoundError:
            return None
        return int(text) if text else None
    return wait_until(lambda: value(), 10, "the counter file")


def test_sigkill_during_blocking_record_leaves_target_running(dapprof, start_target, tmp_path):
    counter = tmp_path / "counter"
    target = start_target("--counter", str(counter))
    for attempt in range(3):
        proc = subprocess.Popen([dapprof, "record", "--pid", str(target.pid), "--rate", "1000",
                                 "-o", str(tmp_path / f"killed{attempt}.svg")],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert read_line(proc.stdout, 30).startswith("dapprof> Sampling")
        time.sleep(0.3)
        proc.kill()
        proc.communicate(timeout=30)
        time.sleep(0.1)
        states = "".join(proc_state_of_task(target.pid, t) for t in tasks(target.pid))
        assert "t" not in states and "T" not in states, f"target left stopped: {states}"
        before = read_counter(counter)
        wait_until(lambda: read_counter(counter) >= before + 3, 10, "the target to keep counting")
    assert target.proc.poll() is None


def tasks(pid: int) -> list[str]:
    return [t.name for t in Path(f"/proc/{pid}/task").iterdir()]


def proc_state_of_task(pid: int, tid: str) -> str:
    stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
    return stat[stat.rindex(")") + 2]


def test_sigterm_stops_and_writes(dapprof, target, tmp_path):
    out_file = tmp_path / "term.json"
    proc = subprocess.Popen([dapprof, "record", "--pid", str(target.pid), "--format",
                             "chrometrace", "-o", str(out_file)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    read_line(proc.stdout, 30)
    time.sleep(0.5)
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err
    assert "interrupted (SIGTERM)" in err
    CHECKS["chrometrace"](out_file.read_text(encoding="utf-8"))
