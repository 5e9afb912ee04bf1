#!/usr/bin/env bash
# `olmv1 GROUP --help` for every group, the exit codes in `olmv1 --help`, and shell
# completion: `olmv1 __complete` (commands, second words, flags from --help, get's
# resource types) and the bash script driving it.  No cluster: KUBECONFIG points nowhere.
# Usage: completion.sh /path/to/olmv1
set -u
bin=${1:?usage: $0 /path/to/olmv1}
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export KUBECONFIG=$tmp/none
check() { # name expected actual
  if [ "$2" == "$3" ]; then pass=$((pass+1)); else fail=$((fail+1)); echo "FAIL $1: expected [$2] got [$3]"; fi
}
rc_of() { "$@" >"$tmp/out" 2>"$tmp/err"; echo $?; }

# Every group answers --help with its commands (exit 0), and a bare group with usage (exit 2).
for g in semver catalog bundle image install upgrade uninstall explain; do
  check "$g-help" 0 "$(rc_of "$bin" "$g" --help)"
  grep -q "Usage: olmv1 $g COMMAND" "$tmp/out"; check "$g-help-text" 0 $?
  check "$g-bare" 2 "$(rc_of "$bin" "$g")"
  check "$g-bare-lines" 1 "$(grep -c "say which command" "$tmp/err")"
done
check catalog-unknown 2 "$(rc_of "$bin" catalog frobnicate)"
grep -q 'unknown command "frobnicate"' "$tmp/err"; check catalog-unknown-text 0 $?
check top-help 0 "$(rc_of "$bin" --help)"
grep -q '10 timed out waiting' "$tmp/out"; check top-help-exit-codes 0 $?
grep -q '11 blocked (the controller gave up on it: Progressing Blocked)' "$tmp/out"; check top-help-exit-code-blocked 0 $?
grep -q '__complete' "$tmp/out"; check top-help-hides-complete 1 $?
for c in "get" "search" "install extension" "upgrade extension" "uninstall extension" "explain extension"; do
  # shellcheck disable=SC2086
  check "help-$c" 0 "$(rc_of "$bin" $c --help)"
  grep -q '6 no catalogs' "$tmp/out"; check "help-$c-exit-codes" 0 $?
done

# __complete.
words() { "$bin" __complete "$@" | tr '\n' ' ' | sed 's/ $//'; }
check first-words "install" "$(words ins)"
check groups "extension" "$(words install "")"
check catalog-words "graph list push render template validate" "$(words catalog "" | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check flags "--catalog --catalog-selector --catalogd-url --channel --context --create-rbac" \
  "$(words install extension x --c | tr ' ' '\n' | sort | tr '\n' ' ' | sed 's/ $//')"
check get-types "extensions catalogs" "$(words get "")"
check completion-shells "bash" "$(words completion b)"
check no-cluster "" "$(words uninstall extension "")"   # the cluster is unreachable: nothing, quietly

# The scripts: valid syntax, and bash's drives __complete.
"$bin" completion bash > "$tmp/c.bash"; check bash-syntax 0 "$(bash -n "$tmp/c.bash"; echo $?)"
check zsh-script 0 "$(rc_of "$bin" completion zsh)"
grep -q 'compdef _olmv1 olmv1' "$tmp/out"; check zsh-compdef 0 $?
check fish-script 0 "$(rc_of "$bin" completion fish)"
grep -q "complete -c olmv1" "$tmp/out"; check fish-complete 0 $?
check no-shell 2 "$(rc_of "$bin" completion tcsh)"
mkdir -p "$tmp/bin" && ln -s "$bin" "$tmp/bin/olmv1"
got=$(PATH="$tmp/bin:$PATH" bash -c '. "$1"; COMP_WORDS=(olmv1 upgrade ext); COMP_CWORD=2; _olmv1; echo "${COMPREPLY[*]}"' _ "$tmp/c.bash")
check bash-drives "extension" "$got"

echo "completion: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
