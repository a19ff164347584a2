#!/usr/bin/env bash
# Post FILE as the one clusterforge review comment of the pull/merge request, updating it on later runs.
#
#   ci/post-comment.sh github FILE    # needs GH_TOKEN (the job token), GITHUB_REPOSITORY, PR_NUMBER;
#                                     # GITHUB_API_URL (set by Actions; default https://api.github.com)
#   ci/post-comment.sh gitlab FILE    # needs CLUSTERFORGE_GITLAB_TOKEN (api scope), CI_API_V4_URL,
#                                     # CI_PROJECT_ID, CI_MERGE_REQUEST_IID
# Both use curl and python3 only (GitHub's REST API: issue comments; GitLab's: merge request notes).
#
# The comment is found by FILE's first line (the marker ci/clusterforge-review.sh writes), so one
# comment per declaration is kept up to date instead of a new one per push. Every page of comments is
# read, so the marker is found however many comments came before it.
set -euo pipefail

[[ $# -eq 2 ]] || { echo "usage: $0 github|gitlab FILE" >&2; exit 2; }
forge=$1 file=$2
marker=$(head -n 1 -- "$file")
[[ "$marker" == "<!-- clusterforge-review"* ]] || { echo "$file does not start with the review marker" >&2; exit 2; }

# The token goes to curl in a header file (never on a command line, where ps would show it); request and
# response bodies go through files too (a long review is larger than one argument may be).
work=$(mktemp -d)
trap 'rm -rf -- "$work"' EXIT
umask 077
case "$forge" in
github)
    api="${GITHUB_API_URL:-https://api.github.com}/repos/$GITHUB_REPOSITORY/issues"
    list="$api/$PR_NUMBER/comments?per_page=100&page=" create="$api/$PR_NUMBER/comments" update="$api/comments/"
    printf '%s\n' "Authorization: Bearer $GH_TOKEN" "Accept: application/vnd.github+json" \
        "X-GitHub-Api-Version: 2022-11-28" "Content-Type: application/json" >"$work/headers"
    update_method=PATCH
    ;;
gitlab)
    api="$CI_API_V4_URL/projects/$CI_PROJECT_ID/merge_requests/$CI_MERGE_REQUEST_IID/notes"
    list="$api?sort=asc&per_page=100&page=" create="$api" update="$api/"
    printf '%s\n' "PRIVATE-TOKEN: $CLUSTERFORGE_GITLAB_TOKEN" "Content-Type: application/json" >"$work/headers"
    update_method=PUT
    ;;
*) echo "unknown forge $forge (github or gitlab)" >&2; exit 2 ;;
esac
call() { curl --fail --silent --show-error --header "@$work/headers" "$@"; }

# Find the marked comment: every page, until one holds it or a page comes back empty ("none").
id= page=1
while [[ -z "$id" ]]; do
    call --output "$work/page.json" "$list$page"
    id=$(python3 -c '
import json, sys
comments = json.load(open(sys.argv[2], encoding="utf-8"))
found = (str(c["id"]) for c in comments if (c.get("body") or "").startswith(sys.argv[1]))
print(next(found, "" if comments else "none"))' "$marker" "$work/page.json")
    page=$((page + 1))
done
python3 -c 'import json, sys; json.dump({"body": open(sys.argv[1], encoding="utf-8").read()}, sys.stdout)' \
    "$file" >"$work/body.json"
if [[ "$id" != none ]]; then
    call -X "$update_method" --data-binary "@$work/body.json" --output /dev/null "$update$id"
else
    call -X POST --data-binary "@$work/body.json" --output /dev/null "$create"
fi
