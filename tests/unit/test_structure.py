"""The package's shape: layering (no import runs back up), one vocabulary, one paths module, one
management-address rule, the cli/ package behind the `clusterforge` entry point."""

from __future__ import annotations

import ast
import tomllib
from importlib import import_module
from pathlib import Path
from typing import get_args

import pytest

from clusterforge import paths
from clusterforge.loading import load_and_plan
from clusterforge.model import network
from clusterforge.plan.objects import Device, Interface
from clusterforge.vocab import DeviceKind, LinkTier, Nos, Plane, Transport

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "src" / "clusterforge"
# Which top-level parts of the package each part may import (besides itself). Lower layers never
# import higher ones; only the command line and the Pulumi program see everything.
ALLOWED = {
    "vocab": set(),
    "paths": set(),
    "gcpause": set(),  # bulk work with the cyclic garbage collector paused (loading and rendering)
    "fanout": set(),  # independent pure work over forked workers (loading's checks, rendering)
    "sshmux": set(),  # one SSH ControlPath directory per run (provision, verify)
    "outdir": set(),  # the one output writer (contained, owned, whole or nothing): render, provision, cli
    "targets": set(),  # the delivery targets and reaches as records (what they provision, reach and verify)
    "hostio": {"paths"},  # commands, atomic writes, locks and the one-line error the lab and the installs share
    "markup": set(),  # names from a pull request escaped for Markdown and HTML (plan's diff, the review comment)
    "review_comment": {"markup"},  # ci/clusterforge-review.sh's comment
    "apply_comment": {"markup"},  # ci/clusterforge-apply.sh's comment
    "nos": {"vocab"},  # what the planners know of each NOS, as data (NosTraits); plan and the drivers read it
    "model": {"vocab"},
    "plan": {"model", "vocab", "nos", "markup"},
    "loading": {"model", "plan", "vocab", "gcpause", "fanout"},
    "render": {"model", "plan", "vocab", "nos", "paths", "gcpause", "fanout", "outdir"},
    # reads each router's frr.conf from the rendered tree; installs a bare-metal server through its BMC (baremetal);
    # its libvirtd runs under a subreaper (ops.proctree)
    "lab": {"model", "plan", "vocab", "paths", "render", "baremetal", "ops", "hostio"},
    "provision": {"paths", "outdir", "sshmux"},
    # verify.gpu.launch reads clusterforge.__file__ for its workers; the host checks read the rendered tree
    # with the YAML dialect render writes it in (render.yamltext)
    "verify": {"paths", "__init__", "render", "sshmux", "targets"},
    "export": {"model", "plan", "vocab", "render"},
    # BMCs over Redfish (sushy); its doctor checks speak the doctor's findings; the install serves what render
    # writes (preseed, iPXE, dnsmasq, the disk image's manifest)
    "baremetal": {"model", "plan", "vocab", "paths", "ops", "render", "hostio"},
    "sot": {"model", "plan", "vocab", "render", "export"},
    # the plan's InfiniBand planes in ibsim + OpenSM (a simulated subnet): the plan's subnets, the rendered files
    "ibcheck": {"plan", "render"},
    "ops": set(),  # process trees and interrupts: a utility layer the Pulumi providers use
    "pulumi": {"model", "plan", "vocab", "paths", "loading", "render", "lab", "provision", "verify", "ops", "sshmux",
               "baremetal", "hostio", "targets"},
    # one driver per scheduler: each delegates to its renderer, drain helpers, checks and Pulumi step
    "schedulers": {"plan", "vocab", "render", "verify", "ops", "lab", "provision", "pulumi", "targets"},
    # node health and remediation: the doctor's and verify's checks as evidence, the policy from the model,
    # drains and returns through the scheduler drivers, re-provisioning through the site playbook
    "health": {"model", "plan", "vocab", "paths", "render", "verify", "ops", "schedulers", "provision", "targets"},
    # node operations (replace, roll): drains through the scheduler drivers, the lab's re-image, provisioning, checks
    "operate": {"model", "plan", "vocab", "paths", "render", "lab", "provision", "verify", "schedulers", "baremetal",
                "pulumi", "targets", "hostio"},
    # gcpause: start-up imports (typer, the model and planner modules) with the collector paused
    "cli": {"model", "plan", "vocab", "paths", "loading", "render", "lab", "provision", "verify", "pulumi", "ops",
            "export", "sot", "outdir", "baremetal", "gcpause", "schedulers", "health", "targets", "operate", "ibcheck"},
}
# Known exceptions, each with its reason; the list may only shrink (it is empty: keep it so).
EXCEPTIONS: set[tuple[str, str]] = set()


def _imports(path: Path) -> set[str]:
    """Dotted clusterforge modules a file imports, lazily or not."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "clusterforge":
                found |= {f"clusterforge.{a.name}" for a in node.names}
            else:
                found.add(node.module)
        elif isinstance(node, ast.ImportFrom) and node.level:
            base = list(path.relative_to(PACKAGE).parent.parts)[: None if node.level == 1 else 1 - node.level]
            found.add(".".join(["clusterforge", *base, *([node.module] if node.module else [])]))
        elif isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
    return {m for m in found if m == "clusterforge" or m.startswith("clusterforge.")}


def _part(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def test_no_import_runs_back_up():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        part = path.relative_to(PACKAGE).with_suffix("").parts[0]
        if part == "__init__":
            continue
        for module in _imports(path):
            other = _part(module)
            exempt = (str(path.relative_to(ROOT)), other) in EXCEPTIONS
            if other != part and other not in ALLOWED[part] and not exempt:
                wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not wrong, "\n".join(wrong)
    assert set(ALLOWED) == {p.stem for p in PACKAGE.iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()} - {
        "__init__"}, "a new top-level part needs its place in ALLOWED"


def _nos_name_uses(path: Path) -> list[str]:
    """Where a module names a NOS to branch on it: vocab.Nos, a NOS word as a string compared or matched, a
    `.nos`/`nos` compared with anything."""
    words = set(Nos.values())
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        where = f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.ImportFrom) and node.module == "clusterforge.vocab" and \
                any(a.name == "Nos" for a in node.names):
            found.append(f"{where} imports vocab.Nos")
        elif isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Constant) and side.value in words:
                    found.append(f"{where} compares with {side.value!r}")
                elif isinstance(side, (ast.Tuple, ast.List, ast.Set)) and any(
                        isinstance(e, ast.Constant) and e.value in words for e in side.elts):
                    found.append(f"{where} compares with a NOS word")
                elif (isinstance(side, ast.Attribute) and side.attr == "nos") or \
                        (isinstance(side, ast.Name) and side.id == "nos"):
                    found.append(f"{where} compares a NOS")
        elif isinstance(node, ast.MatchValue) and isinstance(node.value, ast.Constant) and node.value.value in words:
            found.append(f"{where} matches {node.value.value!r}")
    return found


def test_the_planners_never_branch_on_a_nos_name():
    """plan/ reads what it must know of a NOS from the NosTraits it is given (clusterforge.nos), never by name."""
    found = [use for path in sorted((PACKAGE / "plan").rglob("*.py")) for use in _nos_name_uses(path)]
    assert not found, "\n".join(found)


def test_the_nos_check_sees_each_kind_of_branch(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from clusterforge.vocab import Nos\n"
                      "a = x == 'sonic'\nb = plane.nos != y\nc = n in ('eos', 'z')\n"
                      "match v:\n    case 'cumulus':\n        pass\n")
    found = _nos_name_uses_at(sample)
    assert [line.split(" ", 1)[1] for line in found] == [
        "imports vocab.Nos", "compares with 'sonic'", "compares a NOS", "compares with a NOS word",
        "matches 'cumulus'"]


def _nos_name_uses_at(path: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, path.parent
    try:
        return sorted(_nos_name_uses(path), key=lambda line: int(line.split(":")[1].split(" ")[0]))
    finally:
        ROOT = saved


def test_host_checks_do_not_import_their_runner():
    """verify.runner imports verify.hosts (CONCERNS); the reverse would be the old cycle."""
    hosts = PACKAGE / "verify" / "hosts"
    offenders = [p.name for p in hosts.glob("*.py") if "clusterforge.verify.runner" in _imports(p)]
    assert not offenders


def test_vocabulary_matches_the_schema_literals():
    assert set(get_args(network.PlaneName)) == set(Plane.values())
    assert set(get_args(network.Transport)) == set(Transport.values())
    assert set(get_args(network.Nos)) == set(Nos.values())
    assert set(DeviceKind.HOSTS) | set(DeviceKind.SWITCHES) | {DeviceKind.PDU} == set(DeviceKind.values())
    assert all(type(v) is str for v in DeviceKind.values() + Plane.values())  # JSON/YAML see plain strings


@pytest.mark.parametrize("name", ["lab", "superpod-4su", "roce-128gpu"])
def test_every_planned_kind_plane_and_tier_is_in_the_vocabulary(name):
    _, plan, _ = load_and_plan(ROOT / "inventory" / f"{name}.yaml")
    assert {d.kind for d in plan.devices} <= set(DeviceKind.values())
    assert {i.plane for d in plan.devices for i in d.interfaces} <= set(Plane.values())
    assert {link.tier for link in plan.links} - {""} <= set(LinkTier.values())
    assert {link.plane for link in plan.links} <= set(Plane.values())


def _device(*interfaces: Interface) -> Device:
    return Device("x", DeviceKind.SERVER, "m", 1, "r", 1, 1, 0.0, 0.0, "a", interfaces)


def test_one_management_address_rule():
    mgmt = Interface("mgmt0", Plane.MANAGEMENT, "198.18.8.16/24", 1500)
    bmc = Interface("bmc", Plane.OOB, "198.18.14.16/24", 1500)
    eth0 = Interface("eth0", Plane.OOB, "198.18.14.40/24", 1500)
    assert _device(bmc, mgmt).management_ip == "198.18.8.16"  # a host: its OS, not its BMC
    assert _device(eth0).management_ip == "198.18.14.40"  # a switch: its oob eth0
    assert _device(Interface("Ethernet0", Plane.DATA, "10.0.0.1/31", 9100)).management_ip is None


def test_paths_come_from_the_checkout(monkeypatch):
    monkeypatch.delenv(paths.ROOT_ENV, raising=False)
    assert paths.checkout_root() == ROOT
    assert paths.templates_dir() == ROOT / "templates"
    assert paths.roles_dir() == ROOT / "roles" and paths.playbooks_dir() == ROOT / "playbooks"
    assert (paths.stack_program_dir() / "Pulumi.yaml").is_file()
    assert paths.relative_to_workspace(ROOT / "inventory" / "lab.yaml") == "inventory/lab.yaml"


def test_one_override_moves_data_and_state(monkeypatch, tmp_path):
    (tmp_path / "templates").mkdir()
    monkeypatch.setenv(paths.ROOT_ENV, str(tmp_path))
    monkeypatch.delenv(paths.LAB_HOME_ENV, raising=False)
    monkeypatch.delenv(paths.STATE_DIR_ENV, raising=False)
    assert paths.data_root() == tmp_path and paths.roles_dir() == tmp_path / "roles"
    assert paths.state_dir() == tmp_path / ".state" and paths.lab_home() == tmp_path / ".lab"
    assert paths.lab_ssh_config("cf") == tmp_path / ".lab" / "cf" / "ssh_config"
    monkeypatch.setenv(paths.ROOT_ENV, str(tmp_path / "missing"))
    monkeypatch.setattr(paths, "_checkout", lambda: None)
    monkeypatch.setattr(paths, "BUNDLED_DATA", tmp_path / "nothing")
    with pytest.raises(paths.DataNotFound, match=paths.ROOT_ENV):
        paths.data_root()


def test_entry_point_is_the_cli_package():
    script = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["scripts"]["clusterforge"]
    module, _, attr = script.partition(":")
    main = getattr(import_module(module), attr)
    from clusterforge.cli.app import app

    assert main is import_module("clusterforge.cli.app").main
    names = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    assert names == {"validate", "plan", "render", "lab", "preview", "up", "destroy", "drift", "doctor", "verify",
                     "accept", "report", "diff", "export", "collection", "replace", "roll", "health", "remediate",
                     "provision", "sot", "engine", "kubeconfig", "unlock", "ib", "stacks"}


# The scheduler seam (clusterforge.schedulers): what reaches a live scheduler directly, and the modules that may.
SCHEDULER_INTERNALS = ("clusterforge.ops.drain", "clusterforge.ops.slurm_drain", "clusterforge.verify.kube_checks",
                       "clusterforge.verify.kueue_checks", "clusterforge.verify.slurm_checks")
# The commands that change or check nodes through every declared scheduler: they ask the registry only.
SCHEDULER_COMMANDS = ("cli/replace.py", "cli/roll.py", "operate/replace.py", "operate/roll.py", "cli/verify.py",
                      "cli/remediate.py", "health/act.py")


def test_only_the_scheduler_drivers_drain_or_check_a_scheduler():
    """Draining a node and checking a live scheduler go through a driver: no module outside schedulers/
    imports the drain helpers or the scheduler checks (besides those modules themselves)."""
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = "clusterforge." + ".".join(path.relative_to(PACKAGE).with_suffix("").parts)
        if module.startswith("clusterforge.schedulers.") or module in SCHEDULER_INTERNALS:
            continue
        wrong += [f"{path.relative_to(ROOT)} imports {m}" for m in _imports(path) if m in SCHEDULER_INTERNALS]
    assert not wrong, "\n".join(wrong)


def _scheduler_name_uses(path: Path) -> list[str]:
    """Where a command reaches past the registry: a scheduler's own module imported, a scheduler name compared
    or matched, the plan's `.slurm` record read."""
    from clusterforge.schedulers import SCHEDULERS

    names = set(SCHEDULERS)
    found = [f"{path.name} imports {m}" for m in _imports(path)
             if m.startswith("clusterforge.") and m != "clusterforge.schedulers"
             and any(word in m for word in ("slurm", "kube", "drain", ".schedulers."))]
    for node in ast.walk(ast.parse(path.read_text())):
        where = f"{path.name}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Compare):
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Constant) and side.value in names:
                    found.append(f"{where} compares with {side.value!r}")
        elif isinstance(node, ast.MatchValue) and isinstance(node.value, ast.Constant) and node.value.value in names:
            found.append(f"{where} matches {node.value.value!r}")
        elif isinstance(node, ast.Attribute) and node.attr in names:
            found.append(f"{where} reads .{node.attr}")
    return found


@pytest.mark.parametrize("command", SCHEDULER_COMMANDS)
def test_the_node_commands_ask_the_scheduler_registry(command):
    path = PACKAGE / command
    assert "clusterforge.schedulers" in _imports(path)
    found = _scheduler_name_uses(path)
    assert not found, "\n".join(found)


def test_the_scheduler_check_sees_each_kind_of_reach(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("from clusterforge.ops.slurm_drain import drain_node\n"
                      "from clusterforge.schedulers.kubernetes.client import core_api\n"
                      "a = name == 'kubernetes'\nb = plan.slurm\n"
                      "match v:\n    case 'slurm':\n        pass\n")
    assert sorted(line.split(" ", 1)[1] for line in _scheduler_name_uses(sample)) == [
        "compares with 'kubernetes'", "imports clusterforge.ops.slurm_drain",
        "imports clusterforge.schedulers.kubernetes.client", "matches 'slurm'", "reads .slurm"]


def test_a_scheduler_driver_imports_no_other_driver():
    """A new scheduler touches its own package and one registry line: the drivers do not lean on each other,
    and the interface (driver.py, nodes.py) knows no driver."""
    from clusterforge.schedulers import SCHEDULERS

    root = PACKAGE / "schedulers"
    wrong = []
    for path in sorted(root.rglob("*.py")):
        own = path.relative_to(root).parts[0] if path.parent != root else None
        if path == root / "__init__.py":
            continue
        for module in _imports(path):
            for name in SCHEDULERS:
                if module.startswith(f"clusterforge.schedulers.{name}") and name != own:
                    wrong.append(f"{path.relative_to(ROOT)} imports {module}")
    assert not wrong, "\n".join(wrong)
    assert {p.name for p in root.iterdir() if (p / "__init__.py").exists()} == set(SCHEDULERS)


# The lab emulates: every module of lab/ and the part of the emulated cluster it stands in for. The work a real
# machine needs too (the install's state machine, boot serving, the deploy ramdisk and disk images, the BMC
# client) lives in baremetal/, which imports no lab module (ALLOWED).
LAB_EMULATES = {
    "__init__": "the lab's public calls",
    "aptproxy": "the site's package proxy",
    "bmc_emulator": "a server's BMC (sushy-tools' Redfish emulator)",
    "bmc_pki": "a BMC's TLS certificate authority",
    "bootnet": "the provisioning network (bridge and boot namespace) the boot services run in",
    "builder": "the golden-image build host",
    "container": "a host (systemd-nspawn)",
    "debris": "clean-up after a crashed lab",
    "from_plan": "the cluster as hosts, bridges and veths",
    "gateway_forward": "the site router between the lab's bridges",
    "image": "golden images as overlay layers",
    "kubelet_host": "a Kubernetes node's kernel interfaces in a container",
    "kvm_probe": "whether a VM's firmware runs under KVM here",
    "libvirtd": "the hypervisor under the bare-metal VMs",
    "links": "cables (bridges, veths, VLANs)",
    "manager": "the whole lab: up, status, down",
    "metal_debris": "clean-up after crashed bare-metal VMs and BMCs",
    "metal_server": "a bare-metal server (a VM) with its BMC",
    "metal_site": "the site the bare-metal install runs in (baremetal.install.Site)",
    "metal_topology": "which lab hosts are VMs, cabled as planned",
    "metal_vm": "a bare-metal server's machine (a libvirt VM)",
    "names": "names of what the lab creates",
    "netns": "a host's network stack (a namespace)",
    "nsproxy": "SSH into a host's namespace",
    "orphans": "containers whose nspawn died",
    "overlay": "a host's disk (an overlay over the rootfs)",
    "reaper": "a subreaper for the lab's daemons",
    "reimage": "an RMA: a host back from its image",
    "rootfs": "the Debian rootfs every lab host boots",
    "running": "the switches' running configuration",
    "sshcfg": "the lab's SSH client material",
    "state": "what a lab's up created",
    "timeserve": "the site's NTP server",
    "topology": "the emulated cluster's shape",
    "util": "the lab's helpers",
}
# The real-hardware modules of the bare-metal flow.
BAREMETAL_FLOW = ("install", "bootnet", "bootserve", "netinstall", "deploy_ramdisk", "os_image", "host", "redfish")
# What the Pulumi layer's bare-metal files may take from the lab: the emulated site and the lab's names for it.
METAL_PULUMI = ("pulumi/providers/metal_server.py", "pulumi/metal.py")
METAL_PULUMI_LAB = {"clusterforge.lab.metal_site", "clusterforge.lab.metal_topology", "clusterforge.lab.topology",
                    "clusterforge.lab.names", "clusterforge.lab.overlay", "clusterforge.lab.aptproxy"}


def test_the_lab_only_emulates():
    assert {p.stem for p in (PACKAGE / "lab").glob("*.py")} == set(LAB_EMULATES), \
        "a lab module emulates a part of the cluster (LAB_EMULATES); real-hardware work goes in baremetal/"
    assert all((PACKAGE / "baremetal" / f"{name}.py").is_file() for name in BAREMETAL_FLOW)
    moved = [name for name in BAREMETAL_FLOW if (PACKAGE / "lab" / f"{name}.py").exists() and name != "bootnet"]
    assert not moved, f"real-hardware modules in lab/: {moved}"


def test_baremetal_imports_no_lab_module():
    wrong = [f"{p.relative_to(ROOT)} imports {m}" for p in sorted((PACKAGE / "baremetal").rglob("*.py"))
             for m in _imports(p) if _part(m) == "lab"]
    assert not wrong, "\n".join(wrong)


def _modules_imported(path: Path) -> set[str]:
    """Like _imports, with `from package import module` read as the module."""
    found = set(_imports(path))
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").startswith("clusterforge."):
            base = PACKAGE.joinpath(*node.module.split(".")[1:])
            found |= {f"{node.module}.{a.name}" for a in node.names if (base / f"{a.name}.py").is_file()}
            if any((base / f"{a.name}.py").is_file() for a in node.names):
                found.discard(node.module)
    return found


@pytest.mark.parametrize("module", METAL_PULUMI)
def test_the_pulumi_bare_metal_layer_takes_the_install_from_baremetal(module):
    imports = _modules_imported(PACKAGE / module)
    lab = {m for m in imports if _part(m) == "lab"}
    assert lab <= METAL_PULUMI_LAB, f"{module} imports {sorted(lab - METAL_PULUMI_LAB)}"
    if module.startswith("pulumi/providers/"):
        assert "clusterforge.baremetal.install" in imports


def _target_name_uses(path: Path) -> list[str]:
    """Where a module decides by a target's name instead of its record (clusterforge.targets): a target or reach
    name compared with something called target/reach, or a `*Target` enum member compared."""
    from clusterforge.targets import REACHES, TARGETS

    words = set(TARGETS) | set(REACHES)
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.Compare):
            continue
        where = f"{path.relative_to(ROOT)}:{node.lineno}"
        sides = (node.left, *node.comparators)
        names = [s for s in sides if isinstance(s, ast.Constant) and s.value in words] + [
            e for s in sides if isinstance(s, (ast.Tuple, ast.List, ast.Set)) for e in s.elts
            if isinstance(e, ast.Constant) and e.value in words]
        about_target = any(word in ast.unparse(s).lower() for s in sides for word in ("target", "reach"))
        if names and about_target:
            found.append(f"{where} compares a target with {names[0].value!r}")  # type: ignore[attr-defined]
        members = [s for s in sides if isinstance(s, ast.Attribute) and s.attr in words
                   and ast.unparse(s.value).endswith("Target")]
        if members:
            found.append(f"{where} compares with {ast.unparse(members[0])}")
    return found


def test_no_module_compares_target_names():
    """The delivery target and the reach are records, looked up once by name; code asks their fields."""
    found = [use for path in sorted(PACKAGE.rglob("*.py")) if path != PACKAGE / "targets.py"
             for use in _target_name_uses(path)]
    assert not found, "\n".join(found)


def test_the_target_check_sees_each_kind_of_comparison(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text("a = settings.target == 'lab'\nb = reach.target != 'local'\nc = target in ('ssh', 'x')\n"
                      "d = target is HostTarget.lab\ne = kind == 'ssh'\n")
    global ROOT
    saved, ROOT = ROOT, tmp_path
    try:
        found = [line.split(" ", 1)[1] for line in _target_name_uses(sample)]
    finally:
        ROOT = saved
    assert found == ["compares a target with 'lab'", "compares a target with 'local'", "compares a target with 'ssh'",
                     "compares with HostTarget.lab"]


def test_the_command_line_target_choices_are_the_records_names():
    from clusterforge.cli._common import ApplyTarget, HostTarget
    from clusterforge.cli.verify import VerifyTarget
    from clusterforge.pulumi.settings import StackSettings
    from clusterforge.targets import REACHES, TARGETS, Target

    assert [t.value for t in ApplyTarget] == list(TARGETS)
    assert {t.value for t in VerifyTarget} == set(REACHES)
    assert {t.value for t in HostTarget} <= set(REACHES)
    assert {TARGETS[name].reach.name for name in TARGETS} <= set(REACHES)
    assert StackSettings.__dataclass_fields__["target"].type in (Target, "Target")


LONG_FUNCTION_LINES = 80
MAX_LONG_FUNCTIONS = 3
CLI_MODULE_LINES = 150


def test_mypy_checks_the_whole_package():
    """`mypy` with no arguments (make test) reads pyproject's [tool.mypy]: the whole package, no module's errors
    ignored."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["files"] == ["src/clusterforge"]
    ignored = {m for o in config.get("overrides", []) if o.get("ignore_errors") for m in o["module"]}
    assert not ignored, f"modules whose type errors are ignored: {sorted(ignored)}"


def _long_functions() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = (node.end_lineno or node.lineno) - node.lineno + 1
                if lines > LONG_FUNCTION_LINES:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name} ({lines} lines)")
    return found


def test_few_functions_are_long():
    long = _long_functions()
    assert len(long) <= MAX_LONG_FUNCTIONS, "\n".join(long)


@pytest.mark.parametrize("module", sorted(p.name for p in (PACKAGE / "cli").glob("*.py")))
def test_a_command_module_is_thin(module):
    """A command parses its flags and calls into a library; its module stays short."""
    lines = len((PACKAGE / "cli" / module).read_text().splitlines())
    assert lines <= CLI_MODULE_LINES, f"cli/{module}: {lines} lines"
