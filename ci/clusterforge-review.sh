#!/usr/bin/env bash
# The GitOps review of one declaration on a pull/merge request, the steps both ci/ pipelines run:
#
#   ci/clusterforge-review.sh INVENTORY BASE_REV [OUT_DIR]
#
#   1. clusterforge validate INVENTORY                      (FILE:LINE:COL errors)
#   2. clusterforge diff BASE_REV:INVENTORY INVENTORY       (Markdown + --format json; renumbering fails)
#   3. clusterforge preview INVENTORY --json                (what `up` would change; skipped with
#                                                            CLUSTERFORGE_REVIEW_PREVIEW=0)
#
# Writes OUT_DIR (default clusterforge-review/): comment.md (the PR comment; its first line is the marker
# ci/post-comment.sh finds to update the one comment), validate.txt, diff.md, diff.json, preview.json and
# each step's stderr. clusterforge.review_comment writes the comment, on python3 (the interpreter pip installed
# clusterforge into; CLUSTERFORGE_PYTHON names another). Exit 0 when every step passed, 1 when validation
# failed, a device was renumbered or moved, or the preview failed; every step runs either way, so the comment
# shows all of them.
set -uo pipefail

[[ $# -ge 2 ]] || { echo "usage: $0 INVENTORY BASE_REV [OUT_DIR]" >&2; exit 2; }
inventory=$1 base=$2 out=${3:-clusterforge-review}
cf=${CLUSTERFORGE:-clusterforge}
mkdir -p -- "$out"
status=0
# step NAME COMMAND...: run it, set $NAME to passed/failed, and remember a failure
step() {
    local name=$1
    shift
    if "$@"; then
        printf -v "$name" passed
    else
        printf -v "$name" failed
        status=1
    fi
}

step validate eval '"$cf" validate "$inventory" >"$out/validate.txt" 2>"$out/validate.err"'
step diff eval '"$cf" diff "$base:$inventory" "$inventory" >"$out/diff.md" 2>"$out/diff.err"'
"$cf" diff "$base:$inventory" "$inventory" --format json >"$out/diff.json" 2>/dev/null || true
if [[ "${CLUSTERFORGE_REVIEW_PREVIEW:-1}" != 0 ]]; then
    step preview eval '"$cf" preview "$inventory" --json >"$out/preview.json" 2>"$out/preview.err"'
else
    preview="skipped"
fi

# The comment (clusterforge.review_comment): every name from the pull request escaped for Markdown and HTML
"${CLUSTERFORGE_PYTHON:-python3}" -m clusterforge.review_comment "$out" "$inventory" "$base" "$validate" "$diff" \
    "$preview" || status=1
exit "$status"
