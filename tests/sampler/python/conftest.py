import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tests" / "support"))

import pythons  # noqa: E402

INTERPRETERS = pythons.interpreters()
MISSING = pythons.missing_versions()
EACH = pythons.each(sampler_only_too=True)  # every interpreter, a skipped case for each missing


def pytest_report_header(config):
    return pythons.report_header()


@pytest.fixture(scope="session")
def tool():
    path = os.environ.get("SAMPLER_SNAPSHOT_TOOL")
    if not path:
        pytest.fail("SAMPLER_SNAPSHOT_TOOL is not set: run through ctest, or point it at the built "
                    "sampler_snapshot_tool")
    return path
