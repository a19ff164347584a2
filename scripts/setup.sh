#!/usr/bin/env bash
# Set up everything clusterforge needs on a fresh Debian 12 machine (idempotent; re-runs take seconds):
#   1. Debian packages: debootstrap, systemd-container (nspawn), FRR, iproute2, OpenSSH client,
#      chromium (report screenshots), python3-venv, Slurm 22.05 (slurmctld, slurmd, slurm-client, munge:
#      the tests parse the rendered Slurm files with them on loopback; not for --up), Prometheus and
#      Alertmanager (promtool and amtool check the rendered monitoring files, and the tests start both on
#      loopback; not for --up);
#      QEMU, OVMF, iPXE ROMs and libvirt for the lab's bare-metal server (lab/metal_vm.py, lab/libvirtd.py)
#   2. the project venv (.venv) with clusterforge and its test tools
#   3. the Pulumi engine (PATH, or built from the Go module proxy: scripts/setup-pulumi.sh)
#   4. the lab's cached Debian rootfs (scripts/lab-rootfs.sh; root only)
#   5. PostgreSQL, Redis and Nautobot for the source-of-truth tests (scripts/setup-sot.sh)
#   6. Kubernetes, etcd, kwok and Kueue for the lab's control plane (scripts/setup-k8s.sh; a machine-wide
#      cache keyed by version, never rebuilt when present)
# The engine (3) and Kubernetes (6) compile in the background, side by side, while 2 and 4 run: on a
# fresh machine they are the longest steps (~6 min and ~15-25 min on 2 cores) and the others are
# mostly downloads and unpacking.
#
#   scripts/setup.sh [--no-lab]
#   scripts/setup.sh --up INVENTORY   what `make up` needs: no report browser, no source-of-truth
#                                     server; the lab's golden images of INVENTORY built (cached by
#                                     content) while the engine compiles
set -euo pipefail
repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd "$repo"
say() { printf 'setup: %s\n' "$*"; }

lab=yes
up_inventory=
case "${1:-}" in
    --no-lab) lab=no ;;
    --up) up_inventory=${2:?"--up needs the inventory whose images to build"} ;;
    "") ;;
    *) echo "usage: scripts/setup.sh [--no-lab | --up INVENTORY]" >&2; exit 2 ;;
esac

# The engine builds beside the rest (it needs only Go, which the machine has), in a process group of
# its own: an interrupt or a failure here stops it and its compilers too.
setsid scripts/setup-pulumi.sh &
engine_pid=$!
setsid nice -n 10 scripts/setup-k8s.sh >/dev/null &
k8s_pid=$!
trap '[[ -n ${engine_pid:-} ]] && kill -- "-$engine_pid" 2>/dev/null
      [[ -n ${k8s_pid:-} ]] && kill -- "-$k8s_pid" 2>/dev/null; true' EXIT

source "$repo/scripts/lib/apt.sh"
packages=(debootstrap systemd-container frr iproute2 iptables openssh-client openssh-server python3-venv ca-certificates)
# report screenshots, and the Slurm binaries that parse the rendered Slurm files, in the tests
[[ -n $up_inventory ]] || packages+=(chromium fonts-dejavu-core slurmctld slurmd slurm-client)
# promtool and amtool check the rendered monitoring files; the tests start Prometheus and Alertmanager on loopback
[[ -n $up_inventory ]] || packages+=(prometheus prometheus-alertmanager)
# the shared-state tests start their own PostgreSQL on loopback (initdb in a temp dir); psql takes the stack locks
[[ -n $up_inventory ]] || packages+=(postgresql)
packages+=(postgresql-client)
# bare-metal servers in the lab (inventory/lab-metal.yaml): the provisioning network's DHCP/TFTP (dnsmasq),
# iPXE's UEFI loader, Debian 12's netboot installer, and QEMU with OVMF for the servers that are VMs
packages+=(dnsmasq-base ipxe debian-installer-12-netboot-amd64 qemu-system-x86 qemu-utils ovmf)
# the image method (baremetal/os_image.py, baremetal/deploy_ramdisk.py): a server's disk image made from plain files (sfdisk,
# mkfs.vfat and mtools for the ESP, a stand-alone GRUB for UEFI) and the deploy ramdisk packed with cpio
packages+=(fdisk dosfstools mtools grub-efi-amd64-bin grub-common cpio)
# the lab BMC's libvirtd (lab/libvirtd.py) and the iPXE ROMs QEMU's NICs boot with; libvirt-python builds against
# libvirt-dev
packages+=(ipxe-qemu libvirt-daemon libvirt-daemon-driver-qemu libvirt-dev pkg-config gcc)
# the cluster's own container images are built as OCI layouts without a Docker engine (scripts/setup-k8s.sh)
packages+=(umoci)
# `clusterforge ib check` and tests/ib: the InfiniBand planes in a simulated subnet (ibsim, libumad2sim's
# LD_PRELOAD shim, OpenSM, ibnetdiscover/dump_fts/saquery/sminfo); unprivileged, no HCA or kernel module
packages+=(ibsim-utils libumad2sim0 opensm infiniband-diags)
apt_ensure "${packages[@]}"
if ((${#apt_installed[@]})); then
    # the lab runs FRR inside containers only; the host's own FRR must not route anything
    systemctl disable --now frr >/dev/null 2>&1 || true
    # sshd is here for the switch-push tests, which start their own on 127.0.0.1; no system daemon
    systemctl disable --now ssh >/dev/null 2>&1 || true
    # Slurm and munge are here for the tests, which start their own on loopback in a scratch directory
    systemctl disable --now slurmctld slurmd munge >/dev/null 2>&1 || true
    # likewise Prometheus, Alertmanager and the node exporter the prometheus package recommends
    systemctl disable --now prometheus prometheus-alertmanager prometheus-node-exporter >/dev/null 2>&1 || true
    # opensm's unit would look for a real HCA at boot; the check starts its own against ibsim
    systemctl disable --now opensm >/dev/null 2>&1 || true
    # likewise PostgreSQL: the tests run a private cluster; a team's state database lives elsewhere
    systemctl disable --now postgresql >/dev/null 2>&1 || true
fi

# the lab's private libvirtd (lab/libvirtd.py) resolves QEMU's default user at start, even when qemu.conf
# says root; the libvirt-daemon-system package would create it, with services this machine does not run
if [[ $(id -u) -eq 0 ]] && ! getent passwd libvirt-qemu >/dev/null; then
    useradd --system --no-create-home --home-dir /var/lib/libvirt --shell /usr/sbin/nologin --user-group libvirt-qemu
fi

python=${PYTHON:-python3}
if [[ ! -x .venv/bin/python ]]; then
    say "creating .venv"
    "$python" -m venv .venv
fi
stamp=.venv/.clusterforge-installed
if [[ ! -f $stamp || pyproject.toml -nt $stamp ]]; then
    say "installing clusterforge and test tools into .venv"
    .venv/bin/pip install -q --upgrade pip >/dev/null
    .venv/bin/pip install -q -e ".[test,lab]"
    touch "$stamp"
fi
# The editable install runs src/ in place. Where the environment sets PYTHONDONTWRITEBYTECODE=1 (this
# machine's does), Python never writes src/'s bytecode, so every command compiles each clusterforge module it
# imports, on every run: ~0.06 s of `clusterforge validate inventory/lab.yaml`'s ~0.3 s (benchmarks/cli_startup.py,
# its "no bytecode" row). compileall writes it regardless; a module edited later is compiled in memory (its
# stale bytecode is not used) until the next set-up writes it again.
.venv/bin/python -m compileall -q src

[[ -n $up_inventory ]] || scripts/setup-sot.sh  # PostgreSQL, Redis and Nautobot for the source-of-truth tests

if [[ $lab == yes ]]; then
    if [[ $(id -u) -eq 0 ]]; then
        scripts/lab-rootfs.sh
        if [[ -n $up_inventory ]]; then
            say "building the lab's golden images for $up_inventory (cached by content)"
            .venv/bin/clusterforge lab image "$up_inventory"
        fi
    else
        say "not root: skipping the lab rootfs (lab tests will skip)"
    fi
fi
if ! wait "$engine_pid"; then
    engine_pid=
    say "error: the Pulumi engine build failed (its output is above)"
    exit 1
fi
engine_pid=
if ! wait "$k8s_pid"; then
    k8s_pid=
    say "error: the Kubernetes build failed (its output is above)"
    exit 1
fi
k8s_pid=
say "ready (. scripts/env.sh puts the venv and the Pulumi engine on PATH)"
