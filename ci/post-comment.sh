#!/usr/bin/env bash
# Post FILE as the one clusterforge review comment of the pull/merge request, updating it on later runs.
#
#   ci/post-comment.sh github FILE    # needs GH_TOKEN, GITHUB_REPOSITORY, PR_NUMBER; uses the gh CLI
#   ci/post-comment.sh gitlab FILE    # needs CLUSTERFORGE_GITLAB_TOKEN (api scope), CI_API_V4_URL,
#                                     # CI_PROJECT_ID, CI_MERGE_REQUEST_IID; uses curl and python3
#
# The comment is found by FILE's first line (the marker ci/clusterforge-review.sh writes), so one
# comment per declaration is kept up to date instead of a new one per push.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 github|gitlab FILE" >&2; exit 2; }
forge=$1 file=$2
marker=$(head -n 1 -- "$file")
[[ "$marker" == "<!-- clusterforge-review"* ]] || { echo "$file does not start with the review marker" >&2; exit 2; }

case "$forge" in
github)
    id=$(gh api --paginate "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" \
        --jq ".[] | select(.body | startswith(\"$marker\")) | .id" | head -n 1)
    if [[ -n "$id" ]]; then
        gh api -X PATCH "repos/$GITHUB_REPOSITORY/issues/comments/$id" -F "body=@$file" >/dev/null
    else
        gh api -X POST "repos/$GITHUB_REPOSITORY/issues/$PR_NUMBER/comments" -F "body=@$file" >/dev/null
    fi
    ;;
gitlab)
    api="$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes"
    auth=(--header "PRIVATE-TOKEN: $CLUSTERFORGE_GITLAB_TOKEN")
    id=$(curl --fail --silent --show-error "${auth[@]}" "$api?per_page=100&sort=asc" | python3 -c '
import json, sys
marker = sys.argv[1]
print(next((str(n["id"]) for n in json.load(sys.stdin) if n.get("body", "").startswith(marker)), ""))' "$marker")
    if [[ -n "$id" ]]; then
        curl --fail --silent --show-error "${auth[@]}" -X PUT "$api/$id" --data-urlencode "body@$file" >/dev/null
    else
        curl --fail --silent --show-error "${auth[@]}" -X POST "$api" --data-urlencode "body@$file" >/dev/null
    fi
    ;;
*) echo "unknown forge $forge (github or gitlab)" >&2; exit 2 ;;
esac
