"""Native frames merged into Python stacks (`--native`), against every installed CPython: time
spent in C under the Python frame that called it, C between Python frames in call order, a C++
name demangled, idle threads showing where they wait, and no crash or hang when the target
exits or creates threads mid-sample."""
import re
import subprocess
import time
from pathlib import Path

import pytest

from conftest import (EACH, FIXTURE, INTERPRETERS, Target, describe, dump, ext_dir, index_of,
                      is_static_debian, main_frames, natives_inside, sample_until)

by_interp = pytest.mark.parametrize("interp", EACH)


def check_native_fields(frames):
    for f in frames:
        if f.get("native"):
            assert f["module"], f


@by_interp
def test_openssl_under_the_python_caller(dapprof, interp):
    with Target(interp, "hashlib") as t:
        def check(frames):
            inside = natives_inside(frames, "hash_work")
            return inside if inside and any(
                "PBKDF2" in f["function"].upper() and "libcrypto" in f["module"]
                for f in inside) else None
        inside = sample_until(dapprof, t.pid, check)
        check_native_fields(inside)


@by_interp
def test_zlib_under_the_python_caller(dapprof, interp):
    with Target(interp, "zlib") as t:
        sample_until(dapprof, t.pid, lambda frames: any(
            f["function"] == "deflate" and "libz" in f["module"]
            for f in natives_inside(frames, "zlib_work") or []))


@by_interp
def test_regular_expression_engine_under_the_python_caller(dapprof, interp):
    with Target(interp, "re") as t:
        if is_static_debian(interp):
            # Stripped interpreter: the engine's C functions have no symbol, but the method the
            # caller called is named from CPython's own method table (re.Pattern.match, or
            # prefixmatch on 3.15), and the rest are kept unnamed, by their start, inside the
            # Python frame. The module is named as the target sees it (inside its root, if any).
            unnamed = re.escape(Path(interp.inner_path).name) + r"\+0x[0-9a-f]+"
            method = r"re\.Pattern\.(prefix)?match"

            def check(frames):
                inside = natives_inside(frames, "re_work")
                return inside and all(f["module"] == interp.inner_path for f in inside) and all(
                    re.fullmatch(unnamed, f["function"]) or re.fullmatch(method, f["function"])
                    for f in inside) and any(re.fullmatch(method, f["function"]) for f in inside)
        else:
            def check(frames):
                inside = natives_inside(frames, "re_work")
                return inside and any("sre" in f["function"].lower() for f in inside)
        sample_until(dapprof, t.pid, check)


@by_interp
def test_sorted_with_a_python_key_keeps_the_call_order(dapprof, interp):
    # Stripped or not, the C frames between the key and its caller stay, and one of them is
    # list.sort: by its symbol (list_sort), or on Debian's stripped interpreters by CPython's
    # own method table (list.sort).
    def check(frames):
        key = index_of(frames, "sort_key", native=False)
        caller = index_of(frames, "sort_work", native=False)
        if key < 0 or caller < key:
            return None
        between = frames[key + 1:caller]
        if not between or not all(f.get("native") for f in between):
            return None
        if not any(f["function"] in ("list_sort", "list.sort") for f in between):
            return None
        return between
    with Target(interp, "sorted") as t:
        between = sample_until(dapprof, t.pid, check)
    check_native_fields(between)


@by_interp
def test_extension_c_function_with_source_line(dapprof, interp):
    source = Path(__file__).parent / "ext" / "native_test.c"
    lines = source.read_text().splitlines()
    first = next(i for i, l in enumerate(lines, 1) if "dapprof_native_spin_c(double" in l)
    last = first + next(i for i, l in enumerate(lines[first:]) if l.startswith("}"))
    with Target(interp, "ext_c") as t:
        def check(frames):
            inside = natives_inside(frames, "ext_c_work") or []
            spin = [f for f in inside if f["function"] == "dapprof_native_spin_c"]
            return spin[0] if spin else None
        spin = sample_until(dapprof, t.pid, check)
    assert Path(spin["module"]).parent == ext_dir(interp).resolve()
    assert spin["file"] == str(source.resolve()), spin
    assert first <= spin["line"] <= last, (spin, first, last)


@by_interp
def test_extension_cpp_function_demangled(dapprof, interp):
    with Target(interp, "ext_cpp") as t:
        sample_until(dapprof, t.pid, lambda frames: any(
            f["function"] == "dapprof_test::Spinner::spin(double)"
            for f in natives_inside(frames, "ext_cpp_work") or []))


@by_interp
def test_c_calling_back_into_python_stays_between(dapprof, interp):
    def check(frames):
        callback = index_of(frames, "python_callback", native=False)
        c = index_of(frames, "dapprof_native_call_back", native=True, start=max(callback, 0))
        caller = index_of(frames, "callback_work", native=False, start=max(c, 0))
        if callback < 0 or c < 0 or caller < 0:
            return None
        assert all(f.get("native") for f in frames[:callback]), describe(frames)
        assert all(f.get("native") for f in frames[callback + 1:caller]), describe(frames)
        return frames
    with Target(interp, "callback") as t:
        sample_until(dapprof, t.pid, check)


@by_interp
def test_idle_thread_shows_where_it_waits(dapprof, interp):
    with Target(interp, "idle") as t:
        time.sleep(0.2)  # into the sleep system call
        native = main_frames(dump(dapprof, t.pid, "--native"), t.pid)
        python_only = main_frames(dump(dapprof, t.pid), t.pid)
        everything = main_frames(dump(dapprof, t.pid, "--native-all"), t.pid)
    inside = natives_inside(native, "idle_work")
    assert inside, describe(native)
    assert "libc" in Path(inside[0]["module"]).name, describe(native)
    # The Python frames are the same with and without native frames.
    assert [f for f in native if not f.get("native")] == python_only
    # By default nothing outside the outermost Python frame (start-up code) is kept.
    assert not native[-1].get("native"), describe(native)

    # --native-all keeps the interpreter's call machinery and the start-up frames.
    default = native
    assert len(everything) > len(default), describe(everything)
    assert everything[-1].get("native"), describe(everything)  # process start-up
    assert [f for f in everything if not f.get("native")] == [
        f for f in default if not f.get("native")]
    if not is_static_debian(interp):
        names = {f["function"] for f in everything}
        assert "_PyEval_EvalFrameDefault" not in names  # replaced by Python frames
        assert names & {"main", "Py_RunMain", "Py_BytesMain", "__libc_start_main"}, names


def record(dapprof, *args, timeout=90):
    started = time.monotonic()
    out = subprocess.run([dapprof, "record", *args], capture_output=True, text=True,
                         timeout=timeout)
    return out, time.monotonic() - started


# Frame objects (3.8), entry frames (3.11), shim frames (3.12+), a static stripped interpreter,
# the versions only the Debian unstable root has, a target in a root of its own: robustness is
# checked on one interpreter of each kind, to keep the suite short.
ROBUSTNESS = [i for i in INTERPRETERS if i.version[:2] in ((3, 8), (3, 11), (3, 13)) and
              i.label.startswith("pyenv")] + [i for i in INTERPRETERS if is_static_debian(i)]
by_kind = pytest.mark.parametrize("interp", ROBUSTNESS or INTERPRETERS, ids=str)


@by_kind
def test_target_exiting_mid_sample(dapprof, interp, tmp_path):
    output = tmp_path / "exit.txt"
    out, took = record(dapprof, "--native", "--rate", "1000", "--format", "raw", "-o",
                       str(output), "--", interp.path, str(FIXTURE), "exit")
    assert out.returncode == 0, out.stderr
    assert took < 60
    assert "exited" in out.stderr
    samples = int(re.search(r"Samples: (\d+)", out.stderr).group(1))
    assert samples > 0, out.stderr
    assert "spin" in output.read_text()


@by_kind
def test_threads_created_mid_sample(dapprof, interp, tmp_path):
    output = tmp_path / "threads.txt"
    with Target(interp, "threads") as t:
        out, took = record(dapprof, "--native", "--rate", "1000", "--duration", "1.5",
                           "--format", "raw", "-o", str(output), "--pid", str(t.pid))
        assert t.proc.poll() is None, "the target died while sampled"
    assert out.returncode == 0, out.stderr
    assert took < 30
    # Sampling went on to the end while threads came and went (how many samples that gives
    # depends on the machine's speed: a busy one with a sanitizer build gets a few dozen).
    assert "Stopped sampling: 1.5s elapsed." in out.stderr, out.stderr
    samples = int(re.search(r"Samples: (\d+)", out.stderr).group(1))
    assert samples >= 5, out.stderr
    assert "burst" in output.read_text()


@pytest.mark.parametrize("command", ["dump", "record"])
def test_native_with_nonblocking_is_refused(dapprof, command):
    with Target(INTERPRETERS[0], "idle") as t:
        out = subprocess.run([dapprof, command, "--pid", str(t.pid), "--native", "--nonblocking"],
                             capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert "--nonblocking" in out.stderr and "native" in out.stderr

