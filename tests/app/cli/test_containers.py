"""dump and record of programs in a container: CPython 3.13, 3.14 and 3.15 of the Debian unstable
root, each in a PID and mount namespace of its own (tests/support/in_root.c --pid), as Docker and
Kubernetes run them. The program knows its threads by its namespace's TIDs; dapprof must match
them to the host's (NSpid), or a thread working without the GIL reads as idle and no native
stack can be unwound."""
from __future__ import annotations

import collections
import json
import subprocess
from pathlib import Path

import pytest

import conftest  # noqa: F401 (puts tests/support on sys.path)
import containers  # noqa: E402 (tests/support, on sys.path through conftest)
import pythons  # noqa: E402

PROGRAM = Path(__file__).resolve().parents[2] / "fixtures" / "hashing.py"
VERSIONS = ["3.13", "3.14", "3.15"]
TIMEOUT = 60


@pytest.fixture(scope="module", params=VERSIONS)
def box(request):
    interp = pythons.find(f"sid-{request.param}")
    if interp is None:
        pytest.skip(pythons.missing_reason(f"sid-{request.param}"))
    with containers.Container(interp, [str(PROGRAM)]) as running:
        yield running


def run(dapprof, *args) -> subprocess.CompletedProcess:
    out = subprocess.run([dapprof, *args], capture_output=True, text=True, timeout=TIMEOUT)
    assert out.returncode == 0, out.stderr
    return out


def samples_by_thread(path: Path) -> dict[str, list[tuple[list[str], int]]]:
    """A `record --threads --format raw` file: per thread name, each stack (root first, the
    thread's own frame left out) with its count."""
    threads = collections.defaultdict(list)
    for line in path.read_text(encoding="utf-8").splitlines():
        stack, _, count = line.rpartition(" ")
        frames = stack.split(";")
        name = frames[0].rpartition('"')[0].partition('"')[2]
        threads[name].append((frames[1:], int(count)))
    return threads


def share(stacks, predicate) -> tuple[int, int]:
    """(samples whose stack satisfies `predicate`, all samples) of one thread."""
    return sum(n for s, n in stacks if predicate(s)), sum(n for _, n in stacks)


def native(frame: str) -> bool:
    return ".py:" not in frame and not frame.startswith("<")


def test_ps_shows_the_pid_in_the_container(dapprof, box):
    entries = json.loads(run(dapprof, "ps", "--json").stdout)["processes"]
    entry = next(p for p in entries if p["pid"] == box.pid)
    assert entry["ns_pid"] == 1
    assert all(p["ns_pid"] is None for p in entries if containers.namespace_pids(p["pid"]) ==
               [p["pid"]])
    row = next(r for r in run(dapprof, "ps").stdout.splitlines() if r.split()[0] == str(box.pid))
    assert row.split()[1] == "1", row


def test_dump_names_threads_by_host_tid_and_sees_the_hasher_work(dapprof, box):
    host = containers.host_tids(box.pid)
    for _ in range(5):  # between two hashes, the hasher takes the GIL for a moment
        doc = json.loads(run(dapprof, "dump", "--pid", str(box.pid), "--json").stdout)
        threads = {t["name"]: t for t in doc["threads"]}
        assert {t["os_thread_id"] for t in doc["threads"]} == set(host.values()), (doc, host)
        if threads["hasher"]["active"]:
            break
    assert threads["hasher"]["os_thread_id"] == box.host_tid("hasher")
    assert threads["hasher"]["active"], threads["hasher"]
    assert threads["hasher"]["frames"][0]["function"] == "hash_forever"
    assert not threads["sleeper"]["active"]


def test_record_samples_the_hasher_as_working(dapprof, box, tmp_path):
    out = tmp_path / "profile.txt"
    run(dapprof, "record", "--pid", str(box.pid), "--duration", "1.5", "--rate", "100",
        "--threads", "--format", "raw", "--output", str(out), "--hideprogress")
    threads = samples_by_thread(out)
    hashing, total = share(threads.get("hasher", []), lambda s: "hash_forever" in s[-1])
    # Only working threads are sampled without --idle: an idle hasher would have none (150 ticks;
    # the bound leaves room for a loaded machine).
    assert total >= 50 and hashing >= 0.9 * total, dict(threads)


def test_record_native_idle_unwinds_every_thread(dapprof, box, tmp_path):
    out = tmp_path / "native.txt"
    run(dapprof, "record", "--pid", str(box.pid), "--duration", "1.5", "--rate", "100",
        "--native", "--idle", "--threads", "--format", "raw", "--output", str(out),
        "--hideprogress")
    threads = samples_by_thread(out)
    # Each native sample pauses the thread and unwinds it, three threads a tick on two cores (and
    # under the sanitizers): the rate is not what this checks, so 30 samples of 150 are enough.
    # The hasher: native frames under hash_forever (the hash function's, hashlib's), in the
    # container's own libraries.
    with_native, total = share(threads["hasher"],
                               lambda s: any(native(f) for f in s[s.index(
                                   next(f for f in s if f.startswith("hash_forever"))) + 1:]))
    assert total >= 30 and with_native >= 0.9 * total, threads["hasher"]
    # The sleeping threads: in the C library's clock_nanosleep under time.sleep.
    for name in ("sleeper", "MainThread"):
        asleep, total = share(threads[name], lambda s: any("nanosleep" in f for f in s))
        assert total >= 30 and asleep >= 0.9 * total, (name, threads[name])
