#!/usr/bin/env bash
# Build the Kubernetes binaries the lab's control plane runs, offline except for the Go module proxy.
#
#   scripts/setup-k8s.sh            # idempotent; prints the bin directory last
#
# Three build modules under tools/k8s-build/ pin every dependency (go.mod + go.sum, read-only):
#   kubernetes/  kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kubelet, kube-proxy
#                (k8s.io/kubernetes with each staging module pointed at its published v0.Y.Z release), and
#                the project's own node tools in cmd/: cf-pause (the pod sandbox process) and
#                cf-sim-gpu-plugin (the lab's SIMULATED GPU device plugin) and cf-sim-dra-driver (its SIMULATED
#                DRA kubelet plugin, k8s_gpu_mode: dra)
#   etcd/        etcd (go.etcd.io/etcd/server/v3)
#   kwok/        kwok, the lab's simulated kubelets (sigs.k8s.io/kwok), and its stage files
#   kueue/       kueue, the job queueing controller (sigs.k8s.io/kueue), and its CRDs
#   coredns/     coredns, the cluster's DNS, with only the plugins its main.go imports (the full upstream build
#                links every cloud provider's SDK), and cf-dns-probe (cmd/: resolves names the way a pod does)
# Binaries go to a machine-wide cache keyed by the versions, $CLUSTERFORGE_K8S_CACHE (default
# /var/cache/clusterforge/k8s)/<kubernetes>-etcd<etcd>-kwok<kwok>/bin, and are never rebuilt when
# present. A cold build takes ~15-25 min on 2 shared cores (kube-apiserver is most of it).
# Kueue has a cache key of its own, $CLUSTERFORGE_K8S_CACHE/kueue-<kueue>/ (bin/kueue, bin/SHA256SUMS and crds/,
# the upstream CRDs copied from the module's config/components/crd/bases), so pinning another Kueue rebuilds
# nothing else (~5 min on 2 cores).
# CoreDNS too: $CLUSTERFORGE_K8S_CACHE/coredns-<coredns>/bin (coredns, cf-dns-probe, SHA256SUMS), rebuilt when its
# module's sources change (a hash of main.go, cmd/ and go.sum in bin/.sources; ~80 s on 2 shared cores, 53 MB).
# The node tools are rebuilt when their sources change (a hash of cmd/ and go.sum, kept in $bin/.tools), and
# with them the cluster's own images, as OCI layouts built with umoci (no Docker engine) in $bin/../images:
#   pause:3.10           cf-pause, the sandbox image containerd starts every pod with
#   cf-gpu-probe:1       cf-gpu-probe: prints the GPUs a container was allocated and exits 0 when it has any;
#                        `verify` and the tests run it
#   coredns:<coredns>    coredns (the entrypoint) and cf-dns-probe, the cluster DNS of roles/k8s_dns
set -euo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
mods="$repo/tools/k8s-build"
say() { printf 'setup-k8s: %s\n' "$*" >&2; }
die() { printf 'setup-k8s: error: %s\n' "$*" >&2; exit 1; }

req() {  # the version MODULE $2 is required at in $1/go.mod (one-line or block form)
    awk -v m="$2" '$1 == "require" && $2 == m { print $3; exit } $1 == m && $2 ~ /^v/ { print $2; exit }' \
        "$mods/$1/go.mod"
}
k8s="$(req kubernetes k8s.io/kubernetes)"
etcd="$(req etcd go.etcd.io/etcd/server/v3)"
kwok="$(req kwok sigs.k8s.io/kwok)"
kueue="$(req kueue sigs.k8s.io/kueue)"
coredns="$(req coredns github.com/coredns/coredns)"
[[ -n $k8s && -n $etcd && -n $kwok && -n $kueue && -n $coredns ]] || die "cannot read the pinned versions from $mods/*/go.mod"

root="${CLUSTERFORGE_K8S_CACHE:-/var/cache/clusterforge/k8s}"
bin="$root/$k8s-etcd$etcd-kwok$kwok/bin"
mkdir -p "$bin"

go_bin="${GO:-$(command -v go 2>/dev/null || true)}"
[[ -n "$go_bin" ]] || { [[ -x /usr/local/go/bin/go ]] && go_bin=/usr/local/go/bin/go; }
[[ -n "$go_bin" ]] || die "Go is needed to build Kubernetes (expected go on PATH or /usr/local/go/bin/go)"

# One build at a time per cache (the lead's set-up, a helper's and CI may start together).
exec 9>"$root/.lock"
flock 9

# Kueue first: its cache is separate, and the Kubernetes half below may end the script early.
kueue_dir="$root/kueue-$kueue"
if [[ ! -x $kueue_dir/bin/kueue || ! -s $kueue_dir/bin/SHA256SUMS || ! -d $kueue_dir/crds ]]; then
    say "building Kueue $kueue"
    rm -rf "$kueue_dir.tmp"
    mkdir -p "$kueue_dir.tmp/bin"
    (cd "$mods/kueue" && GOFLAGS="-mod=readonly -buildvcs=false" nice -n 10 "$go_bin" build -trimpath \
        -ldflags "-s -w -X sigs.k8s.io/kueue/pkg/version.GitVersion=$kueue" -o "$kueue_dir.tmp/bin/kueue" \
        sigs.k8s.io/kueue/cmd/kueue)
    src="$(cd "$mods/kueue" && GOFLAGS=-mod=readonly "$go_bin" list -m -f '{{.Dir}}' sigs.k8s.io/kueue)"
    [[ -d $src/config/components/crd/bases ]] || die "Kueue's CRDs not found in $src/config/components/crd/bases"
    cp -r "$src/config/components/crd/bases" "$kueue_dir.tmp/crds"
    chmod -R u+w "$kueue_dir.tmp"
    (cd "$kueue_dir.tmp/bin" && sha256sum -- kueue > SHA256SUMS)
    rm -rf "$kueue_dir"
    mv "$kueue_dir.tmp" "$kueue_dir"
fi
say "Kueue $kueue present in $kueue_dir"

# CoreDNS: its own cache key too; the image joins the cluster's images below.
coredns_dir="$root/coredns-$coredns"
coredns_hash="$(cd "$mods/coredns" && cat go.sum main.go $(find cmd -type f -name '*.go' | LC_ALL=C sort) \
    | sha256sum | cut -c1-16)"
if [[ "$(cat "$coredns_dir/bin/.sources" 2>/dev/null)" != "$coredns_hash" || ! -x $coredns_dir/bin/coredns \
      || ! -x $coredns_dir/bin/cf-dns-probe || ! -s $coredns_dir/bin/SHA256SUMS ]]; then
    say "building CoreDNS $coredns (its plugins: tools/k8s-build/coredns/main.go; ~80 s on 2 cores)"
    rm -rf "$coredns_dir.tmp"
    mkdir -p "$coredns_dir.tmp/bin"
    (cd "$mods/coredns" && CGO_ENABLED=0 GOFLAGS="-mod=readonly -buildvcs=false" nice -n 10 "$go_bin" build \
        -trimpath -ldflags "-s -w" -o "$coredns_dir.tmp/bin/" . ./cmd/cf-dns-probe)
    (cd "$coredns_dir.tmp/bin" && sha256sum -- coredns cf-dns-probe > SHA256SUMS)
    echo "$coredns_hash" > "$coredns_dir.tmp/bin/.sources"
    rm -rf "$coredns_dir"
    mv "$coredns_dir.tmp" "$coredns_dir"
fi
say "CoreDNS $coredns present in $coredns_dir"

want=(kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy etcd kwok cf-pause cf-sim-gpu-plugin
      cf-sim-dra-driver cf-gpu-probe)
missing() { local b; for b in "${want[@]}"; do [[ -x "$bin/$b" ]] || echo "$b"; done; }
# The binaries' SHA-256 sums, once per build (a cache from before this file gets it at its next set-up):
# k8s_control_plane compares them with the host's in one command instead of hashing every binary on both
# ends at each run.
sums() {
    [[ -s $bin/SHA256SUMS ]] && return 0
    (cd "$bin" && sha256sum -- "${want[@]}" > SHA256SUMS.tmp && mv -f SHA256SUMS.tmp SHA256SUMS)
}
tools_hash="$(cd "$mods/kubernetes" && cat go.sum $(find cmd -type f -name '*.go' | LC_ALL=C sort) | sha256sum | cut -c1-16)"
images="$bin/../images"
# The layout holds the CoreDNS image of this build (its sources' hash in images/.coredns).
images_current() { [[ -d $images/oci && "$(cat "$images/.coredns" 2>/dev/null)" == "$coredns_hash" ]]; }
if [[ "$(cat "$bin/.tools" 2>/dev/null)" != "$tools_hash" ]]; then
    rm -f "$bin/cf-pause" "$bin/cf-sim-gpu-plugin" "$bin/cf-sim-dra-driver" "$bin/cf-gpu-probe" "$bin/SHA256SUMS"
fi
if [[ -z "$(missing)" && -d "$bin/../kwok-stages" ]] && images_current; then
    sums
    say "Kubernetes $k8s, etcd $etcd, kwok $kwok present in $bin"
    echo "$bin"
    exit 0
fi

gobuild() {  # gobuild MODULE_DIR LDFLAGS PACKAGE...
    local dir="$1" ldflags="$2"
    shift 2
    (cd "$mods/$dir" && GOFLAGS="-mod=readonly -buildvcs=false" nice -n 10 "$go_bin" build -trimpath \
        -ldflags "-s -w $ldflags" -o "$bin/.tmp/" "$@")
}
rm -rf "$bin/.tmp"
mkdir -p "$bin/.tmp"
start=$SECONDS

if [[ ! -x $bin/etcd ]]; then
    say "building etcd $etcd"
    gobuild etcd "-X go.etcd.io/etcd/api/v3/version.Version=${etcd#v}" go.etcd.io/etcd/server/v3
    mv -f "$bin/.tmp/v3" "$bin/etcd" 2>/dev/null || mv -f "$bin/.tmp/server" "$bin/etcd"
fi
if [[ ! -x $bin/kwok ]]; then
    say "building kwok $kwok"
    gobuild kwok "-X sigs.k8s.io/kwok/pkg/consts.Version=$kwok" sigs.k8s.io/kwok/cmd/kwok
    mv -f "$bin/.tmp/kwok" "$bin/kwok"
fi
if [[ ! -d $bin/../kwok-stages ]]; then
    src="$(cd "$mods/kwok" && GOFLAGS=-mod=readonly "$go_bin" list -m -f '{{.Dir}}' sigs.k8s.io/kwok)"
    [[ -d $src/kustomize/stage ]] || die "kwok's stage files not found in $src/kustomize/stage"
    rm -rf "$bin/../kwok-stages.tmp"
    cp -r "$src/kustomize/stage" "$bin/../kwok-stages.tmp"
    chmod -R u+w "$bin/../kwok-stages.tmp"
    mv "$bin/../kwok-stages.tmp" "$bin/../kwok-stages"
fi
kube=()
for b in kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy; do
    [[ -x $bin/$b ]] || kube+=("k8s.io/kubernetes/cmd/$b")
done
if ((${#kube[@]})); then
    minor="${k8s#v1.}"; minor="${minor%%.*}"
    say "building Kubernetes $k8s (${kube[*]##*/}; a cold build takes ~15-25 min on 2 cores)"
    v=k8s.io/component-base/version
    c=k8s.io/client-go/pkg/version
    gobuild kubernetes "-X $v.gitVersion=$k8s -X $v.gitMajor=1 -X $v.gitMinor=$minor -X $v.gitTreeState=clean \
-X $c.gitVersion=$k8s -X $c.gitMajor=1 -X $c.gitMinor=$minor -X $c.gitTreeState=clean" "${kube[@]}"
    for p in "${kube[@]}"; do mv -f "$bin/.tmp/${p##*/}" "$bin/${p##*/}"; done
fi
tools=(cf-pause cf-sim-gpu-plugin cf-sim-dra-driver cf-gpu-probe)
if [[ ! -x $bin/cf-pause || ! -x $bin/cf-sim-gpu-plugin || ! -x $bin/cf-sim-dra-driver || ! -x $bin/cf-gpu-probe ]]; then
    say "building the node tools (${tools[*]})"
    CGO_ENABLED=0 gobuild kubernetes "" "${tools[@]/#/./cmd/}"
    for t in "${tools[@]}"; do mv -f "$bin/.tmp/$t" "$bin/"; done
    echo "$tools_hash" > "$bin/.tools"
    rm -rf "$images"
fi
if ! images_current; then
    if ! command -v umoci >/dev/null && [[ $(id -u) -eq 0 ]]; then  # setup.sh may hold dpkg's lock: wait for it
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -o DPkg::Lock::Timeout=900 \
            umoci >/dev/null || true
    fi
    command -v umoci >/dev/null || die "umoci is needed to build the cluster's images (apt-get install umoci)"
    say "building the cluster's images (OCI layouts, umoci)"
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    layout="$work/oci"
    umoci init --layout "$layout"
    # image REF "BINARY..." ENTRYPOINT...: static binaries (paths) at /, run as ENTRYPOINT
    image() {
        local ref="$1" binaries="$2" b
        shift 2
        umoci new --image "$layout:$ref"
        umoci unpack --image "$layout:$ref" "$work/bundle" >/dev/null
        for b in $binaries; do install -m 0755 "$b" "$work/bundle/rootfs/${b##*/}"; done
        umoci repack --image "$layout:$ref" "$work/bundle" >/dev/null
        rm -rf "$work/bundle"
        local args=()
        for a in "$@"; do args+=(--config.entrypoint "$a"); done
        umoci config --image "$layout:$ref" "${args[@]}" --config.user 65534:65534 --author clusterforge
        umoci gc --layout "$layout"
    }
    image pause-3.10 "$bin/cf-pause" /cf-pause
    image cf-gpu-probe-1 "$bin/cf-gpu-probe" /cf-gpu-probe
    image "coredns-${coredns#v}" "$coredns_dir/bin/coredns $coredns_dir/bin/cf-dns-probe" /coredns
    # swapped in whole: a run reading the old layout meanwhile sees one or the other
    mkdir -p "$images"
    rm -rf "$images/oci.old"
    [[ ! -d $images/oci ]] || mv "$images/oci" "$images/oci.old"
    mv "$layout" "$images/oci"
    echo "$coredns_hash" > "$images/.coredns"
    rm -rf "$images/oci.old"
fi
rm -rf "$bin/.tmp"
[[ -z "$(missing)" ]] || die "not built: $(missing | tr '\n' ' ')"
"$bin/kube-apiserver" --version >&2
rm -f "$bin/SHA256SUMS"
sums
say "built in $((SECONDS - start))s into $bin"
echo "$bin"
