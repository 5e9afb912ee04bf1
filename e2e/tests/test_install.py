"""The product as a cluster administrator installs it: images and the install file.

* `scripts/images.sh` (make images) builds both daemon images without a container engine and
  pushes them to the test registry; a second build gives the same digests.
* Each image's config says how it runs (Entrypoint, numeric non-root User, OCI labels), read
  back with skopeo, an independent implementation.
* Each image runs on its own: pulled with `olmv1 image pull`, its Entrypoint is started with
  `version` inside the unpacked root (chroot) as the image's user, and exits 0, which proves
  the image carries every library the daemon loads; so does the command upstream's install
  manifests give it (`./catalogd`, `/operator-controller`).
* images/rootfs.sh refuses a library from a package the runtime list does not name.
* `scripts/manifests.sh` (make manifests) renders dist/olmv1-install.yaml with those digests,
  and the apiserver accepts every object of it (`kubectl apply --server-side --dry-run=server`).
"""

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from conftest import REPO, kubectl

OLMV1 = Path(os.environ.get("OLMV1_BIN") or REPO / "build" / "cli" / "olmv1")
DAEMONS = ("catalogd", "operator-controller")
DIGEST_REF = re.compile(r"^(?P<name>[^@\s]+)@(?P<digest>sha256:[0-9a-f]{64})$")


def _images(work, tmp_name):
    """Runs make images' script into `work`; returns {daemon: ref@digest} from images.env."""
    env = dict(os.environ, IMAGE_REGISTRY=os.environ["OLMV1_REGISTRY"], VERSION="e2e",
               OLMV1_DIST_DIR=str(work / tmp_name), OLMV1_IMAGES_WORK=str(work / (tmp_name + "-roots")))
    proc = subprocess.run(["bash", str(REPO / "scripts" / "images.sh")], env=env, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    printed = proc.stdout.split()
    assert len(printed) == 2 and all(DIGEST_REF.match(r) for r in printed), proc.stdout
    refs = dict(line.split("=", 1) for line in (work / tmp_name / "images.env").read_text().split())
    assert sorted(refs.values()) == sorted(printed)
    return {"catalogd": refs["CATALOGD_IMAGE"], "operator-controller": refs["OPERATOR_CONTROLLER_IMAGE"]}


@pytest.fixture(scope="module")
def images(tmp_path_factory):
    if "OLMV1_REGISTRY" not in os.environ:
        pytest.skip("needs OLMV1_REGISTRY (run through e2e/run-tests.sh)")
    work = tmp_path_factory.mktemp("images")
    first = _images(work, "a")
    return work, first


def test_same_inputs_give_the_same_digests(images):
    work, first = images
    second = _images(work, "b")
    assert second == first


def test_image_config_runs_the_daemon_as_a_numeric_non_root_user(images):
    _, refs = images
    if not shutil.which("skopeo"):
        pytest.skip("skopeo is not installed (make deps installs it)")
    for name, ref in refs.items():
        proc = subprocess.run(["skopeo", "inspect", "--tls-verify=false", "--config", "docker://" + ref],
                              capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        cfg = json.loads(proc.stdout)["config"]
        assert cfg["Entrypoint"] == [f"/usr/local/bin/{name}"]
        assert cfg["User"] == "65532:65532"
        labels = cfg["Labels"]
        assert labels["org.opencontainers.image.title"] == name
        assert labels["org.opencontainers.image.version"] == "e2e"
        assert re.fullmatch(r"[0-9a-f]{40}|unknown", labels["org.opencontainers.image.revision"])
        for key in ("org.opencontainers.image.source", "org.opencontainers.image.licenses"):
            assert labels[key]


@pytest.mark.parametrize("name", DAEMONS)
def test_image_runs_on_its_own_as_its_user(images, tmp_path, name):
    _, refs = images
    if os.geteuid() != 0:
        pytest.skip("chroot needs root")
    root = tmp_path / "root"
    pulled = subprocess.run([str(OLMV1), "image", "pull", "-q", refs[name], str(root)], capture_output=True,
                            text=True, timeout=300)
    assert pulled.returncode == 0, pulled.stderr
    passwd = (root / "etc" / "passwd").read_text()
    assert "nonroot:x:65532:65532:" in passwd
    assert (root / "etc" / "ssl" / "certs" / "ca-certificates.crt").stat().st_size > 0
    chroot = shutil.which("chroot") or "/usr/sbin/chroot"
    run = subprocess.run([chroot, "--userspec=65532:65532", str(root), f"/usr/local/bin/{name}", "version"],
                         capture_output=True, text=True, timeout=60, env={"PATH": "/usr/local/bin"})
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith(name + " "), run.stdout
    # Upstream's install manifests start the daemons as "./catalogd" (from the working
    # directory, /) and "/operator-controller": the same images run under them.
    upstream_command = {"catalogd": "./catalogd", "operator-controller": "/operator-controller"}[name]
    run = subprocess.run([chroot, "--userspec=65532:65532", str(root), upstream_command, "version"],
                         capture_output=True, text=True, timeout=60, env={"PATH": "/usr/local/bin"})
    assert run.returncode == 0 and run.stdout.startswith(name + " "), (run.stdout, run.stderr)


def test_rootfs_refuses_a_library_from_an_unlisted_package(tmp_path):
    narrowed = tmp_path / "packages.txt"
    full = (REPO / "images" / "runtime-packages.txt").read_text().split("\n")
    narrowed.write_text("\n".join(p for p in full if p != "libjansson4") + "\n")
    proc = subprocess.run(["bash", str(REPO / "images" / "rootfs.sh"), str(REPO / "build" / "catalogd" / "catalogd"),
                           str(tmp_path / "root")], env=dict(os.environ, OLMV1_RUNTIME_PACKAGES=str(narrowed)),
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "libjansson" in proc.stderr and "comes from libjansson4" in proc.stderr, proc.stderr


def test_install_file_is_accepted_by_the_apiserver(images):
    work, refs = images
    env = dict(os.environ, OLMV1_DIST_DIR=str(work / "a"))
    proc = subprocess.run(["bash", str(REPO / "scripts" / "manifests.sh")], env=env, capture_output=True, text=True,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    install = work / "a" / "olmv1-install.yaml"
    docs = [d for d in yaml.safe_load_all(install.read_text()) if d]
    kinds = {d["kind"] for d in docs}
    assert {"Namespace", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding",
            "ServiceAccount", "Service", "Deployment", "NetworkPolicy", "PodDisruptionBudget"} <= kinds
    images_used = sorted(c["image"] for d in docs if d["kind"] == "Deployment"
                         for c in d["spec"]["template"]["spec"]["containers"])
    assert images_used == sorted(refs.values())
    # Server dry-run checks namespaced objects against an existing namespace.
    kubectl("create", "namespace", "olmv1-system", check=False)
    kubectl("apply", "--server-side", "--dry-run=server", "-f", str(install))
