"""Chaos: catalogd's cache directory is a small tmpfs (mounted by the test, as root; skipped where
that is not possible) that fills up while a new catalog image is pulled.

Asserts: the ClusterCatalog says why (Progressing Retrying naming "no space left on device"),
Serving stays True and the last good content keeps being served byte for byte (from the store,
not a half-written copy); once space is freed, the next poll serves the new content, and no pull
or store leftovers stay behind on the small file system.  The tmpfs is unmounted afterwards.

Runs its own catalogd (as its ServiceAccount, with config/rbac), no operator-controller.
"""

import pytest

import olmv1_chaos
from conftest import kubectl, unique
from olmv1_e2e import Catalogd, daemon_identity, system_rbac
from test_catalogd import apply_catalog, cond, get, push_catalog, render, subset
from test_image_push import SAMPLE20, olmv1, registry  # noqa: F401  (fixtures by name)

TMPFS_SIZE = "8m"  # a few times the catalogs below (store: JSON lines, their gzip, an index)


@pytest.fixture(scope="module")
def catalogd(crds, tmp_path_factory):
    if not SAMPLE20.is_dir():
        pytest.fail(f"{SAMPLE20} not found (set OLMV1_SHARED)")
    work = tmp_path_factory.mktemp("chaos-cache")
    with olmv1_chaos.tmpfs(work / "catalogd" / "cache", TMPFS_SIZE):
        system_ns = unique("olmv1-sys")
        kubectl("create", "namespace", system_ns)
        bindings = system_rbac(system_ns)
        d = Catalogd(work / "catalogd", identity=daemon_identity(work, system_ns, "catalogd-controller-manager"))
        d.created = []
        try:
            d.start()
            yield d
        finally:
            for n in d.created:
                kubectl("delete", "clustercatalog", n, "--ignore-not-found", "--wait=false", check=False)
            for n in d.created:
                kubectl("wait", "--for=delete", f"clustercatalog/{n}", "--timeout=60s", check=False)
            d.stop()  # before the unmount: it holds files there
            kubectl("delete", "namespace", system_ns, "--wait=false", "--ignore-not-found", check=False)
            for b in bindings:
                kubectl("delete", "clusterrolebinding", b, "--ignore-not-found", check=False)


# Each round pushes a new catalog while the cache has this much room left, so that the pull runs
# out of space at a different step: storing the download (nothing left), unpacking it (room for
# the 19 KiB layer, not its 160 KiB of YAML), writing the store (room for the layer and its
# 233 KiB of YAML; after the previous unpack is dropped, still less than the 240 KiB store).
# Whatever catalogd's order of steps, none of them fits: the old store stays until the swap.
ROUNDS = (
    (0, ["nutanixcsioperator"]),
    (64 << 10, ["isovalent-networking"]),
    (280 << 10, ["habana-ai-operator"]),
)


def test_full_cache_keeps_serving_the_last_good_content(catalogd, olmv1, registry, name, tmp_path):
    ref = f"{registry}/e2e/{name}:latest"
    src = subset(tmp_path, "v0", ["tigera-operator"])
    digest = push_catalog(olmv1, src, ref)
    apply_catalog(catalogd, name, ref)  # polls every second (catalogd's test override)
    expected = render(olmv1, src)
    catalogd.wait_for(lambda: catalogd.all(name) == (200, expected), "the first content")

    for i, (room, packages) in enumerate(ROUNDS, 1):
        filler = olmv1_chaos.fill(catalogd.cache, leave=room)
        try:
            new_src = subset(tmp_path, f"v{i}", packages)
            push_catalog(olmv1, new_src, ref)

            def retrying():
                o = get(name)
                p = cond(o, "Progressing")
                return o if p and p["reason"] == "Retrying" else None
            obj = catalogd.wait_for(retrying, f"Progressing Retrying on the full cache (round {i})")
            p, s = cond(obj, "Progressing"), cond(obj, "Serving")
            print(f"round {i}: {p['message']}")  # which step ran out: shown with -s, or on a failure
            assert p["status"] == "True" and "no space left on device" in p["message"].lower(), p
            assert (s["status"], s["reason"]) == ("True", "Available"), s
            assert obj["status"]["resolvedSource"]["image"]["ref"] == digest
            for _ in range(3):  # and again after more failed polls
                assert catalogd.all(name) == (200, expected)
                catalogd.wait_for(lambda: cond(get(name), "Progressing")["reason"] == "Retrying", "still retrying")
            assert catalogd.proc.poll() is None, catalogd.log_tail()
        finally:
            filler.unlink()

        expected = render(olmv1, new_src)
        catalogd.wait_for(lambda: catalogd.all(name) == (200, expected), f"the new content once there is room ({i})")
        obj = catalogd.wait_for(lambda: (lambda o: cond(o, "Progressing")["reason"] == "Succeeded" and o)(get(name)),
                                "Progressing Succeeded")
        digest = obj["status"]["resolvedSource"]["image"]["ref"]
        # What the failed pulls and stores wrote is gone: their temp dirs are dot-names
        # (".<digest>.pull-XXXXXX", "catalogs/.<name>-XXXXXX").
        leftovers = sorted(str(p.relative_to(catalogd.cache)) for p in catalogd.cache.rglob(".*"))
        assert not leftovers, leftovers
