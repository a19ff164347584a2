#!/usr/bin/env bash
# The apply after a merge, the step both ci/ pipelines run on the default branch (GitHub: a merged pull request;
# GitLab: the push of a merge):
#
#   ci/clusterforge-apply.sh INVENTORY REV [OUT_DIR]
#
#   1. clusterforge stacks INVENTORY --format json          (the stacks holding it, in apply order: one, or a
#                                                            split declaration's site, SU and services stacks)
#   2. clusterforge up INVENTORY [--part P] --revision REV --yes --format json, per stack, the stacks of one wave
#      (the SUs) side by side, each waiting for its stack's lock, queued, up to CLUSTERFORGE_LOCK_WAIT_S seconds
#      (default 1800): a merge applied while another merge's apply runs waits for it instead of failing. Under
#      the lock, a stack already applied from a later revision that holds REV (a later merge's apply got the
#      lock first) is left as it is, said, not taken back; one applied from a revision this repository does not
#      know fails (it may be the later one), so the checkout needs the branch's history (fetch-depth 0; the
#      script fetches origin first when there is one). A failed stack stops the waves after it (they read its
#      outputs).
#   3. python3 -m clusterforge.apply_comment                (comment.md: each stack's result, its changes and
#                                                            how long it waited for the lock)
#
# CLUSTERFORGE_STACK names the base stack (default: the inventory's stem); CLUSTERFORGE_APPLY_ARGS adds options to
# every `up` (split on spaces: `--target files --no-provision`). The backend and the passphrase come from the
# environment (CLUSTERFORGE_BACKEND_URL, PULUMI_CONFIG_PASSPHRASE), as for the review's preview.
# Writes OUT_DIR (default clusterforge-apply/): stacks.json, apply-<stack>.{json,err,rc}, comment.md.
# Exit 0 when every stack applied, 1 otherwise (the comment says which and why).
set -uo pipefail

[[ $# -ge 2 ]] || { echo "usage: $0 INVENTORY REV [OUT_DIR]" >&2; exit 2; }
inventory=$1 rev=$2 out=${3:-clusterforge-apply}
cf=${CLUSTERFORGE:-clusterforge}
py=${CLUSTERFORGE_PYTHON:-python3}
export CLUSTERFORGE_LOCK_WAIT_S=${CLUSTERFORGE_LOCK_WAIT_S:-1800}
read -r -a extra <<<"${CLUSTERFORGE_APPLY_ARGS:-}"
base=()
[[ -n "${CLUSTERFORGE_STACK:-}" ]] && base=(--stack "$CLUSTERFORGE_STACK")
mkdir -p -- "$out"
rm -f -- "$out"/apply-*

git remote get-url origin >/dev/null 2>&1 && { git fetch --quiet origin || echo "warning: git fetch origin failed" >&2; }
status=0
if "$cf" stacks "$inventory" "${base[@]}" --format json >"$out/stacks.json" 2>"$out/stacks.err"; then
    # one line per wave: "stack part stack part ..." (names are the CLI's stack grammar: no spaces)
    waves=$("$py" -c '
import json, sys
doc = json.load(open(sys.argv[1], encoding="utf-8"))
for wave in doc["waves"]:
    print(" ".join(item["stack"] + " " + item["part"] for item in wave))
print("BASE", doc["base"])' "$out/stacks.json") || status=1
    stack_base=$(sed -n 's/^BASE //p' <<<"$waves")
    while read -r -a wave && [[ $status -eq 0 ]]; do
        [[ ${#wave[@]} -eq 0 || ${wave[0]} == BASE ]] && continue
        for ((i = 0; i < ${#wave[@]}; i += 2)); do
            stack=${wave[i]} part=${wave[i + 1]}
            select=(--stack "$stack_base" --revision "$rev")
            [[ $part != all ]] && select+=(--part "$part")
            (
                "$cf" up "$inventory" "${select[@]}" "${extra[@]}" --yes --format json \
                    >"$out/apply-$stack.json" 2>"$out/apply-$stack.err"
                echo "$?" >"$out/apply-$stack.rc"
            ) &
        done
        wait
        for ((i = 0; i < ${#wave[@]}; i += 2)); do
            [[ "$(cat -- "$out/apply-${wave[i]}.rc")" == 0 ]] || status=1
        done
    done <<<"$waves"
else
    status=1
fi

"$py" -m clusterforge.apply_comment "$out" "$inventory" "$rev" || status=1
exit "$status"
