"""tools/protocol/generate.py: the committed files are what the schemas give, --check names a
stale or missing file (so the protocol_generated test can fail), and generation refuses schemas
the generated code could not follow."""
from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "tools" / "protocol" / "generate.py"
GENERATED = [
    "client/dapprof_client/protocol.py",
    "src/protocol/generated/messages.cpp",
    "src/protocol/generated/messages.hpp",
    "vscode-client/src/model/protocol.ts",
]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(GENERATOR), *args], capture_output=True, text=True,
                          timeout=60)


def copy_generated(to: Path) -> None:
    for rel in GENERATED:
        (to / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(ROOT / rel, to / rel)


@pytest.fixture()
def schemas(tmp_path: Path) -> Path:
    directory = tmp_path / "schemas"
    shutil.copytree(ROOT / "schemas", directory)
    return directory


def edit_schema(directory: Path, name: str, change) -> None:
    path = directory / f"{name}.schema.json"
    schema = json.loads(path.read_text(encoding="utf-8"))
    change(schema)
    path.write_text(json.dumps(schema, indent=2), encoding="utf-8")


def test_committed_files_are_current():
    result = run("--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert sorted(re.findall(r"^(\S+): up to date$", result.stdout, re.M)) == GENERATED


def test_output_writes_exactly_the_committed_files(tmp_path: Path):
    result = run("--output", str(tmp_path))
    assert result.returncode == 0, result.stderr
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == GENERATED
    for rel in GENERATED:
        assert (tmp_path / rel).read_bytes() == (ROOT / rel).read_bytes(), rel
    assert run("--check", str(tmp_path)).returncode == 0
    again = run("--output", str(tmp_path))  # deterministic: nothing to rewrite
    assert again.returncode == 0 and "wrote" not in again.stdout


@pytest.mark.parametrize("rel", GENERATED)
def test_an_edited_copy_is_reported_stale(tmp_path: Path, rel: str):
    copy_generated(tmp_path)
    path = tmp_path / rel
    path.write_text(path.read_text(encoding="utf-8") + "// 2099: edited by hand\n", encoding="utf-8")
    result = run("--check", str(tmp_path))
    assert result.returncode == 1
    assert f"{rel}: stale" in result.stdout
    assert "2099" in result.stdout  # the difference is shown
    for other in GENERATED:
        if other != rel:
            assert f"{other}: up to date" in result.stdout


def test_a_missing_file_is_reported(tmp_path: Path):
    copy_generated(tmp_path)
    (tmp_path / GENERATED[0]).unlink()
    result = run("--check", str(tmp_path))
    assert result.returncode == 1
    assert f"{GENERATED[0]}: missing" in result.stdout


def test_a_changed_schema_makes_the_committed_files_stale(schemas: Path):
    edit_schema(schemas, "startProfilingArguments",
                lambda s: s["properties"]["rate"].__setitem__("maximum", 20000))
    result = run("--check", "--schemas", str(schemas))
    assert result.returncode == 1
    for rel in GENERATED:
        if not rel.endswith("messages.cpp"):  # the .cpp names the constant, not the value
            assert f"{rel}: stale" in result.stdout, rel
    assert "+inline constexpr int kMaxRateHz = 20000;" in result.stdout


def test_a_format_the_model_lacks_stops_generation(schemas: Path, tmp_path: Path):
    for name in ("stopProfilingArguments", "exportProfileArguments", "exportProfileResponse"):
        edit_schema(schemas, name, lambda s: s["properties"]["format"]["enum"].append("perf"))
    result = run("--output", str(tmp_path / "out"), "--schemas", str(schemas))
    assert result.returncode == 2
    assert "'perf'" in result.stderr and "model::ProfileFormat" in result.stderr
    assert not (tmp_path / "out").exists()


def test_formats_that_disagree_stop_generation(schemas: Path, tmp_path: Path):
    edit_schema(schemas, "exportProfileArguments",
                lambda s: s["properties"]["format"]["enum"].remove("chrometrace"))
    result = run("--output", str(tmp_path), "--schemas", str(schemas))
    assert result.returncode == 2 and "format" in result.stderr


@pytest.mark.parametrize("change, message", [
    (lambda s: s["properties"]["rate"].__setitem__("exclusiveMaximum", 5), "exclusiveMaximum"),
    (lambda s: s["properties"].__setitem__("flavour", {"enum": ["a", "b"]}), "ENUMS"),
])
def test_what_the_parsers_would_not_check_stops_generation(schemas: Path, tmp_path: Path, change,
                                                          message):
    edit_schema(schemas, "startProfilingArguments", change)
    result = run("--output", str(tmp_path), "--schemas", str(schemas))
    assert result.returncode == 2 and message in result.stderr


def test_a_schema_without_a_type_stops_generation(schemas: Path, tmp_path: Path):
    (schemas / "pauseProfilingArguments.schema.json").write_text(json.dumps(
        {"$id": "urn:dapprof:protocol:v1:pauseProfilingArguments", "type": "object"}))
    result = run("--output", str(tmp_path), "--schemas", str(schemas))
    assert result.returncode == 2 and "pauseProfilingArguments" in result.stderr


def error_ids() -> dict[int, str]:
    schema = json.loads((ROOT / "schemas" / "profilingErrorResponse.schema.json").read_text())
    one_of = schema["properties"]["body"]["properties"]["error"]["properties"]["id"]["oneOf"]
    return {o["const"]: o["title"] for o in one_of}


def test_the_python_module_has_the_schema_names():
    spec = importlib.util.spec_from_file_location("generated_protocol",
                                                  ROOT / "client/dapprof_client/protocol.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert {e.value: e.name for e in module.ErrorId} == error_ids()
    assert module.ErrorId.NoSuchProcess == 2008 and module.ErrorId(2011).name == "NoProfile"
    stop = json.loads((ROOT / "schemas" / "stopProfilingArguments.schema.json").read_text())
    assert module.FORMATS == tuple(stop["properties"]["format"]["enum"])
    assert module.DEFAULT_FORMAT == "speedscope"
    assert module.START_RANGES["rate"] == (1, 10000)
    assert module.START_DEFAULTS["batchIntervalMs"] == 100 and "pid" not in module.START_DEFAULTS
    assert (module.EXPORT_PROFILE, module.SUPPORTS_PROFILING) == ("exportProfile", "supportsProfiling")
    assert module.ORIGINS == ("program", "debugger")


def test_the_reference_documents_every_error_id_by_its_name():
    doc = (ROOT / "docs" / "PROFILING.md").read_text(encoding="utf-8")
    rows = dict((int(i), n) for i, n in re.findall(r"^\| (\d{4}) \| `(\w+)` \|", doc, re.M))
    assert rows == error_ids()
