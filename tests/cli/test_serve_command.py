"""`skenario serve` as a user starts it: on this machine by default, with a warning when told to listen wider."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

from skenario.cli.serve import _local
from tests.processes import wait_until
from tests.web.conftest import free_port


def answers(address: str) -> bool:
    try:
        with urllib.request.urlopen(address + "/api/runs") as response:
            return bool(response.status == 200)
    except OSError:
        return False


def test_serve_answers_on_the_port_asked_and_warns_off_localhost(tmp_path: Path) -> None:
    port = free_port()
    command = [sys.executable, "-m", "skenario", "serve", "--store", str(tmp_path / "store"), "--port", str(port)]
    server = subprocess.Popen([*command, "--host", "0.0.0.0"], stderr=subprocess.PIPE, text=True)
    try:
        address = f"http://127.0.0.1:{port}"
        wait_until(lambda: answers(address), server, "the dashboard answering")
        with urllib.request.urlopen(address + "/api/runs") as response:
            assert json.load(response) == []  # an empty store: no runs
        with urllib.request.urlopen(address + "/") as response:
            assert b'data-view="runs"' in response.read()
    finally:
        server.send_signal(signal.SIGINT)
        _, said = server.communicate()
    assert server.returncode == 0, said
    assert "warning: listening on 0.0.0.0" in said and f"http://0.0.0.0:{port}/" in said


def test_only_loopback_addresses_are_local() -> None:
    assert all(_local(host) for host in ("127.0.0.1", "localhost", "::1", "127.0.0.2"))
    assert not any(_local(host) for host in ("0.0.0.0", "::", "192.168.1.4", "example.com"))
