#!/usr/bin/env bash
# run-tests.sh: run the end-to-end suite (e2e/tests, pytest) against a fresh local cluster.
#
# Brings up etcd + kube-apiserver + an OCI registry with e2e/cluster/up.sh in a temporary state
# directory, exports what the tests need (KUBECONFIG and OLMV1_REGISTRY from the cluster's env file,
# OLMV1_BIN = absolute path of the built olmv1 CLI, OLMV1_REPO = repo root), runs
# `python3 -m pytest -v e2e/tests`, and always tears the cluster down. The exit code is pytest's;
# "no tests collected" (pytest exit 5) counts as a failure.
#
# Extra arguments go to pytest, e.g.  e2e/run-tests.sh -k crd -x, or e2e/run-tests.sh
# e2e/tests/test_crds.py (a path under e2e/tests narrows the run to it).
# Environment: OLMV1_E2E_KEEP=1 keeps the cluster and its state dir for debugging (prints how to
# stop it). OLMV1_BIN may point at another olmv1 binary (default: build/cli/olmv1).
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd -P)
cd "$REPO"

OLMV1_BIN=${OLMV1_BIN:-$REPO/build/cli/olmv1}
case $OLMV1_BIN in /*) ;; *) OLMV1_BIN=$REPO/$OLMV1_BIN ;; esac
if [ ! -x "$OLMV1_BIN" ]; then
  echo "e2e: $OLMV1_BIN is missing or not executable; run 'make build' first" >&2
  exit 1
fi
if ! python3 -c 'import pytest, yaml' 2>/dev/null; then
  echo "e2e: python3 needs pytest and PyYAML (make deps installs python3-pytest python3-yaml)" >&2
  exit 1
fi

STATE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/olmv1-e2e.XXXXXX")
teardown() {
  local rc=$?
  trap - EXIT INT TERM HUP
  if [ "${OLMV1_E2E_KEEP:-0}" = 1 ]; then
    echo "e2e: keeping the cluster: . $STATE_DIR/env ; stop it with: bash e2e/cluster/down.sh --state-dir $STATE_DIR" >&2
  else
    if bash "$REPO/e2e/cluster/down.sh" --state-dir "$STATE_DIR" >&2; then
      rm -rf "$STATE_DIR"
    else
      echo "e2e: warning: down.sh failed; state kept in $STATE_DIR" >&2
      [ "$rc" -ne 0 ] || rc=1
    fi
  fi
  exit "$rc"
}
trap teardown EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

echo "e2e: starting a cluster in $STATE_DIR" >&2
if ! bash "$REPO/e2e/cluster/up.sh" --state-dir "$STATE_DIR"; then
  echo "e2e: cluster did not come up (logs: $STATE_DIR/logs)" >&2
  for f in "$STATE_DIR"/logs/*.log; do
    [ -f "$f" ] || continue
    echo "---- tail of $f" >&2
    tail -n 30 "$f" >&2
  done
  exit 1
fi
if [ ! -f "$STATE_DIR/env" ]; then
  echo "e2e: up.sh wrote no $STATE_DIR/env" >&2
  exit 1
fi
# shellcheck disable=SC1091
. "$STATE_DIR/env"
export KUBECONFIG OLMV1_REGISTRY OLMV1_BIN
export OLMV1_REPO=$REPO

# A test path among the arguments (e2e/tests/test_x.py, ...::test_y) narrows the run to it;
# otherwise the whole suite runs.
targets=(e2e/tests)
for arg in "$@"; do
  case $arg in e2e/tests/*) targets=(); break ;; esac
done
python3 -m pytest -v -p no:cacheprovider "${targets[@]}" "$@"
rc=$?
if [ $rc -eq 5 ]; then
  echo "e2e: pytest collected no tests; counting that as a failure" >&2
fi
exit $rc
