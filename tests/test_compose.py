"""compose.yaml, the Docker path: Neo4j 5.26 on loopback, password from the environment."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

COMPOSE = Path(__file__).resolve().parents[1] / "compose.yaml"


def test_compose_runs_neo4j_5_26_on_loopback_with_a_password_from_the_environment() -> None:
    spec = yaml.safe_load(COMPOSE.read_text())
    neo4j = spec["services"]["neo4j"]
    assert neo4j["image"].startswith("neo4j:5.26")
    assert all(port.startswith("127.0.0.1:") for port in neo4j["ports"])
    assert "${NEO4J_PASSWORD:?" in neo4j["environment"]["NEO4J_AUTH"]
    assert neo4j["healthcheck"]["test"]
    assert neo4j["volumes"] == ["neo4j-data:/data"]
    assert "neo4j-data" in spec["volumes"]


def _compose_command() -> list[str] | None:
    if shutil.which("docker"):
        probe = subprocess.run(
            ["docker", "compose", "version"], capture_output=True, check=False, timeout=30
        )
        if probe.returncode == 0:
            return ["docker", "compose"]
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return None


def test_docker_compose_config_accepts_the_file() -> None:
    command = _compose_command()
    if command is None:
        pytest.skip("neither `docker compose` nor docker-compose is installed")
    env = dict(os.environ, NEO4J_PASSWORD="example-password")
    ok = subprocess.run(
        [*command, "-f", str(COMPOSE), "config"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert ok.returncode == 0, ok.stderr
    env.pop("NEO4J_PASSWORD")
    missing = subprocess.run(
        [*command, "-f", str(COMPOSE), "config"],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=60,
    )
    assert missing.returncode != 0
    assert "NEO4J_PASSWORD" in missing.stderr
