"""spec.progressDeadlineMinutes (issue 13, item 6).

operator-controller runs with the test-only --progress-deadline-minute-seconds 1, so the CRD's
smallest deadline (10 minutes) lasts 10 seconds here.  An extension whose ServiceAccount may not
create what the bundle holds retries (Progressing True/Retrying); past the deadline it reports
Progressing False/ProgressDeadlineExceeded with upstream's message; once the ServiceAccount gets
its RBAC the retries (which go on) install it and Progressing is True/Succeeded again.  The
deadline is counted per generation: a new spec restarts the clock.
"""

import time

import pytest

import olmv1_e2e
from conftest import kubectl, unique  # noqa: F401
from olmv1_e2e import SA_RULES_FULL, conditions, wait_for
from test_operator_controller import LABEL, VERSIONS


@pytest.fixture(scope="module")
def world(crds, tmp_path_factory):
    with olmv1_e2e.olm_env(tmp_path_factory.mktemp("deadline"), LABEL,
                           ctl_extra=["--progress-deadline-minute-seconds", "1"]) as env:
        pkg = unique("dlp")
        images = olmv1_e2e.push_bundles(env, pkg, VERSIONS[:1])
        ref = olmv1_e2e.push_catalog(env, pkg, images, VERSIONS[:1], "latest")
        olmv1_e2e.create_catalog(env, pkg, ref)
        env.update(pkg=pkg)
        yield env


@pytest.fixture
def bare_ns(name):
    """An install namespace whose ServiceAccount "installer" may do nothing yet."""
    n = name[:50]
    olmv1_e2e.setup_namespace(n, [])
    yield n
    olmv1_e2e.delete_namespace(n)


def progressing(name):
    return conditions(name)[1].get("Progressing", {})


def test_deadline_exceeded_then_recovers(world, bare_ns, name):
    env = world
    olmv1_e2e.apply_ce(env, env["pkg"], name, bare_ns)
    kubectl("patch", "clusterextension", name, "--type=merge", "-p", '{"spec":{"progressDeadlineMinutes":10}}')
    started = time.time()
    wait_for(lambda: progressing(name).get("reason") == "Retrying", "Retrying (forbidden)", env["ctl"])
    p = wait_for(lambda: (lambda c: c.get("reason") == "ProgressDeadlineExceeded" and c)(progressing(name)),
                 "ProgressDeadlineExceeded", env["ctl"], timeout=90)
    elapsed = time.time() - started
    assert p["status"] == "False"
    assert p["message"].startswith("Revision has not rolled out for 10 minute(s). Last status: "), p["message"]
    assert "forbidden" in p["message"], p["message"]
    # Not before the deadline (10 "minutes" of 1 s), and on time despite the back-off.
    assert 9 <= elapsed < 60, elapsed
    obj, c = conditions(name)
    assert c["Installed"]["status"] == "False"
    assert p["observedGeneration"] == obj["metadata"]["generation"]

    # Retries go on: once the ServiceAccount may install the bundle, it does.
    olmv1_e2e.set_rules(bare_ns, SA_RULES_FULL)
    olmv1_e2e.wait_installed(env, name, f"{env['pkg']}.v{VERSIONS[0]}", VERSIONS[0])
    assert progressing(name)["status"] == "True"
    olmv1_e2e.delete_ce(name)


def test_no_deadline_keeps_retrying(world, bare_ns, name):
    """Without progressDeadlineMinutes nothing changes: Retrying, however long."""
    env = world
    olmv1_e2e.apply_ce(env, env["pkg"], name, bare_ns)
    wait_for(lambda: progressing(name).get("reason") == "Retrying", "Retrying (forbidden)", env["ctl"])
    time.sleep(12)
    assert progressing(name)["reason"] == "Retrying"
    olmv1_e2e.delete_ce(name)
