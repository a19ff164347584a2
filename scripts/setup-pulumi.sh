#!/usr/bin/env bash
# Provide the Pulumi engine for clusterforge, offline except for the Go module proxy.
#
#   scripts/setup-pulumi.sh          # idempotent; then: . scripts/env.sh
#
# 1. A `pulumi` on PATH (outside tools/bin) that reports the pinned version is
#    linked as tools/bin/pulumi rather than built; the rest of tools/bin is ours.
# 2. Otherwise tools/bin/ gets, built from the Go module proxy via the build
#    module tools/pulumi-build/ (go.mod + go.sum pin every dependency):
#      pulumi                         github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
#      pulumi-language-python         our minimal language host (see its main.go)
#      pulumi-language-python-exec    runner script from the sdk/v3 module
#      pulumi-resource-pulumi-python  launcher for dynamic providers (.venv python)
#    A tools/bin/pulumi that already reports the pinned version is reused; the engine is built once
#    per machine into a cache (see 2a) and copied from there. A cold build takes about 5-6 minutes
#    on 2 idle cores; later runs, in any checkout, take seconds.
#
# The pinned version is the pkg/v3 version in tools/pulumi-build/go.mod.
#
# CLUSTERFORGE_ENGINE_BIN=DIR builds into DIR instead of tools/bin: `clusterforge engine install` runs
# the wheel's copy of this script that way, into <state dir>/engine/bin.
set -euo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
build_dir="$repo/tools/pulumi-build"
bin_dir="${CLUSTERFORGE_ENGINE_BIN:-$repo/tools/bin}"

say() { printf 'setup-pulumi: %s\n' "$*"; }
die() { printf 'setup-pulumi: error: %s\n' "$*" >&2; exit 1; }

version="v$(awk '$1 == "github.com/pulumi/pulumi/pkg/v3" { sub(/^v/, "", $2); print $2; exit }' "$build_dir/go.mod")"
[[ "$version" != "v" ]] || die "no github.com/pulumi/pulumi/pkg/v3 requirement in $build_dir/go.mod"

# `pulumi version` of a binary, or empty if it does not run.
version_of() { "$1" version 2>/dev/null | head -n1 | tr -d '[:space:]' || true; }

# 1. A matching pulumi already on PATH (not ours) is linked as tools/bin/pulumi instead of built (the
#    code runs the engine from tools/bin); the language host and launchers below are still ours.
mkdir -p "$bin_dir"
if path_pulumi="$(command -v pulumi 2>/dev/null)" && [[ "$path_pulumi" != "$bin_dir/pulumi" ]]; then
    if [[ "$(version_of "$path_pulumi")" == "$version" \
          && ! ( -x "$bin_dir/pulumi" && "$(version_of "$bin_dir/pulumi")" == "$version" ) ]]; then
        ln -sfn "$path_pulumi" "$bin_dir/pulumi"
        say "using pulumi $version from PATH at $path_pulumi (linked as $bin_dir/pulumi)"
    fi
fi

go_bin="${GO:-$(command -v go 2>/dev/null || true)}"
[[ -n "$go_bin" ]] || { [[ -x /usr/local/go/bin/go ]] && go_bin=/usr/local/go/bin/go; }
[[ -n "$go_bin" ]] || die "Go is needed to build pulumi (expected go on PATH or /usr/local/go/bin/go)"

# Reproducible, offline-friendly builds: go.mod/go.sum are never rewritten,
# no VCS stamping, default GOCACHE/GOMODCACHE so rebuilds are fast.
gobuild() {
    (cd "$build_dir" && GOFLAGS="-mod=readonly -buildvcs=false" "$go_bin" build -trimpath \
        -ldflags "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" "$@")
}

# A heartbeat while a long step runs, every $SETUP_HEARTBEAT_S seconds (default 30): the phase
# (downloading Go modules while the module cache grows, else compiling), the time so far and the
# caches' sizes, so a cold build never sits silent for minutes.
gocache="$("$go_bin" env GOCACHE 2>/dev/null || true)"
gomodcache="$("$go_bin" env GOMODCACHE 2>/dev/null || true)"
size_mb() { [[ -n "$1" && -d "$1" ]] && du -sm "$1" 2>/dev/null | cut -f1 || echo 0; }
heartbeat() {
    local what="$1" start=$SECONDS modules
    modules="$(size_mb "$gomodcache")"
    while sleep "${SETUP_HEARTBEAT_S:-30}"; do
        local now phase="compiling"
        now="$(size_mb "$gomodcache")"
        [[ "$now" != "$modules" ]] && phase="downloading Go modules"
        modules="$now"
        say "... $what: $phase, $((SECONDS - start))s so far (module cache ${now} MB, build cache $(size_mb "$gocache") MB)"
    done
}
with_heartbeat() {
    local what="$1" rc=0
    shift
    heartbeat "$what" &
    local beat=$!
    "$@" || rc=$?
    kill "$beat" 2>/dev/null || true
    wait "$beat" 2>/dev/null || true
    return "$rc"
}

# 2a. The engine. Built once per machine into a cache keyed by the version and go.sum
#     ($CLUSTERFORGE_PULUMI_CACHE, default /var/cache/clusterforge/pulumi), under a lock, so several
#     checkouts (CI, worktrees) set up at once compile it once and copy it; without a writable cache
#     (a user's `clusterforge engine install`) it is built straight into $bin_dir.
build_engine() {  # build_engine OUT
    say "building pulumi $version into $(dirname -- "$1") (a cold build takes ~5-6 min on 2 cores)"
    local start=$SECONDS
    with_heartbeat "building pulumi" gobuild -o "$1.tmp" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
    mv -f "$1.tmp" "$1"
    local got
    got="$(version_of "$1")"
    [[ "$got" == "$version" ]] || die "built pulumi reports '$got', expected $version"
    say "built pulumi $version in $((SECONDS - start))s"
}
if [[ -x "$bin_dir/pulumi" && "$(version_of "$bin_dir/pulumi")" == "$version" ]]; then
    say "pulumi $version present at $bin_dir/pulumi"
else
    cache_root="${CLUSTERFORGE_PULUMI_CACHE:-/var/cache/clusterforge/pulumi}"
    cache_dir="$cache_root/$version-$(sha256sum "$build_dir/go.sum" | cut -c1-12)"
    if mkdir -p "$cache_dir" 2>/dev/null && [[ -w "$cache_dir" ]]; then
        exec {lock}>"$cache_dir/.lock"
        if ! flock -n "$lock"; then
            say "waiting for another set-up building pulumi $version into $cache_dir"
            flock "$lock"
        fi
        if [[ -x "$cache_dir/pulumi" && "$(version_of "$cache_dir/pulumi")" == "$version" ]]; then
            say "pulumi $version from the machine's cache $cache_dir"
        else
            build_engine "$cache_dir/pulumi"
        fi
        install -m 0755 "$cache_dir/pulumi" "$bin_dir/pulumi.tmp"
        mv -f "$bin_dir/pulumi.tmp" "$bin_dir/pulumi"
        exec {lock}>&-
    else
        build_engine "$bin_dir/pulumi"
    fi
fi

# 2b. The Python language host (ours; rebuilt when missing, outdated or stale).
langhost="$bin_dir/pulumi-language-python"
langhost_src="$build_dir/cmd/pulumi-language-python/main.go"
if [[ ! -x "$langhost" || "$langhost_src" -nt "$langhost" || "$build_dir/go.mod" -nt "$langhost" ]]; then
    say "building pulumi-language-python $version"
    with_heartbeat "building pulumi-language-python" gobuild -o "$langhost.tmp" ./cmd/pulumi-language-python
    mv -f "$langhost.tmp" "$langhost"
fi

# Copy $1 to $2 (mode 0755) unless identical already.
install_file() {
    if ! cmp -s "$1" "$2"; then
        install -m 0755 "$1" "$2.tmp"
        mv -f "$2.tmp" "$2"
        say "installed $(basename -- "$2")"
    fi
}

# 2c. The runner script the language host starts; it ships in the sdk/v3 module.
sdk_dir="$(cd "$build_dir" && GOFLAGS=-mod=readonly "$go_bin" list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)"
if [[ -z "$sdk_dir" || ! -f "$sdk_dir/python/cmd/pulumi-language-python-exec" ]]; then
    (cd "$build_dir" && "$go_bin" mod download github.com/pulumi/pulumi/sdk/v3)
    sdk_dir="$(cd "$build_dir" && GOFLAGS=-mod=readonly "$go_bin" list -m -f '{{.Dir}}' github.com/pulumi/pulumi/sdk/v3)"
fi
[[ -f "$sdk_dir/python/cmd/pulumi-language-python-exec" ]] \
    || die "pulumi-language-python-exec not found in the sdk/v3 module ($sdk_dir)"
install_file "$sdk_dir/python/cmd/pulumi-language-python-exec" "$bin_dir/pulumi-language-python-exec"

# 2d. The dynamic-provider launcher (runs .venv/bin/python -m pulumi.dynamic).
install_file "$repo/tools/launchers/pulumi-resource-pulumi-python" "$bin_dir/pulumi-resource-pulumi-python"

[[ -n "${CLUSTERFORGE_ENGINE_BIN:-}" || -x "$repo/.venv/bin/python" ]] || say "warning: $repo/.venv/bin/python missing; Python programs need the project venv"
if [[ -n "${CLUSTERFORGE_ENGINE_BIN:-}" ]]; then
    say "ready: pulumi $version in $bin_dir"
else
    say "ready: pulumi $version in $bin_dir (. scripts/env.sh to use it)"
fi
