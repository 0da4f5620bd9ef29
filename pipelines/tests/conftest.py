"""Shared fixtures. Keep this file small; helpers append their own sections."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


# A test that takes one of these fixtures needs what the marker says (markers: pyproject.toml);
# `make test-fast` leaves out every marked test.
FIXTURE_MARKERS = {
    "driver_path": "slow",
    "sim_path": "slow",
    "influxd": "influx",
    "three_node_testbed": "netns",
    "chromium": "browser",
    "fio": "fio",
    "ycsb_record": "java",
}


SHARED_MODULE_FIXTURES = {"test_views_agree", "test_shapes_in_results"}


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        for fixture, marker in FIXTURE_MARKERS.items():
            if fixture in names:
                item.add_marker(marker)
        # The network namespaces have fixed names (fixtures_netns.py): their tests share one
        # worker when the suite is spread over several (`make test`: --dist loadgroup).
        if item.get_closest_marker("netns") is not None:
            item.add_marker(pytest.mark.xdist_group("netns"))
        # A module whose tests share one expensive module-scoped fixture runs on one worker
        # (each worker would make its own).
        elif (module := getattr(item, "module", None)) is not None \
                and module.__name__ in SHARED_MODULE_FIXTURES:
            item.add_marker(pytest.mark.xdist_group(module.__name__))


@pytest.fixture(scope="session")
def chromium() -> str:
    """Headless Chromium's path, or the test is skipped with how to install it."""
    from browser import CHROMIUM

    if not Path(CHROMIUM).exists():
        pytest.skip("chromium is not installed (Debian package chromium: apt-get install "
                    "chromium)")
    return CHROMIUM


@pytest.fixture(scope="session")
def fio() -> str:
    """fio's path, or the test is skipped with how to install it."""
    path = shutil.which("fio")
    if path is None:
        pytest.skip("fio is not installed (apt-get install fio)")
    return path


@pytest.fixture(autouse=True)
def _wide_output(monkeypatch: pytest.MonkeyPatch) -> None:
    """The commands' text output does not depend on the terminal pytest runs in: it is laid
    out for a width wider than any line checked (lsmbench.util.terminal reads COLUMNS first, and
    so does rich; child processes inherit it). A test of the layout sets its own COLUMNS."""
    monkeypatch.setenv("COLUMNS", "1000")


@pytest.fixture(scope="session")
def ycsb_record() -> Path:
    """workloads/ycsb/reference/record.sh (YCSB's own client), or the test is skipped with how
    to install Java and Maven."""
    missing = [tool for tool in ("java", "mvn") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed (apt-get install default-jdk-headless "
                    "maven, or `make deps` as root)")
    return REPO / "workloads" / "ycsb" / "reference" / "record.sh"


@pytest.fixture(scope="session")
def driver_path() -> Path:
    """A built lsm-driver (build/ or build-*/), or the test is skipped with how to build it."""
    from lsmbench.util.paths import find_driver

    p = find_driver()
    if p is None:
        pytest.skip("lsm-driver is not built: run `make build` (or set $LSMBENCH_DRIVER)")
    return p


@pytest.fixture(scope="session")
def sim_path() -> Path:
    """A built lsm-sim, or the test is skipped with how to build it."""
    from lsmbench.util.paths import find_sim

    p = find_sim()
    if p is None:
        pytest.skip("lsm-sim is not built: run `make build` (or set $LSMBENCH_BUILD_DIR)")
    return p


@pytest.fixture
def data_root():
    """A scratch directory on a disk-backed filesystem (cgroup throttling needs a device)."""
    for base in ("/var/tmp", tempfile.gettempdir(), str(REPO)):
        if os.path.isdir(base) and os.major(os.stat(base).st_dev) != 0:
            with tempfile.TemporaryDirectory(prefix="lsmbench-test-", dir=base) as d:
                yield Path(d)
            return
    pytest.skip("no disk-backed directory for engine data")


# -- pyinfra: a real InfluxDB 1.x on a loopback port (session fixture `influxd`); see
# fixtures_influx.py. Imported here so every test module can use it.
from fixtures_influx import influxd  # noqa: E402, F401

# -- a deployed three-node ssh testbed over sshd in network namespaces (session fixture
# `three_node_testbed`), shared by the modules that need one; see fixtures_netns.py.
from fixtures_netns import three_node_testbed  # noqa: E402, F401
from fixtures_reproduce import lsmbench, store  # noqa: E402, F401 (reproduce's tests)
