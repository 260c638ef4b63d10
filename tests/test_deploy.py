"""deploy/ checked offline: the Kubernetes manifests against the Kubernetes schemas (kubernetes-validate
ships them), the Containerfile through hadolint, the compose fleet's haproxy.cfg through HAProxy's own
check, and the facts the three must agree on (probes, drain and grace periods, the settings they set)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from imqueue_mcp.server.hosting.lifecycle import IN_FLIGHT_GRACE_SECONDS

from conftest import require_external

REPO = Path(__file__).resolve().parents[1]
DEPLOY = REPO / "deploy"
KUBERNETES = DEPLOY / "kubernetes"
MANIFESTS = sorted(path for path in KUBERNETES.glob("*.yaml") if path.name != "kustomization.yaml")
CONTAINERFILE = DEPLOY / "Containerfile"
COMPOSE = DEPLOY / "compose" / "compose.yaml"
HAPROXY_CFG = DEPLOY / "compose" / "haproxy.cfg"
TOOLS = Path(sys.executable).parent


def manifest(kind: str) -> dict[str, Any]:
    for path in MANIFESTS:
        document: dict[str, Any] = yaml.safe_load(path.read_text())
        if document["kind"] == kind:
            return document
    raise AssertionError(f"no {kind} in {KUBERNETES}")


def container() -> dict[str, Any]:
    (only,) = manifest("Deployment")["spec"]["template"]["spec"]["containers"]
    return dict(only)


def environment() -> dict[str, str]:
    return {variable["name"]: variable["value"] for variable in container()["env"]}


def test_the_manifests_pass_the_kubernetes_schemas_strictly_and_offline() -> None:
    done = subprocess.run(
        [str(TOOLS / "kubernetes-validate"), "--strict", *map(str, MANIFESTS)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.count(" passed for resource ") == len(MANIFESTS) == 4
    kinds = {yaml.safe_load(path.read_text())["kind"] for path in MANIFESTS}
    assert kinds == {"Deployment", "Service", "HorizontalPodAutoscaler", "PodDisruptionBudget"}


def test_the_validator_refuses_a_misspelt_field(tmp_path: Path) -> None:
    broken = tmp_path / "deployment.yaml"
    broken.write_text(
        (KUBERNETES / "deployment.yaml").read_text().replace("readinessProbe:", "readinesProbe:")
    )
    done = subprocess.run(
        [str(TOOLS / "kubernetes-validate"), "--strict", str(broken)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode != 0 and "'readinesProbe' was unexpected" in done.stdout + done.stderr


def test_kustomization_lists_every_manifest() -> None:
    listed = yaml.safe_load((KUBERNETES / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == [path.name for path in MANIFESTS]


def test_readiness_probes_readyz_and_liveness_probes_healthz() -> None:
    probes = container()
    assert probes["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert probes["livenessProbe"]["httpGet"]["path"] == "/healthz"
    assert probes["readinessProbe"]["httpGet"]["port"] == probes["ports"][0]["name"]


def test_every_grace_period_outlasts_the_drain_and_the_in_flight_grace() -> None:
    """SIGKILL must never come while a replica drains or finishes its calls: the orchestrator's grace
    period is above --drain-seconds plus the time the server gives in-flight calls after it."""
    drain = float(environment()["IMQUEUE_MCP_DRAIN_SECONDS"])
    grace = manifest("Deployment")["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
    assert grace > drain + IN_FLIGHT_GRACE_SECONDS
    service = yaml.safe_load(COMPOSE.read_text())["services"]["imqueue-mcp"]
    compose_drain = float(service["environment"]["IMQUEUE_MCP_DRAIN_SECONDS"])
    assert float(service["stop_grace_period"].removesuffix("s")) > compose_drain + IN_FLIGHT_GRACE_SECONDS
    image_drain = re.search(r"IMQUEUE_MCP_DRAIN_SECONDS=(\d+)", CONTAINERFILE.read_text())
    assert image_drain and float(image_drain[1]) + IN_FLIGHT_GRACE_SECONDS < grace


def test_the_selectors_match_the_pods() -> None:
    labels = manifest("Deployment")["spec"]["template"]["metadata"]["labels"]
    for kind in ("Service", "PodDisruptionBudget"):
        spec = manifest(kind)["spec"]
        selector = spec["selector"].get("matchLabels", spec["selector"])
        assert selector.items() <= labels.items(), kind
    assert (
        manifest("HorizontalPodAutoscaler")["spec"]["scaleTargetRef"]["name"]
        == manifest("Deployment")["metadata"]["name"]
    )


def test_every_setting_deploy_sets_is_one_the_server_reads() -> None:
    known = set(
        re.findall(r"IMQUEUE_MCP_[A-Z_]+", "".join(p.read_text() for p in (REPO / "server").rglob("*.py")))
    )
    used = set(
        re.findall(r"IMQUEUE_MCP_[A-Z_]+", "".join(p.read_text() for p in DEPLOY.rglob("*") if p.is_file()))
    )
    used.discard("IMQUEUE_MCP_REPLICAS")  # compose's own variable, read by the compose file
    assert used and used <= known, used - known


def test_the_image_copies_every_package_the_wheel_holds() -> None:
    text = CONTAINERFILE.read_text()
    for package in ("ranker", "build_index", "server"):
        assert f"COPY {package} ./{package}" in text
    assert re.search(r"^USER \d+", text, re.MULTILINE), "the runtime image runs as a numeric non-root user"
    assert text.count("\nFROM ") >= 3, "multi-stage: build, snapshot, runtime"


def test_the_containerfile_passes_hadolint() -> None:
    done = subprocess.run(
        [str(TOOLS / "hadolint"), "--no-color", str(CONTAINERFILE)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_compose_fleets_haproxy_config_passes_haproxys_check() -> None:
    haproxy = shutil.which("haproxy")
    require_external(haproxy is not None, "HAProxy", "bash .ci/install-fleet.sh")
    assert haproxy is not None
    done = subprocess.run([haproxy, "-c", "-f", str(HAPROXY_CFG)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "option httpchk GET /readyz" in HAPROXY_CFG.read_text()
