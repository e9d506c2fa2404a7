"""`dapprof top` in a real terminal: tmux runs it in a detached session of a known size, the tests
read the screen with capture-pane and type with send-keys. Each test has a tmux server of its own
(its own socket), killed at the end."""
from __future__ import annotations

import re
import shlex
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from conftest import DEBIAN_PYTHON, FIXTURE, SHORT, fixture_lines, pythons, run, wait_until

ROW = re.compile(r"^\s*(\d+\.\d\d)%\s+(\d+\.\d\d)%\s+(\d+\.\d\d)s\s+(\d+\.\d\d)s\s+(.+)$")
DONE = re.compile(r"top-done (\d+) (same|changed)")


def _interpreters() -> list:
    """Debian's 3.11 and pyenv's 3.12, each skipped with its reason where missing."""
    params = []
    for name in ("debian-3.11", "3.12"):
        interp = pythons.find(name)
        params.append(pytest.param(interp, id=interp.label) if interp else pytest.param(
            None, id=name, marks=pytest.mark.skip(reason=pythons.missing_reason(name))))
    return params


class Screen:
    """One tmux server running one command in a WIDTH x HEIGHT window. The command runs under a
    shell that then prints dapprof's exit status and whether the terminal's mode (stty -g) is
    the same as before, and stays, so that the screen after dapprof can be read too."""

    def __init__(self, argv: list[str], width: int = 120, height: int = 40):
        self.socket = f"dapprof-test-{uuid.uuid4().hex[:12]}"
        cmd = shlex.join(argv)
        script = (f'before=$(stty -g); {cmd}; rc=$?; '
                  f'if [ "$(stty -g)" = "$before" ]; then tty=same; else tty=changed; fi; '
                  f'printf "top-done %s %s\\n" "$rc" "$tty"; exec sleep 600')
        self.tmux("new-session", "-d", "-s", "top", "-x", str(width), "-y", str(height),
                  "sh", "-c", script)
        self.socket_path = self.tmux("display-message", "-p", "#{socket_path}").strip()

    def tmux(self, *args: str) -> str:
        out = subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True,
                             encoding="utf-8", timeout=30)
        assert out.returncode == 0, (args, out.stderr)
        return out.stdout

    def lines(self) -> list[str]:
        return self.tmux("capture-pane", "-p", "-t", "top").rstrip("\n").split("\n")

    def text(self) -> str:
        return "\n".join(self.lines())

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", "top", *keys)

    def wait_for(self, predicate, what: str, timeout: float = 30):
        """Polls the screen until predicate(lines) is true; its value, or AssertionError with the
        last screen."""
        last = []

        def check():
            nonlocal last
            last = self.lines()
            return predicate(last)
        try:
            return wait_until(check, timeout, what)
        except AssertionError as e:
            raise AssertionError(f"{e}; screen:\n" + "\n".join(last)) from None

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True,
                       timeout=30)
        if self.socket_path:  # the server leaves its socket behind
            Path(self.socket_path).unlink(missing_ok=True)


@pytest.fixture
def screens():
    opened: list[Screen] = []

    def open_screen(argv: list[str], **kwargs) -> Screen:
        s = Screen(argv, **kwargs)
        opened.append(s)
        return s

    yield open_screen
    for s in opened:
        s.close()


def rows(lines: list[str]) -> list[tuple[float, float, float, float, str]]:
    out = []
    for line in lines:
        m = ROW.match(line)
        if m:
            out.append((float(m[1]), float(m[2]), float(m[3]), float(m[4]), m[5]))
    return out


def header(lines: list[str]) -> dict[str, str]:
    """The `Name: value` fields of the header's second line."""
    line = next(line for line in lines if line.startswith("Samples:"))
    return dict(re.findall(r"(\w+): (\S+)", line))


def hot_at_top(lines: list[str]):
    """The table, once leaf_spin leads it by %Own with a plausible share."""
    table = rows(lines)
    if table and table[0][4].startswith("leaf_spin (") and table[0][0] >= 50:
        return table
    return None


def check_title(line: str, pid: int, command: list[str]) -> None:
    """The first line: pid, Python version and the command line, the latter cut to the width."""
    m = re.fullmatch(rf"dapprof top: pid {pid} \(Python \d+\.\d+\.\d+\) '(.+)", line)
    assert m, line
    shown, full = m[1], shlex.join(command) + "'"
    assert shown == full or (shown.endswith("…") and full.startswith(shown[:-1])), line


def check_live_table(screen: Screen, pid: int, command: list[str], rate: int = 100) -> None:
    table = screen.wait_for(hot_at_top, "leaf_spin at the top by %Own")
    lines = screen.lines()
    check_title(lines[0], pid, command)
    fields = header(lines)
    assert fields["Rate"] == f"{rate}/s"
    assert int(fields["Samples"]) > 0 and int(fields["Errors"]) >= 0
    assert fields["Threads"] == "2"  # busy.py's main thread and sleepy-worker
    for share in ("GIL", "Active"):
        assert 0 <= float(fields[share].rstrip("%")) <= 100
    assert float(fields["Active"].rstrip("%")) == 100  # idle threads are not sampled
    assert sum(r[0] for r in table) <= 100.5  # rounding of each row
    assert all(r[0] <= r[1] + 0.01 for r in table)  # own time is part of total time
    labels = [r[4] for r in table]
    assert any(label.startswith("mittel_schicht_ü (") for label in labels), labels
    assert any(label.startswith("main (") for label in labels), labels
    assert lines[-1].startswith("Keys: 1 %Own")


def sorted_desc(values: list[float]) -> bool:
    return all(a >= b for a, b in zip(values, values[1:]))


@pytest.mark.parametrize("interp", _interpreters())
def test_top_pid_keys_resize_exit_and_quit(dapprof, start_target, screens, interp):
    target = start_target(python=interp.path)
    screen = screens([dapprof, "top", "--pid", str(target.pid)])
    check_live_table(screen, target.pid, [interp.path, str(FIXTURE)])

    # Sorting: each column in turn, named in the status line, the table in its order.
    for key, name, column in (("3", "OwnTime", 2), ("4", "TotalTime", 3), ("2", "%Total", 1),
                              ("1", "%Own", 0)):
        screen.keys(key)
        table = screen.wait_for(
            lambda ls, n=name: any(f"Sorted by {n}, by function." in line for line in ls) and
            rows(ls), f"sorted by {name}")
        assert sorted_desc([r[column] for r in table]), (name, table)

    # By line: leaf_spin's rows carry the lines of its loop; back by function, no line numbers.
    screen.keys("L")
    spin_lines = set(fixture_lines("SPIN"))
    by_line = screen.wait_for(
        lambda ls: "Sorted by %Own, by line." in "\n".join(ls) and
        [r for r in rows(ls) if r[4].startswith("leaf_spin (")], "rows by line")
    for r in by_line:
        m = re.fullmatch(r"leaf_spin \((.+):(\d+)\)", r[4])
        assert m and m[1] == SHORT and int(m[2]) in spin_lines, r
    screen.keys("L")
    by_function = screen.wait_for(
        lambda ls: "by function." in "\n".join(ls) and
        [r for r in rows(ls) if r[4].startswith("leaf_spin (")], "rows by function")
    assert [r[4] for r in by_function] == [f"leaf_spin ({SHORT})"]

    # Pause: the screen stays as it is over two refresh periods, then goes on.
    screen.keys("p")
    paused = screen.wait_for(lambda ls: "PAUSED" in ls[2] and ls, "the paused state")
    samples_paused = int(header(paused)["Samples"])
    time.sleep(2.5)
    assert screen.lines() == paused
    screen.keys("Space")
    screen.wait_for(lambda ls: "Running." in ls[2] and int(header(ls)["Samples"]) > samples_paused,
                    "refreshes after resuming")

    # A smaller window: redrawn to its size, names cut to its width.
    screen.tmux("resize-window", "-t", "top", "-x", "60", "-y", "20")
    # (Until dapprof redraws, tmux shows the old screen cropped: wait for lines cut with "…",
    # which only dapprof writes, not wrapped.)
    small = screen.wait_for(lambda ls: len(ls) == 20 and ls[-1].startswith("Keys:") and
                            any(line.endswith("…") for line in ls) and ls, "the redraw at 60x20")
    assert all(len(line) <= 60 for line in small), small
    assert rows(small) and rows(small)[0][4].startswith("leaf_spin")

    # The target exits: said in the header, the table stays.
    target.proc.kill()
    target.proc.wait(timeout=30)
    screen.tmux("resize-window", "-t", "top", "-x", "120", "-y", "40")
    gone = screen.wait_for(lambda ls: f"Process {target.pid} exited" in ls[2] and ls,
                           "the exit in the header")
    assert any(r[4].startswith("leaf_spin (") for r in rows(gone)), gone

    # q: dapprof exits with 0, the terminal's mode and the shell's screen are back.
    screen.keys("q")
    done = screen.wait_for(lambda ls: DONE.search("\n".join(ls)), "dapprof to exit")
    assert done[1] == "0" and done[2] == "same"
    assert not rows(screen.lines())  # the table was on the alternate screen


@pytest.mark.parametrize("interp", _interpreters())
def test_top_starts_the_program_and_keeps_the_table_after_it_exits(dapprof, screens, interp):
    command = [interp.path, str(FIXTURE), "--seconds", "6", "--exit-code", "3"]
    screen = screens([dapprof, "top", "--rate", "50", "--", *command])
    pid = int(screen.wait_for(lambda ls: re.match(r"dapprof top: pid (\d+) ", ls[0]), "the pid")[1])
    check_live_table(screen, pid, command, rate=50)
    lines = screen.lines()
    # Its output ("ready") went to /dev/null, not over the table.
    assert "ready" not in "\n".join(lines)
    gone = screen.wait_for(lambda ls: "exited with status 3" in ls[2] and ls, "the exit")
    assert gone[2].startswith(f"Process {pid} exited with status 3")
    # The last refresh's table stays (its last second may be the interpreter's shutdown).
    assert any(r[4].startswith("leaf_spin (") for r in rows(gone)), gone
    assert sum(r[0] for r in rows(gone)) <= 100.5
    screen.keys("C-c")  # Ctrl-C is a key like q
    done = screen.wait_for(lambda ls: DONE.search("\n".join(ls)), "dapprof to exit")
    assert done[1] == "0" and done[2] == "same"


def test_top_without_a_terminal_prints_the_table_once(dapprof):
    out = run([dapprof, "top", "--", DEBIAN_PYTHON, str(FIXTURE), "--seconds", "1.5"])
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "ready"  # the program's own output: not a terminal, so it is kept
    assert lines[1].startswith("dapprof top: pid ") and "--seconds 1.5'" in lines[1]
    assert "Keys:" not in out.stdout  # no key help without a terminal
    table = rows(lines)
    assert table and sorted_desc([r[2] for r in table])  # by own time
    assert table[0][4] == f"leaf_spin ({SHORT})"
    assert sum(r[0] for r in table) <= 100.5
    assert re.search(r"Stopped sampling: process \d+ exited\.", out.stderr), out.stderr
    # --full-filenames: the paths as the program has them.
    out = run([dapprof, "top", "--full-filenames", "--", DEBIAN_PYTHON, str(FIXTURE),
               "--seconds", "1"])
    assert out.returncode == 0, out.stderr
    assert rows(out.stdout.splitlines())[0][4] == f"leaf_spin ({FIXTURE})"


def test_top_help_names_keys_and_columns(dapprof):
    out = run([dapprof, "top", "--help"])
    assert out.returncode == 0
    for word in ("--pid", "--rate", "--nonblocking", "--idle", "--gil", "--native", "--native-all",
                 "--subprocesses", "%Own", "TotalTime", "space or p", "not a terminal"):
        assert word in out.stdout, word


def test_top_sampling_flags_conflict_like_record(dapprof, target):
    for command in ("top", "record"):
        out = run([dapprof, command, "--pid", str(target.pid), "--native", "--nonblocking"])
        assert out.returncode == 2
        assert "drop --nonblocking" in out.stderr
