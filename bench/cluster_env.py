"""cluster_env.py: what the bench's Python scripts need of a local cluster (e2e/cluster/up.sh):
its env file, read, and an HTTPS connection to its apiserver as the cluster admin."""
import http.client
import ssl


def read_env(path):
    """The variables of the cluster's env file (lines `export NAME='value'`) as a dict."""
    env = {}
    for line in open(path):
        if line.startswith("export "):
            k, v = line[7:].strip().split("=", 1)
            env[k] = v.strip("'")
    return env


def admin_connection(env):
    """A keep-alive HTTPS connection to the apiserver, with the admin client certificate."""
    ctx = ssl.create_default_context(cafile=env["OLMV1_CA_CERT"])
    ctx.load_cert_chain(env["OLMV1_ADMIN_CERT"], env["OLMV1_ADMIN_KEY"])
    return http.client.HTTPSConnection("127.0.0.1", int(env["OLMV1_APISERVER_PORT"]), context=ctx)
