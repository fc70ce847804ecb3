"""Starts one JFrog simulator for the lane (`sandbox jfrog`, the built binary when
SANDBOX_BIN names it, else `cargo run -p sandbox -- jfrog`) and hands its URL and admin
token to the tests."""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _command() -> list[str]:
    binary = os.environ.get("SANDBOX_BIN")
    if binary:
        return [binary, "jfrog"]
    return ["cargo", "run", "--quiet", "-p", "sandbox", "--", "jfrog"]


@pytest.fixture(scope="session")
def sim():
    state = tempfile.mkdtemp(prefix="jfrog-sim-py-")
    token = secrets.token_hex(24)
    env = dict(os.environ, JFROG_SIM_ADMIN_TOKEN=token)
    log = open(Path(state) / "sim.log", "wb")
    proc = subprocess.Popen(
        _command() + ["--listen", "127.0.0.1:0", "--state-dir", state],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    env_file = Path(state) / "jfrog.env"
    deadline = time.time() + 600
    url = None
    while time.time() < deadline and proc.poll() is None:
        if env_file.exists():
            lines = dict(
                line.split("=", 1) for line in env_file.read_text().splitlines() if "=" in line
            )
            url = lines.get("JFROG_URL")
            if url:
                try:
                    urllib.request.urlopen(f"{url}/__sim/health", timeout=2)
                    break
                except OSError:
                    pass
        time.sleep(0.2)
    if url is None or proc.poll() is not None:
        proc.kill()
        raise RuntimeError(f"the simulator did not start; see {state}/sim.log")
    yield {"url": url, "token": token}
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
