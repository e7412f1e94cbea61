"""The production install (`pip install .`, what the Dockerfile runs) has what production imports.

The suite runs with the dev extras installed, and pytest brings in packages of its own, so an import the
production worker needs can pass every other test and still be missing in production. The CI job also
installs the main dependencies alone and starts a worker and beat (.ci/run).
"""

import re
import tomllib
from importlib.metadata import requires
from pathlib import Path

from packaging.requirements import Requirement

PYPROJECT = Path(__file__).resolve().parent.parent / "pyproject.toml"


def _name(requirement: str) -> str:
    return re.sub(r"[-_.]+", "-", Requirement(requirement).name).lower()


def main_dependencies() -> dict[str, Requirement]:
    project = tomllib.loads(PYPROJECT.read_text())["project"]
    return {_name(r): Requirement(r) for r in project["dependencies"]}


def test_what_kombus_redis_transport_imports_is_a_main_dependency():
    # REDIS_URL makes Celery use kombu's Redis transport, which imports these (kombu's "redis" extra).
    needed = {_name(r) for r in requires("kombu") if 'extra == "redis"' in r and not r.startswith("kombu")}
    assert {"redis", "packaging"} <= needed
    main = main_dependencies()
    assert needed <= set(main), f"missing from [project] dependencies: {sorted(needed - set(main))}"
    assert "redis" in main["celery"].extras
