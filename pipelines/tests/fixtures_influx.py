"""A real InfluxDB 1.x (Debian package `influxdb`, binary influxd) for tests.

`influxd` (session scope) starts one server on free loopback ports with a temporary data
directory and authentication enabled (an admin user with a random password is created first),
and stops it and removes the directory afterwards. Tests publish with those credentials and
query back with InfluxQL. Skipped, with the reason, when influxd is not installed.
"""

from __future__ import annotations

import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import requests


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class InfluxServer:
    url: str
    username: str
    password: str
    workdir: Path
    log_path: Path

    def query(self, q: str, db: str | None = None, method: str = "GET") -> dict[str, Any]:
        params = {"q": q, "epoch": "ns"}
        if db:
            params["db"] = db
        r = requests.request(
            method,
            f"{self.url}/query",
            params=params,
            auth=(self.username, self.password),
            timeout=10,
        )
        r.raise_for_status()
        data = r.json()
        for result in data.get("results", []):
            if "error" in result:
                raise AssertionError(f"InfluxQL error: {result['error']}")
        return data

    def create_database(self, name: str) -> None:
        self.query(f'CREATE DATABASE "{name}"', method="POST")


_CONFIG = """\
reporting-disabled = true
bind-address = "127.0.0.1:{rpc_port}"

[meta]
  dir = "{dir}/meta"
  logging-enabled = false

[data]
  dir = "{dir}/data"
  wal-dir = "{dir}/wal"
  query-log-enabled = false

[monitor]
  store-enabled = false

[http]
  bind-address = "127.0.0.1:{http_port}"
  auth-enabled = true
  log-enabled = false

[continuous_queries]
  enabled = false

[logging]
  level = "warn"
  suppress-logo = true
"""


@pytest.fixture(scope="session")
def influxd() -> Iterator[InfluxServer]:
    exe = shutil.which("influxd")
    if exe is None:
        pytest.skip("influxd not installed (Debian package influxdb: apt-get install influxdb)")
    workdir = Path(tempfile.mkdtemp(prefix="lsmbench-influxd-"))
    http_port, rpc_port = free_port(), free_port()
    conf = workdir / "influxd.conf"
    conf.write_text(_CONFIG.format(dir=workdir, http_port=http_port, rpc_port=rpc_port))
    log_path = workdir / "influxd.log"
    # INFLUXDB_* variables would override the file's settings.
    env = {k: v for k, v in os.environ.items() if not k.startswith("INFLUXDB_")}
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [exe, "run", "-config", str(conf)],
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=env,
            start_new_session=True,
        )
    url = f"http://127.0.0.1:{http_port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"influxd exited ({proc.returncode}): {log_path.read_text()}")
            try:
                if requests.get(f"{url}/ping", timeout=1).status_code == 204:
                    break
            except requests.RequestException:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"influxd did not answer /ping in 30s: {log_path.read_text()}")
            time.sleep(0.1)
        password = secrets.token_hex(16)
        # With no user yet, InfluxDB lets anyone create the first admin.
        r = requests.post(
            f"{url}/query",
            params={"q": f"CREATE USER \"admin\" WITH PASSWORD '{password}' WITH ALL PRIVILEGES"},
            timeout=10,
        )
        r.raise_for_status()
        assert "error" not in r.text, r.text
        yield InfluxServer(url, "admin", password, workdir, log_path)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        shutil.rmtree(workdir, ignore_errors=True)
