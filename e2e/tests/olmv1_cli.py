"""Helpers of the `olmv1` cluster-command tests (test_cli_*.py): run the CLI, and build the
kubeconfigs they need (a context that points nowhere, a ServiceAccount's identity).

Stdlib, PyYAML and pytest only."""

import os
import subprocess
from pathlib import Path

import yaml

from conftest import REPO, kubectl

IDENTITY_SH = REPO / "e2e" / "cluster" / "identity.sh"

# Exit codes (cli/cluster/cluster.h, `olmv1 --help`).
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_NOT_FOUND, EXIT_FORBIDDEN, EXIT_UNREACHABLE = 0, 1, 2, 3, 4, 5
EXIT_NO_CATALOGS, EXIT_NO_MATCH, EXIT_INVALID, EXIT_CONFLICT, EXIT_TIMEOUT, EXIT_BLOCKED = 6, 7, 8, 9, 10, 11


def binary():
    return os.environ.get("OLMV1_BIN") or str(REPO / "build" / "cli" / "olmv1")


def run(*args, env=None, timeout=300, input=None):
    """Runs olmv1; returns (returncode, stdout, stderr) without stripping.  `env` entries are
    added to (None values removed from) the test's environment."""
    e = os.environ.copy()
    for k, v in (env or {}).items():
        if v is None:
            e.pop(k, None)
        else:
            e[k] = str(v)
    proc = subprocess.run([binary(), *[str(a) for a in args]], capture_output=True, text=True,
                          timeout=timeout, env=e, input=input)
    return proc.returncode, proc.stdout, proc.stderr


def ok(*args, **kw):
    """Runs olmv1 and asserts exit 0 with nothing on stderr but warnings; returns stdout."""
    rc, out, err = run(*args, **kw)
    assert rc == 0, f"olmv1 {' '.join(map(str, args))} exited {rc}\nstdout: {out}\nstderr: {err}"
    return out


def fails(code, *args, **kw):
    """Runs olmv1 and asserts exit `code` with exactly one line on stderr; returns that line."""
    rc, out, err = run(*args, **kw)
    assert rc == code, f"olmv1 {' '.join(map(str, args))} exited {rc}, wanted {code}\nstdout: {out}\nstderr: {err}"
    lines = err.splitlines()
    assert len(lines) == 1, f"wanted one line on stderr, got:\n{err}"
    return lines[0]


def table(out):
    """A kubectl-style table as a list of dicts keyed by the header words."""
    lines = [ln for ln in out.splitlines() if ln.strip()]
    header = lines[0]
    # Column starts: where a header word begins after a run of 3+ spaces (or at 0).
    starts = [0]
    i = 0
    while True:
        j = header.find("   ", i)
        if j < 0:
            break
        k = j
        while k < len(header) and header[k] == " ":
            k += 1
        if k >= len(header):
            break
        starts.append(k)
        i = k
    names = [header[s:e].strip() for s, e in zip(starts, starts[1:] + [None])]
    rows = []
    for ln in lines[1:]:
        cells = [ln[s:e].strip() if s < len(ln) else "" for s, e in zip(starts, starts[1:] + [None])]
        rows.append(dict(zip(names, cells)))
    return rows


def identity(work, namespace, service_account):
    """A kubeconfig authenticating as <namespace>/<service_account> (created if missing)."""
    out = Path(work) / f"{namespace}-{service_account}.kubeconfig"
    proc = subprocess.run(["bash", str(IDENTITY_SH), "--service-account", f"{namespace}/{service_account}",
                           "--out", str(out), "--duration", "2h"],
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 0, f"identity.sh failed:\n{proc.stderr}"
    return out


def two_context_kubeconfig(work):
    """A copy of $KUBECONFIG whose current-context points at a closed port; its real context is
    named "real"."""
    with open(os.environ["KUBECONFIG"], encoding="utf-8") as f:
        cfg = yaml.safe_load(f)
    current = next(c for c in cfg["contexts"] if c["name"] == cfg["current-context"])
    real_cluster = next(c for c in cfg["clusters"] if c["name"] == current["context"]["cluster"])
    dead = {"name": "dead", "cluster": dict(real_cluster["cluster"], server="https://127.0.0.1:1")}
    cfg["clusters"].append(dead)
    cfg["contexts"] = [{"name": "real", "context": dict(current["context"])},
                       {"name": "dead", "context": dict(current["context"], cluster="dead")}]
    cfg["current-context"] = "dead"
    out = Path(work) / "two-contexts.kubeconfig"
    out.write_text(yaml.safe_dump(cfg))
    return out


def delete_quietly(*args):
    kubectl("delete", *args, "--ignore-not-found", "--wait=false", check=False)


# ---------------------------------------------------------------- catalogd behind a Service

TLS_DIR = REPO / "util" / "tests" / "fixtures" / "tls"  # server.crt: self-signed, 127.0.0.1 and localhost


def restart_catalogd_tls(env):
    """Restarts the olm_env's catalogd serving HTTPS (the test certificate) with status.urls.base
    https://catalogd-service.<system ns>.svc/catalogs/<name>, as on a real cluster."""
    import olmv1_e2e
    cd = env["catalogd"]
    cd.stop()
    cd.starts += 1
    cd.log_path = cd.workdir / f"catalogd-{cd.starts}.log"
    e = os.environ.copy()
    e["KUBECONFIG"] = str(cd.identity)
    cmd = [olmv1_e2e.CATALOGD, "--cache-dir", str(cd.cache),
           "--catalogs-server-addr", f"127.0.0.1:{cd.port}",
           "--health-probe-bind-address", f"127.0.0.1:{cd.health_port}",
           "--tls-cert", str(TLS_DIR / "server.crt"), "--tls-key", str(TLS_DIR / "server.key"),
           "--external-address", f"catalogd-service.{env['system_ns']}.svc",
           "--gc-interval", "1h", "--poll-interval-override-seconds", "1"]
    cd.spawn(cmd, "wb", e)
    env["catalogd_tls"] = True
    cd.wait_for(lambda: olmv1_e2e.http(f"http://127.0.0.1:{cd.health_port}/healthz", timeout=2)[0] == 200,
                "catalogd (https) to answer")


def catalogd_service(env):
    """A kwok Pod (which gets a pod IP) and the Service catalogd-service (https 443 -> catalogd's
    port) in the system namespace: the apiserver's service proxy then reaches catalogd through
    the egress proxy (egress_proxy.py)."""
    ns, app = env["system_ns"], "catalogd-e2e"
    kubectl("apply", "-f", "-", input={"apiVersion": "v1", "kind": "List", "items": [
        {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "catalogd", "namespace": ns, "labels": {"app": app}},
         "spec": {"nodeName": "kwok-node-0", "containers": [{"name": "catalogd", "image": "example.com/catalogd"}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "catalogd-service", "namespace": ns},
         "spec": {"selector": {"app": app},
                  "ports": [{"name": "https", "port": 443, "targetPort": env["catalogd"].port}]}}]})
    import olmv1_e2e
    olmv1_e2e.poll(lambda: kubectl("get", "endpoints", "catalogd-service", "-n", ns, "-o",
                                   "jsonpath={.subsets[0].addresses[0].ip}").stdout.strip(),
                   "catalogd-service endpoints")


def direct_env(env):
    """Environment entries that make olmv1 read catalogd directly instead of through the proxy."""
    if env.get("catalogd_tls"):
        return {"OLMV1_CATALOGD_URL": f"https://127.0.0.1:{env['catalogd'].port}",
                "OLMV1_CATALOGD_CA_FILE": str(TLS_DIR / "server.crt")}
    return {"OLMV1_CATALOGD_URL": f"http://127.0.0.1:{env['catalogd'].port}", "OLMV1_CATALOGD_CA_FILE": None}


def proxy_env():
    """Environment entries that make olmv1 use the service proxy whatever the caller has set."""
    return {"OLMV1_CATALOGD_URL": None, "OLMV1_CATALOGD_CA_FILE": None}
