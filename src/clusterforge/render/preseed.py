"""A bare-metal server's Debian 12 preseed, its iPXE script and the kernel command line, from the Plan.

Pure: ``install_target`` reads the planned Device (name, management address and gateway) and the
as-built NIC MACs the BMC reported; ``render_preseed`` / ``render_ipxe`` format it. Every value passes a
grammar in ``netboot_values`` first, so nothing declared or read back can add a preseed line or a shell
command to the late_command. The preseed holds no secret: root gets no password (``*``: no password
login at all) and the project's SSH *public* key; the installer reaches Debian only through the lab's
apt proxy; its last step reports the installed system's SSH host public key to the boot server, which
is how the first SSH connection checks the host.

Disk layout (``DiskLayout``): GPT, an EFI system partition, ext4 root on the rest, no swap (GPU
servers run without swap: kubelet refuses it and a swapping node is worse than an OOM-killed job).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import netaddr

from clusterforge.plan import Device
from clusterforge.vocab import Plane

from .netboot_values import (
    HttpEndpoint,
    NetbootValueError,
    disk_device,
    dns_name,
    hostname,
    ipv4,
    ipv4_cidr,
    mac,
    ssh_public_key,
    time_server,
)

__all__ = [
    "DiskLayout", "HostNic", "HostRoute", "InstallTarget", "management_nic", "install_target", "render_preseed",
    "render_ipxe",
    "kernel_args", "SUITE", "MANAGEMENT_IFNAME",
]

SUITE = "bookworm"
MANAGEMENT_IFNAME = "mgmt0"  # the name the lab's hosts and the roles know the management NIC by
CALLBACK_PATH = "done"
HOST_KEY = "/target/etc/ssh/ssh_host_ed25519_key.pub"


@dataclass(frozen=True)
class DiskLayout:
    device: str = "/dev/vda"
    esp_mib: int = 512
    root_min_mib: int = 4096


@dataclass(frozen=True)
class HostNic:
    """One NIC of the installed system: the planned name (mgmt0, bond0, rail0, ...) on its as-built MAC."""

    name: str
    mac: str
    address: str | None  # CIDR; None: DHCP (a management NIC the plan gives no address)
    mtu: int = 1500
    gateway: str | None = None  # the default route (management only)


@dataclass(frozen=True)
class HostRoute:
    dst: str  # CIDR (the default route is the management NIC's gateway)
    via: str
    dev: str
    metric: int | None = None  # two rails to one supernet differ by metric


@dataclass(frozen=True)
class InstallTarget:
    host: str
    boot_mac: str  # the NIC that netboots (on the provisioning network)
    nics: tuple[HostNic, ...]  # the first is the management NIC
    routes: tuple[HostRoute, ...]
    disk: DiskLayout
    ssh_public_key: str
    boot_server: HttpEndpoint  # iPXE script, kernel, initrd, preseed, completion callback
    syslog_port: int
    installer_proxy: HttpEndpoint  # the lab's apt proxy as the installer reaches it
    mirror_host: str
    mirror_directory: str
    host_proxy: HttpEndpoint | None  # the lab's apt proxy as the installed host reaches it
    time_servers: tuple[str, ...] = ()  # NTP servers (IPv4 or DNS names) the installed host's time daemon asks


def _nic(host: str, nic: HostNic) -> HostNic:
    field = f"{host}.nics.{nic.name}"
    if not isinstance(nic.name, str) or not re.fullmatch(r"[a-z][a-z0-9]{0,14}", nic.name):
        raise NetbootValueError(f"{host}.nics", nic.name, "an interface name of a-z and 0-9 (1-15)")
    if not isinstance(nic.mtu, int) or not 576 <= nic.mtu <= 9216:
        raise NetbootValueError(f"{field}.mtu", nic.mtu, "an MTU of 576-9216")
    address = None
    if nic.address is not None:
        ip, prefix = ipv4_cidr(f"{field}.ip", nic.address)
        address = f"{ip}/{prefix}"
    gateway = ipv4(f"{field}.gateway", nic.gateway) if nic.gateway else None
    return HostNic(nic.name, mac(f"{field}.mac", nic.mac), address, nic.mtu, gateway)


def _route(host: str, route: HostRoute, nics: set[str]) -> HostRoute:
    try:
        dst = netaddr.IPNetwork(route.dst, version=4)
    except (netaddr.AddrFormatError, TypeError, ValueError):
        raise NetbootValueError(f"{host}.routes", route.dst, "a destination CIDR such as 198.18.0.0/22") from None
    if route.dev not in nics:
        raise NetbootValueError(f"{host}.routes", route.dev, f"one of the host's interfaces {sorted(nics)}")
    if route.metric is not None and (not isinstance(route.metric, int) or not 0 <= route.metric < 2**31):
        raise NetbootValueError(f"{host}.routes.metric", route.metric, "a route metric 0-2147483647")
    return HostRoute(str(dst.cidr), ipv4(f"{host}.routes.via", route.via), route.dev, route.metric)


def management_nic(device: Device, mac_address: str) -> HostNic:
    """The planned management NIC (address and gateway as the plan says; DHCP when it gives none)."""
    mgmt = next((i for i in device.interfaces if i.plane == Plane.MANAGEMENT), None)
    if mgmt is None:
        raise NetbootValueError(f"{device.name}.interfaces", None, "a management-plane interface (SSH reaches"
                                                                   " the installed host there)")
    return HostNic(MANAGEMENT_IFNAME, mac_address, mgmt.ip, mgmt.mtu, mgmt.gateway)


def install_target(device: Device, *, boot_mac: str, nics: tuple[HostNic, ...], ssh_key: str,
                   boot_server: HttpEndpoint, syslog_port: int, installer_proxy: HttpEndpoint,
                   host_proxy: HttpEndpoint | None, routes: tuple[HostRoute, ...] = (),
                   mirror_host: str = "deb.debian.org", mirror_directory: str = "/debian",
                   disk: DiskLayout | None = None, time_servers: tuple[str, ...] = ()) -> InstallTarget:
    """The checked install inputs of one planned server; raises ``NetbootValueError`` naming the field."""
    name = hostname("host", device.name)
    checked = tuple(_nic(name, n) for n in nics)
    if not checked or checked[0].name != MANAGEMENT_IFNAME:
        raise NetbootValueError(f"{name}.nics", [n.name for n in nics], f"the management NIC {MANAGEMENT_IFNAME} first")
    if len({n.name for n in checked}) != len(checked) or len({n.mac for n in checked} | {mac("boot_mac", boot_mac)}) \
            != len(checked) + 1:
        raise NetbootValueError(f"{name}.nics", [n.name for n in nics], "one name and one MAC per NIC")
    layout = disk or DiskLayout()
    disk_device(f"{name}.disk.device", layout.device)
    if not 64 <= layout.esp_mib <= 4096 or not 1024 <= layout.root_min_mib <= 1 << 24:
        raise NetbootValueError(f"{name}.disk", layout, "an ESP of 64-4096 MiB and a root of at least 1024 MiB")
    if not mirror_directory.startswith("/") or not all(p and dns_name("p", p) for p in mirror_directory[1:].split("/")):
        raise NetbootValueError("mirror.directory", mirror_directory, "an absolute path such as /debian")
    return InstallTarget(
        host=name, boot_mac=mac(f"{name}.boot_mac", boot_mac), nics=checked,
        routes=tuple(_route(name, r, {n.name for n in checked}) for r in routes),
        disk=layout, ssh_public_key=ssh_public_key("ssh_public_key", ssh_key), boot_server=boot_server,
        syslog_port=HttpEndpoint.of("syslog", boot_server.host, syslog_port).port,
        installer_proxy=installer_proxy, mirror_host=dns_name("mirror.host", mirror_host),
        mirror_directory=mirror_directory, host_proxy=host_proxy,
        time_servers=tuple(time_server(f"{name}.time_servers", a) for a in time_servers),
    )  # fmt: skip


def kernel_args(t: InstallTarget) -> str:
    """The installer's command line: preseed URL, the NIC to configure, syslog to the boot server.
    After ``---``: what the installed system's boot loader keeps (the serial console). ``no_timer_check``:
    the lab's VMs run on QEMU's emulator (this machine's KVM runs no firmware), and on a loaded machine
    the kernel's IO-APIC timer check fails there and panics; real servers do not need it and lose nothing."""
    return (f"auto=true priority=critical url={t.boot_server.url('preseed', f'{t.host}.cfg')}"
            f" netcfg/choose_interface={t.boot_mac} log_host={t.boot_server.host} log_port={t.syslog_port}"
            " ipv6.disable=1"
            " netcfg/no_default_route=true no_timer_check"
            " --- console=ttyS0,115200n8 no_timer_check")


def render_ipxe(t: InstallTarget) -> str:
    return ("#!ipxe\n"
            f"kernel {t.boot_server.url('netboot', 'linux')} initrd=initrd.gz {kernel_args(t)}\n"
            f"initrd {t.boot_server.url('netboot', 'initrd.gz')}\n"
            "boot\n")


def _interfaces(t: InstallTarget) -> str:
    """ifupdown's /etc/network/interfaces: every planned NIC, its address, MTU and the planned routes."""
    lines = ["auto lo", "iface lo inet loopback"]
    for nic in t.nics:
        lines.append(f"auto {nic.name}")
        if nic.address is None:
            lines.append(f"iface {nic.name} inet dhcp")
            continue
        lines += [f"iface {nic.name} inet static", f"  address {nic.address}", f"  mtu {nic.mtu}"]
        if nic.gateway:
            lines.append(f"  gateway {nic.gateway}")
        for r in t.routes:
            if r.dev == nic.name:
                metric = f" metric {r.metric}" if r.metric is not None else ""
                lines.append(f"  up ip route replace {r.dst} via {r.via} dev {r.dev}{metric}")
    return "\\n".join(lines) + "\\n"


def _late_command(t: InstallTarget) -> str:
    links = [f"printf '[Match]\\nMACAddress={n.mac}\\n[Link]\\nName={n.name}\\n'"
             f" > /target/etc/systemd/network/10-clusterforge-{n.name}.link" for n in t.nics]
    steps = [
        "mkdir -p /target/root/.ssh",
        f"echo '{t.ssh_public_key}' > /target/root/.ssh/authorized_keys",
        "chmod 700 /target/root/.ssh", "chmod 600 /target/root/.ssh/authorized_keys",
        "in-target usermod -p '*' root",
        # each NIC by its as-built MAC gets the planned name the roles and the host checks use
        *links,
        f"printf '{_interfaces(t)}' > /target/etc/network/interfaces",
        # the installer's proxy is on the provisioning network; the host's is the lab's, on management
        "rm -f /target/etc/apt/apt.conf",
        ": > /target/etc/resolv.conf",  # the boot server's DNS is on the provisioning network only
    ]
    if t.host_proxy is not None:
        conf = f'Acquire::http::Proxy \\"{t.host_proxy.url()}\\";\\nAcquire::https::Proxy \\"DIRECT\\";\\n'
        steps.append(f'printf "{conf}" > /target/etc/apt/apt.conf.d/01clusterforge-proxy')
    if t.time_servers:  # checked addresses and DNS names (install_target); the image method's drop-in
        steps += ["mkdir -p /target/etc/systemd/timesyncd.conf.d",
                  f"printf '[Time]\\nNTP={' '.join(t.time_servers)}\\n'"
                  " > /target/etc/systemd/timesyncd.conf.d/50-clusterforge.conf"]
    steps += [
        "in-target update-initramfs -u",
        f'wget -q -O /dev/null "{t.boot_server.url(CALLBACK_PATH, t.host)}/$(cut -d" " -f2 {HOST_KEY})"',
    ]
    return "; ".join(steps)


def render_preseed(t: InstallTarget) -> str:
    d = t.disk
    recipe = (f"clusterforge :: {d.esp_mib} {d.esp_mib} {d.esp_mib} free $iflabel{{ gpt }} $reusemethod{{ }}"
              f" method{{ efi }} format{{ }} . {d.root_min_mib} 10000 -1 ext4 $primary{{ }} method{{ format }}"
              " format{ } use_filesystem{ } filesystem{ ext4 } mountpoint{ / } .")
    settings = [
        ("d-i", "debian-installer/locale", "string", "en_US.UTF-8"),
        ("d-i", "keyboard-configuration/xkb-keymap", "select", "us"),
        ("d-i", "netcfg/choose_interface", "select", t.boot_mac),
        ("d-i", "netcfg/get_hostname", "string", t.host),
        ("d-i", "netcfg/hostname", "string", t.host),
        ("d-i", "netcfg/get_domain", "string", ""),
        ("d-i", "hw-detect/load_firmware", "boolean", "false"),
        ("d-i", "mirror/country", "string", "manual"),
        ("d-i", "mirror/http/hostname", "string", t.mirror_host),
        ("d-i", "mirror/http/directory", "string", t.mirror_directory),
        ("d-i", "mirror/http/proxy", "string", t.installer_proxy.url()),
        ("d-i", "mirror/suite", "string", SUITE),
        ("d-i", "passwd/root-login", "boolean", "false"),
        ("d-i", "passwd/make-user", "boolean", "false"),
        ("d-i", "clock-setup/utc", "boolean", "true"),
        ("d-i", "time/zone", "string", "Etc/UTC"),
        ("d-i", "clock-setup/ntp", "boolean", "false"),
        ("d-i", "partman-auto/disk", "string", d.device),
        ("d-i", "partman-auto/method", "string", "regular"),
        ("d-i", "partman-auto/expert_recipe", "string", recipe),
        ("d-i", "partman-auto/choose_recipe", "select", "clusterforge"),
        ("d-i", "partman-basicfilesystems/no_swap", "boolean", "false"),
        ("d-i", "partman-partitioning/confirm_write_new_label", "boolean", "true"),
        ("d-i", "partman/choose_partition", "select", "finish"),
        ("d-i", "partman/confirm", "boolean", "true"),
        ("d-i", "partman/confirm_nooverwrite", "boolean", "true"),
        ("d-i", "partman-efi/non_efi_system", "boolean", "true"),
        ("d-i", "apt-setup/services-select", "multiselect", ""),
        ("d-i", "apt-setup/non-free-firmware", "boolean", "false"),
        ("d-i", "apt-setup/contrib", "boolean", "false"),
        ("d-i", "apt-setup/non-free", "boolean", "false"),
        ("d-i", "base-installer/install-recommends", "boolean", "false"),
        ("tasksel", "tasksel/first", "multiselect", "ssh-server"),
        ("d-i", "pkgsel/include", "string", "python3 systemd-timesyncd" if t.time_servers else "python3"),
        ("d-i", "pkgsel/upgrade", "select", "none"),
        ("popularity-contest", "popularity-contest/participate", "boolean", "false"),
        ("d-i", "grub-installer/only_debian", "boolean", "true"),
        ("d-i", "grub-installer/bootdev", "string", "default"),
        ("d-i", "grub-installer/force-efi-extra-removable", "boolean", "true"),
        ("d-i", "finish-install/reboot_in_progress", "note", ""),
        ("d-i", "preseed/late_command", "string", _late_command(t)),
    ]
    lines = [f"# clusterforge: Debian {SUITE} preseed for {t.host} (generated; holds no secret)"]
    lines += [f"{owner} {key} {kind} {value}".rstrip() for owner, key, kind, value in settings]
    return "\n".join(lines) + "\n"
