#!/usr/bin/env bash
# restart-apiserver.sh [--state-dir DIR]: restart.sh --component apiserver (SIGTERM, same command
# line and proxy variables, new PID in DIR/env, waits for /readyz).  Kept for the e2e
# apiserver-restart test.
exec bash "$(dirname "${BASH_SOURCE[0]}")/restart.sh" --component apiserver "$@"
