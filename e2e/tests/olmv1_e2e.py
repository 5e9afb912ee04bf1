"""Shared machinery of the catalogd / operator-controller end-to-end tests.

- the daemons: Catalogd and Controller (operator-controller) run as subprocesses on free 127.0.0.1
  ports with temporary cache dirs and are stopped by PID (SIGTERM, exit 0 expected);
- olm_env(): a system namespace + catalogd + operator-controller for a test module, torn down with
  the extensions and catalogs the module created.  The daemons run as their ServiceAccounts in that
  namespace with exactly the RBAC of config/rbac (system_rbac()), never as the admin: every
  operator-controller test also proves that its least-privilege role is enough;
- bundles and catalogs pushed to the test registry with `olmv1 bundle push` / `olmv1 catalog push`
  (writers in olmv1_bundles.py), ClusterCatalogs and ClusterExtensions applied with kubectl;
- the install namespace of a test: a ServiceAccount "installer" bound to a ClusterRole (`ns` fixture);
- polling waits with generous deadlines (nothing asserts timing).

Stdlib, PyYAML and pytest only.
"""

import contextlib
import os
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

import olmv1_bundles
from conftest import REPO, kubectl, kubectl_json, unique

OPCTL = os.environ.get("OLMV1_OPERATOR_CONTROLLER") or str(REPO / "build" / "controller" / "operator-controller")
CATALOGD = os.environ.get("OLMV1_CATALOGD") or str(REPO / "build" / "catalogd" / "catalogd")
WAIT = 180  # seconds, operator-controller waits; retries back off exponentially, so be generous
CATALOGD_WAIT = 90  # seconds, catalogd waits; generous for a loaded 2-core machine
RECORD_PREFIX = "olmv1-install-"
OWNER_LABEL = "olm.operatorframework.io/owner-name"


# ---------------------------------------------------------------- small helpers


def olmv1(*args):
    """Runs the olmv1 CLI (OLMV1_BIN); asserts success; returns stdout stripped."""
    binary = os.environ.get("OLMV1_BIN") or str(REPO / "build" / "cli" / "olmv1")
    rc, out, err = olmv1_bundles.run_olmv1(binary, *args)
    assert rc == 0, f"olmv1 {' '.join(args)} exited {rc}\n{err}"
    return out


def write_yaml(path, doc):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc, sort_keys=False))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http(url, timeout=10):
    """(status, body bytes) of a GET; HTTP errors are returned, not raised."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def poll(fn, what, daemon=None, timeout=WAIT, interval=0.3):
    """Calls fn until it returns something true, and returns that.  Exceptions of the kinds a
    not-yet-there object raises count as "not yet".  Fails when `daemon` (if given) exits, or at the
    deadline, showing the last value and the daemon's log tail."""
    deadline = time.time() + timeout
    last = None
    while True:
        try:
            last = fn()
            if last:
                return last
        except (OSError, AssertionError, KeyError, IndexError, TypeError, ValueError) as e:
            last = e
        if daemon is not None and daemon.proc is not None and daemon.proc.poll() is not None:
            raise AssertionError(f"{daemon.label} exited {daemon.proc.returncode} while waiting for {what}\n"
                                 f"{daemon.log_tail()}")
        if time.time() > deadline:
            raise AssertionError(f"timed out waiting for {what} (last: {last!r})\n"
                                 f"{daemon.log_tail() if daemon else ''}")
        time.sleep(interval)


def wait_for(fn, what, ctl=None, timeout=WAIT):
    """poll() with the operator-controller deadline; `ctl` is the Controller to watch (or None)."""
    return poll(fn, what, ctl, timeout)


# ---------------------------------------------------------------- daemons


class Daemon:
    """A subprocess started by the tests, stopped by PID with SIGTERM (exit status 0 expected)."""

    label = "daemon"
    wait_timeout = WAIT
    wait_interval = 0.3

    def __init__(self, workdir):
        self.workdir = Path(workdir)
        self.proc = None
        self.log_path = None

    def spawn(self, cmd, log_mode, env=None):
        with open(self.log_path, log_mode) as log:
            self.proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env or os.environ.copy())

    def stop(self):
        if self.proc is None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise AssertionError(f"{self.label} did not stop on SIGTERM\n{self.log_tail()}")
        finally:
            self.proc = None
        assert rc == 0, f"{self.label} exited {rc}\n{self.log_tail()}"

    def log_text(self):
        return self.log_path.read_text(errors="replace")

    def log_tail(self, n=40):
        try:
            lines = self.log_path.read_text(errors="replace").splitlines()
        except (OSError, AttributeError):
            return "(no log)"
        return f"---- {self.label} log (tail)\n" + "\n".join(lines[-n:])

    def wait_for(self, fn, what, timeout=None):
        return poll(fn, what, self, timeout or self.wait_timeout, self.wait_interval)


class Catalogd(Daemon):
    """One catalogd process at a time over a fixed cache dir and ports.  Started with the test-only
    --poll-interval-override-seconds 1, so a catalog with pollIntervalMinutes polls every second."""

    label = "catalogd"
    wait_timeout = CATALOGD_WAIT
    wait_interval = 0.2

    def __init__(self, workdir, identity=None, extra=(), env=None):
        super().__init__(workdir)
        self.identity = identity  # the kubeconfig every start runs with (None: $KUBECONFIG)
        self.extra = list(extra)  # flags of every start
        self.env = dict(env or {})  # environment variables of every start (HTTPS_PROXY, ...)
        self.cache = self.workdir / "cache"
        self.port = free_port()
        self.health_port = free_port()
        self.starts = 0

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self, kubeconfig=None, extra=()):
        assert self.proc is None
        self.starts += 1
        self.log_path = self.workdir / f"catalogd-{self.starts}.log"
        kubeconfig = kubeconfig or self.identity  # kubeconfig: this start only; identity: every start
        env = os.environ.copy()
        env.update(self.env)
        if kubeconfig:
            env["KUBECONFIG"] = str(kubeconfig)
        cmd = [CATALOGD, "--cache-dir", str(self.cache),
               "--catalogs-server-addr", f"127.0.0.1:{self.port}",
               "--health-addr", f"127.0.0.1:{self.health_port}",
               "--gc-interval", "1h", "--poll-interval-override-seconds", "1", *self.extra, *extra]
        self.spawn(cmd, "wb", env)
        self.wait_for(lambda: http(f"{self.base}/healthz", timeout=2)[0] == 200, "the server to answer")

    def all(self, name):
        return http(f"{self.base}/catalogs/{name}/api/v1/all")

    def store_dir(self, name):
        return self.cache / "catalogs" / name


class Controller(Daemon):
    """One operator-controller process (--drift-repair-interval 2s unless told otherwise; "0" leaves
    drift repair to the watches alone); its log is appended to across restarts."""

    label = "operator-controller"

    def __init__(self, workdir, system_ns, identity=None, drift_repair_interval="2s", extra=()):
        super().__init__(workdir)
        self.identity = identity  # the kubeconfig every start runs with (None: $KUBECONFIG)
        self.extra = list(extra)  # flags of every start
        self.drift_repair_interval = drift_repair_interval
        self.system_ns = system_ns
        self.port = free_port()
        self.log_path = self.workdir / "operator-controller.log"

    def start(self, kubeconfig=None):
        """kubeconfig: the identity for this start only (default: self.identity, else $KUBECONFIG)."""
        kubeconfig = kubeconfig or self.identity
        env = os.environ.copy()
        if kubeconfig:
            env["KUBECONFIG"] = str(kubeconfig)
        cmd = [OPCTL, "--system-namespace", self.system_ns, "--cache-path", str(self.workdir / "cache"),
               "--health-addr", f"127.0.0.1:{self.port}", "--drift-repair-interval", self.drift_repair_interval,
               *self.extra]
        self.spawn(cmd, "ab", env)
        wait_for(lambda: http(f"http://127.0.0.1:{self.port}/readyz", timeout=2)[0] == 200,
                 "operator-controller to be ready", self)

# ---------------------------------------------------------------- a module's environment


def require_binaries():
    for b in (OPCTL, CATALOGD):
        if not os.access(b, os.X_OK):
            pytest.fail(f"{b} is not built (make build)")
    registry = os.environ.get("OLMV1_REGISTRY")
    if not registry:
        pytest.fail("OLMV1_REGISTRY is not set; run through e2e/run-tests.sh")
    return registry


RBAC_DIR = REPO / "config" / "rbac"
IDENTITY_SH = REPO / "e2e" / "cluster" / "identity.sh"
DAEMON_SAS = ("catalogd-controller-manager", "operator-controller-controller-manager")


def system_rbac(system_ns):
    """config/rbac applied for the daemons' ServiceAccounts in `system_ns` instead of olmv1-system:
    the ServiceAccounts, Roles and RoleBindings move into it, each ClusterRoleBinding is copied
    under a name of its own binding the moved ServiceAccounts, and the ClusterRoles are applied as
    they are.  Returns the names of the ClusterRoleBinding copies (to delete afterwards)."""
    docs, bindings = [], []
    for f in sorted(RBAC_DIR.glob("*.yaml")):
        with open(f, encoding="utf-8") as fh:
            for d in yaml.safe_load_all(fh):
                if not d:
                    continue
                kind, meta = d["kind"], d["metadata"]
                if kind in ("ServiceAccount", "Role", "RoleBinding"):
                    meta["namespace"] = system_ns
                if kind == "ClusterRoleBinding":
                    meta["name"] = f"{meta['name']}-{system_ns}"
                    bindings.append(meta["name"])
                for subject in d.get("subjects", []):
                    if subject.get("kind") == "ServiceAccount":
                        subject["namespace"] = system_ns
                docs.append(d)
    kubectl("apply", "-f", "-", input={"apiVersion": "v1", "kind": "List", "items": docs})
    return bindings


def daemon_identity(work, system_ns, service_account):
    """A kubeconfig authenticating as <system_ns>/<service_account> (e2e/cluster/identity.sh)."""
    out = Path(work) / "identities" / f"{service_account}.kubeconfig"
    proc = subprocess.run(["bash", str(IDENTITY_SH), "--service-account", f"{system_ns}/{service_account}",
                           "--out", str(out), "--duration", "24h"],
                          capture_output=True, text=True, timeout=120, env=os.environ.copy())
    assert proc.returncode == 0, f"identity.sh failed:\n{proc.stderr}"
    return out


@contextlib.contextmanager
def controller_env(work, cluster_admin=False, **controller_args):
    """operator-controller alone (no catalogd: the ClusterObjectSet tests) in a system namespace of
    its own with config/rbac's RBAC; `cluster_admin` binds its ServiceAccount to cluster-admin as
    well (upstream's rights).  controller_args go to Controller.  Yields the started Controller."""
    require_binaries()
    system_ns = unique("olmv1-sys")
    kubectl("create", "namespace", system_ns)
    bindings = system_rbac(system_ns)
    sa = "operator-controller-controller-manager"
    if cluster_admin:
        bindings.append(f"e2e-cluster-admin-{system_ns}")
        kubectl("create", "clusterrolebinding", bindings[-1], "--clusterrole=cluster-admin",
                f"--serviceaccount={system_ns}:{sa}")
    c = Controller(work, system_ns, identity=daemon_identity(work, system_ns, sa), **controller_args)
    c.start()
    try:
        yield c
    finally:
        c.stop()
        kubectl("delete", "namespace", system_ns, "--wait=false", "--ignore-not-found", check=False)
        for b in bindings:
            kubectl("delete", "clusterrolebinding", b, "--ignore-not-found", check=False)


@contextlib.contextmanager
def olm_env(work, label, drift_repair_interval="2s", catalogd_extra=(), ctl_extra=(), kubeconfig_hook=None,
            system_ns=None):
    """A system namespace, catalogd and operator-controller over the directory `work` (with the
    extra flags catalogd_extra and ctl_extra).
    `kubeconfig_hook(path)`, if given, may rewrite each daemon's kubeconfig before they start
    (the chaos tests point them at a front of the apiserver).  `system_ns`: the system namespace's
    name (default: a unique one), for flags that must name it before it exists.

    Yields a dict: registry, work, ctl (Controller), catalogd, system_ns, label (the ClusterCatalog
    label key whose value is the package name, which extensions select on), and the lists catalogs,
    ces and packages that the helpers below fill.  On exit: the extensions first (by name, or by
    package), while the controller can still uninstall them, then the controller, the catalogs,
    catalogd and the system namespace."""
    registry = require_binaries()
    work = Path(work)
    system_ns = system_ns or unique("olmv1-sys")
    kubectl("create", "namespace", system_ns)
    bindings = system_rbac(system_ns)
    catalogd_id, opctl_id = (daemon_identity(work, system_ns, sa) for sa in DAEMON_SAS)
    if kubeconfig_hook:
        kubeconfig_hook(catalogd_id)
        kubeconfig_hook(opctl_id)
    catalogd = Catalogd(work / "catalogd", identity=catalogd_id, extra=catalogd_extra)  # restarts keep both
    catalogd.workdir.mkdir()
    ctl = Controller(work, system_ns, identity=opctl_id, drift_repair_interval=drift_repair_interval,
                     extra=ctl_extra)
    env = {"registry": registry, "work": work, "ctl": ctl, "catalogd": catalogd, "system_ns": system_ns,
           "label": label, "catalogs": [], "ces": [], "packages": []}
    try:
        catalogd.start()
        ctl.start()
        yield env
    finally:
        try:
            for ce in kubectl_json("get", "clusterextensions").get("items", []):
                if (ce["metadata"]["name"] in env["ces"]
                        or ce["spec"]["source"]["catalog"]["packageName"] in env["packages"]):
                    kubectl("delete", "clusterextension", ce["metadata"]["name"], "--ignore-not-found",
                            "--wait=true", "--timeout=60s", check=False)
            ctl.stop()
        finally:
            for cat in env["catalogs"]:
                kubectl("delete", "clustercatalog", cat, "--wait=false", "--ignore-not-found", check=False)
            catalogd.stop()
            kubectl("delete", "namespace", system_ns, "--wait=false", "--ignore-not-found", check=False)
            for b in bindings:
                kubectl("delete", "clusterrolebinding", b, "--ignore-not-found", check=False)


def push_bundles(env, pkg, versions, **bundle_args):
    """Writes and pushes a bundle per version (olmv1_bundles.write_bundle with bundle_args) to
    <registry>/e2e/<pkg>-bundle:v<version>; returns {version: digest ref}."""
    if pkg not in env["packages"]:
        env["packages"].append(pkg)
    images = {}
    for v in versions:
        d = olmv1_bundles.write_bundle(env["work"] / pkg, pkg, v, **bundle_args)
        images[v] = olmv1("bundle", "push", "-q", str(d), f"{env['registry']}/e2e/{pkg}-bundle:v{v}")
    return images


def push_catalog(env, pkg, images, chain, tag, extra_blobs=()):
    """Pushes a catalog of <pkg>, channel "stable" with the versions of `chain` in order, each
    replacing the one before, to <registry>/e2e/<pkg>-catalog:<tag>; returns the tag reference."""
    d = olmv1_bundles.write_catalog(env["work"] / pkg / f"catalog-{tag}-{len(chain)}", pkg, images, chain,
                                    extra_blobs)
    ref = f"{env['registry']}/e2e/{pkg}-catalog:{tag}"
    olmv1("catalog", "push", "-q", str(d), ref)
    return ref


def create_catalog(env, pkg, ref, priority=0, poll=False, labels=None):
    """A ClusterCatalog of `ref`, labelled <env label>=<pkg> (or `labels`); waits until it is Serving."""
    name = unique("opcat")
    image = {"ref": ref}
    if poll:
        image["pollIntervalMinutes"] = 1  # catalogd polls every second here (override)
    spec = {"source": {"type": "Image", "image": image}}
    if priority:
        spec["priority"] = priority
    env["catalogs"].append(name)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
        "metadata": {"name": name, "labels": labels or {env["label"]: pkg}}, "spec": spec})
    kubectl("wait", f"clustercatalog/{name}", "--for=condition=Serving=True", f"--timeout={WAIT}s")
    return name


def apply_ce(env, pkg, ce_name, ns, version=None, policy=None, channels=None, config=None, selector=None,
             service_account="installer"):
    """kubectl apply of a ClusterExtension installing <pkg> from the catalogs labelled for it (or
    those `selector` selects), into namespace <ns> as ServiceAccount "installer" (`service_account`
    None: no spec.serviceAccount, as upstream's ClusterExtensions are written)."""
    catalog = {"packageName": pkg, "selector": selector or {"matchLabels": {env["label"]: pkg}}}
    if channels is not None:
        catalog["channels"] = channels
    if version:
        catalog["version"] = version
    if policy:
        catalog["upgradeConstraintPolicy"] = policy
    spec = {"namespace": ns, "source": {"sourceType": "Catalog", "catalog": catalog}}
    if service_account:
        spec["serviceAccount"] = {"name": service_account}
    if config is not None:
        spec["config"] = config
    if ce_name not in env["ces"]:
        env["ces"].append(ce_name)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterExtension",
        "metadata": {"name": ce_name}, "spec": spec})


def conditions(ce_name):
    """(the ClusterExtension, {type: condition})."""
    obj = kubectl_json("get", "clusterextension", ce_name)
    return obj, {c["type"]: c for c in obj.get("status", {}).get("conditions", [])}


def wait_installed(env, ce_name, bundle_name, version):
    """Installed=True with the bundle, Progressing Succeeded, observedGeneration current; returns the
    conditions."""
    def check():
        obj, c = conditions(ce_name)
        inst = obj.get("status", {}).get("install", {}).get("bundle", {})
        return (inst.get("version") == version and inst.get("name") == bundle_name
                and c.get("Installed", {}).get("status") == "True"
                and c.get("Progressing", {}).get("reason") == "Succeeded"
                and c["Progressing"].get("observedGeneration") == obj["metadata"]["generation"] and c)
    return wait_for(check, f"{ce_name} to install {bundle_name}", env["ctl"])


def wait_progressing(env, ce_name, status, reason, contains):
    """Progressing with that status (None: any), reason and a message containing `contains`; returns
    the conditions."""
    def check():
        _, c = conditions(ce_name)
        p = c.get("Progressing", {})
        return ((status is None or p.get("status") == status) and p.get("reason") == reason
                and contains in p.get("message", "") and c)
    what = f"{ce_name} Progressing {status + '/' if status else ''}{reason} with {contains!r}"
    return wait_for(check, what, env["ctl"])


def configmap_version(pkg, ns):
    return kubectl_json("get", "configmap", f"{pkg}-config", "-n", ns)["data"]["version"]


def installed_objects(pkg, ns, ce_name, system_ns):
    """The UIDs of a test bundle's namespaced objects, the names of the cluster-scoped objects the
    extension owns, and its install record."""
    names = {}
    for args in (("deployment", f"{pkg}-manager", "-n", ns), ("configmap", f"{pkg}-config", "-n", ns),
                 ("serviceaccount", f"{pkg}-manager", "-n", ns)):
        obj = kubectl_json("get", *args)
        names[args[0]] = obj["metadata"]["uid"]
    owned = kubectl("get", "clusterroles,clusterrolebindings", "-l",
                    f"{OWNER_LABEL}={ce_name}", "-o", "name").stdout.split()
    rec = kubectl_json("get", "secret", f"{RECORD_PREFIX}{ce_name}", "-n", system_ns)
    return names, sorted(owned), rec


def snapshot(pkg, ns, ce_name, system_ns):
    """What must not change while an extension is kept: the objects' UIDs, the owned cluster-scoped
    objects, the install record's UID and data."""
    uids, owned, rec = installed_objects(pkg, ns, ce_name, system_ns)
    return uids, owned, rec["metadata"]["uid"], rec["data"]


def delete_ce(ce_name):
    kubectl("delete", "clusterextension", ce_name, "--wait=true", f"--timeout={WAIT}s")


def assert_nothing_installed(pkg, ns, ce_name, system_ns):
    """Neither the Deployment nor the ConfigMap of <pkg> in <ns>, nor an install record of <ce_name>."""
    for args in (("deployment", f"{pkg}-manager", "-n", ns), ("configmap", f"{pkg}-config", "-n", ns),
                 ("secret", f"{RECORD_PREFIX}{ce_name}", "-n", system_ns)):
        out = kubectl("get", *args, "--ignore-not-found", "-o", "name").stdout.strip()
        assert out == "", f"{args} exists although nothing was installed"


# ---------------------------------------------------------------- install namespaces and RBAC


SA_RULES_FULL = [
    {"apiGroups": [""], "resources": ["configmaps", "serviceaccounts", "services"], "verbs": ["*"]},
    {"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["*"]},
    {"apiGroups": ["rbac.authorization.k8s.io"],
     "resources": ["clusterroles", "clusterrolebindings", "roles", "rolebindings"],
     "verbs": ["*"]},
]


def setup_namespace(ns, rules):
    """Namespace + ServiceAccount "installer" bound to a ClusterRole "<ns>-installer" with `rules`."""
    kubectl("create", "namespace", ns)
    setup_installer(ns, rules)


def setup_installer(ns, rules):
    """ServiceAccount "installer" in the existing namespace <ns>, bound to ClusterRole
    "<ns>-installer" with `rules`."""
    kubectl("create", "serviceaccount", "installer", "-n", ns)
    set_rules(ns, rules)
    kubectl("apply", "-f", "-", input={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": f"{ns}-installer"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": f"{ns}-installer"},
        "subjects": [{"kind": "ServiceAccount", "name": "installer", "namespace": ns}]})


def set_rules(ns, rules):
    kubectl("apply", "-f", "-", input={
        "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": f"{ns}-installer"}, "rules": rules})


def delete_namespace(ns):
    """Deletes what setup_namespace created (without waiting for the namespace to go)."""
    kubectl("delete", "namespace", ns, "--wait=false", "--ignore-not-found", check=False)
    kubectl("delete", "clusterrolebinding", f"{ns}-installer", "--ignore-not-found", check=False)
    kubectl("delete", "clusterrole", f"{ns}-installer", "--ignore-not-found", check=False)


@pytest.fixture
def ns(name):
    """The test's install namespace (its unique name cut to 50 characters), with ServiceAccount
    "installer" allowed SA_RULES_FULL.  A module using it imports it (`from olmv1_e2e import ns`);
    the module-scoped environment fixture is set up before it, being of a wider scope."""
    n = name[:50]
    setup_namespace(n, SA_RULES_FULL)
    yield n
    delete_namespace(n)
