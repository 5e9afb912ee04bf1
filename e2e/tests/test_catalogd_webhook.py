"""catalogd's ClusterCatalog mutating webhook, the one upstream's install manifests register with
failurePolicy Fail (issue 28 item 2): a real kube-apiserver calls it over HTTPS on
--webhook-server-port, and every ClusterCatalog created or updated carries the label
olm.operatorframework.io/metadata.name=<name> in the very response of the create or update,
before any reconcile could have set it.  The registration is upstream's (matchConditions,
rules), with a URL instead of its Service (no Pod here) and the test certificate's CA.
"""

import base64
import json
import os
import socket
import ssl
import subprocess

import pytest

from conftest import kubectl, kubectl_json, unique
from olmv1_e2e import CATALOGD, free_port, poll
from test_tls import TLS

NAME_LABEL = "olm.operatorframework.io/metadata.name"
PATH = "/mutate-olm-operatorframework-io-v1-clustercatalog"
MATCH = ("'name' in object.metadata && (!has(object.metadata.labels) || !('olm.operatorframework.io/metadata.name' "
         "in object.metadata.labels) || object.metadata.labels['olm.operatorframework.io/metadata.name'] "
         "!= object.metadata.name)")


def tls_up(port):
    ctx = ssl.create_default_context(cafile=str(TLS / "server.crt"))
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as raw:
            with ctx.wrap_socket(raw, server_hostname="127.0.0.1"):
                return True
    except OSError:
        return False


@pytest.fixture
def webhook(crds, tmp_path):
    port, hook = free_port(), unique("catalogd-webhook")
    log = tmp_path / "catalogd.log"
    # The webhook needs no API server: this catalogd reconciles nothing (its kubeconfig names a
    # closed port), so the label can only come from the admission call.
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text('apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: "http://127.0.0.1:9"}}]\n'
                          'users: [{name: u, user: {token: t}}]\ncontexts: [{name: c, context: {cluster: c, user: u}}]\n'
                          'current-context: c\n')
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [CATALOGD, "--cache-dir", str(tmp_path / "cache"), "--catalogs-server-addr", f"127.0.0.1:{free_port()}",
             "--health-addr", f"127.0.0.1:{free_port()}", "--tls-cert", str(TLS / "server.crt"),
             "--tls-key", str(TLS / "server.key"), "--webhook-server-port", str(port), "--no-access-log"],
            stdout=out, stderr=subprocess.STDOUT, env=dict(os.environ, KUBECONFIG=str(kubeconfig)))
    try:
        poll(lambda: tls_up(port) or proc.poll() is not None, "the webhook listener")
        assert proc.poll() is None, log.read_text()
        kubectl("apply", "-f", "-", input={
            "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
            "metadata": {"name": hook},
            "webhooks": [{
                "name": "inject-metadata-name.olm.operatorframework.io", "admissionReviewVersions": ["v1"],
                "clientConfig": {"url": f"https://127.0.0.1:{port}{PATH}",
                                 "caBundle": base64.b64encode((TLS / "server.crt").read_bytes()).decode()},
                "failurePolicy": "Fail", "sideEffects": "None", "timeoutSeconds": 10,
                "matchConditions": [{"name": "MissingOrIncorrectMetadataNameLabel", "expression": MATCH}],
                "rules": [{"apiGroups": ["olm.operatorframework.io"], "apiVersions": ["v1"],
                           "operations": ["CREATE", "UPDATE"], "resources": ["clustercatalogs"]}]}]})
        yield {"proc": proc, "log": log}
    finally:
        kubectl("delete", "mutatingwebhookconfiguration", hook, "--ignore-not-found", check=False)
        proc.terminate()
        assert proc.wait(timeout=30) == 0, log.read_text()


def test_label_is_set_at_admission(webhook, name):
    spec = {"source": {"type": "Image", "image": {"ref": "registry.invalid/c:latest"}}}
    try:
        created = kubectl("create", "-o", "json", "-f", "-", input={
            "apiVersion": "olm.operatorframework.io/v1", "kind": "ClusterCatalog",
            "metadata": {"name": name, "labels": {"team": "a"}}, "spec": spec})
        obj = json.loads(created.stdout)
        assert obj["metadata"]["labels"] == {"team": "a", NAME_LABEL: name}, obj["metadata"]
        # A wrong value is corrected in the update itself (kubectl label prints its own patched
        # copy, not the stored object: read it back; no reconciler runs here to correct it).
        kubectl("label", "--overwrite", "clustercatalog", name, f"{NAME_LABEL}=wrong")
        assert kubectl_json("get", "clustercatalog", name)["metadata"]["labels"][NAME_LABEL] == name
    finally:
        kubectl("delete", "clustercatalog", name, "--ignore-not-found", "--wait=false", check=False)
    assert webhook["proc"].poll() is None, webhook["log"].read_text()
