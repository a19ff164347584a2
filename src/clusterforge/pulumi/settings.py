"""Stack settings: the `clusterforge:*` Pulumi config of one stack, read once, typed.

  inventory            declaration YAML, relative to the repository or absolute (required)
  target               lab (emulated hosts) | files (configs into a directory) | ssh   [files]
  provision            run Ansible per SU (HostProvision)                               [true]
  verify               run the testinfra host checks per SU (Verification)              [true]
  allowVerifyFailures  record failed checks instead of failing the update               [false]
  workDir              rendered inventory, ansible-runner dirs           [<state dir>/stacks/<stack>]
  switchConfigDir      files/lab target: where <switch>/<file> is written        [<workDir>/switches]
  switchUser, switchPort, switchKnownHosts, switchRemoteDir, switchApplyCommand
                       ssh target        [admin, 22, required, /etc/clusterforge/switch, none]
  switchSshKey         ssh target private key (PEM): `pulumi config set --secret`        [none]
  bmcPassword          handed to Ansible as cf_bmc_password: `pulumi config set --secret` [none]
  hostSshConfig        files/ssh targets: ssh_config for reaching the hosts (lab: the lab's)  [none]
  playbook             run this playbook instead of playbooks/site.yml (run_site)        [none]
  provisionTags        Ansible --tags for provisioning runs                              [all]
  image                lab target: GPU servers boot a golden image that playbooks/image.yml
                       builds once per software profile (HostImage), then converge     [true]
  verifyRun            set by `clusterforge up` on every run: the host checks run each `up`  [none]
  kubernetes           run the Kubernetes step on the declared control nodes (control plane,
                       the GPU servers joined as nodes, k8s_gpu applied)                 [true]
  part                 the part of a cluster split into stacks (state.split, clusterforge.plan.stacks) this
                       stack holds: site, suNN, services; set by `clusterforge up --part`        [none]
  revision             the repository revision being applied: set by `clusterforge up --revision` (the CI
                       apply after a merge), exported as the stack's output `revision`           [none]
  lockLease            seconds a run's stack lock stays valid without a renewal; read by the CLI
                       (clusterforge.pulumi.stacklock), $CLUSTERFORGE_LOCK_LEASE_S overrides  [600]

All keys live in the `clusterforge` namespace (`clusterforge:target`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pulumi

from clusterforge import paths
from clusterforge.targets import TARGETS, Target
from clusterforge.targets import target as target_named

__all__ = ["StackSettings", "SshSettings"]

NAMESPACE = "clusterforge"


@dataclass(frozen=True)
class SshSettings:
    user: str
    port: int
    known_hosts: str
    remote_dir: str
    apply_command: str | None


@dataclass(frozen=True)
class StackSettings:
    repo: Path
    stack: str
    inventory: Path
    target: Target  # chosen here once, from clusterforge:target
    work_dir: Path
    switch_config_dir: Path
    provision: bool
    verify: bool
    allow_verify_failures: bool = False
    ssh: SshSettings | None = None
    switch_credential: pulumi.Input[str] | None = None
    bmc_password: pulumi.Input[str] | None = None
    playbook: Path | None = None
    provision_tags: str | None = None
    host_ssh_config: Path | None = None
    verify_run: str | None = None
    image: bool = True
    kubernetes: bool = True
    revision: str | None = None  # the repository revision applied (`up --revision`), exported
    part: str | None = None  # of a split cluster: site, su01, ..., services (clusterforge.plan.stacks)

    @property
    def rendered_dir(self) -> Path:
        """Where the program writes the rendered Ansible tree that HostProvision/Verification read."""
        return self.work_dir / "rendered"

    @classmethod
    def from_config(cls, repo: Path, stack: str, config: pulumi.Config | None = None) -> StackSettings:
        config = config or pulumi.Config(NAMESPACE)

        def path(value: str) -> Path:
            candidate = Path(value).expanduser()
            return candidate if candidate.is_absolute() else (repo / candidate)

        try:
            target = target_named(config.get("target") or "files")
        except ValueError:
            raise ValueError(f"clusterforge:target is {config.get('target')!r}; expected one of {', '.join(TARGETS)}"
                             ) from None
        work_dir = path(config.get("workDir") or str(paths.state_dir() / "stacks" / stack))
        ssh = None
        if target.switches_over_ssh:
            ssh = SshSettings(
                user=config.get("switchUser") or "admin", port=config.get_int("switchPort") or 22,
                known_hosts=str(path(config.require("switchKnownHosts"))),
                remote_dir=config.get("switchRemoteDir") or "/etc/clusterforge/switch",
                apply_command=config.get("switchApplyCommand"),
            )  # fmt: skip
        playbook, host_ssh_config = config.get("playbook"), config.get("hostSshConfig")
        return cls(
            repo=repo, stack=stack, inventory=path(config.require("inventory")), target=target,
            work_dir=work_dir, switch_config_dir=path(config.get("switchConfigDir") or str(work_dir / "switches")),
            provision=_flag(config, "provision", True), verify=_flag(config, "verify", True),
            allow_verify_failures=_flag(config, "allowVerifyFailures", False), ssh=ssh,
            switch_credential=config.get_secret("switchSshKey"), bmc_password=config.get_secret("bmcPassword"),
            playbook=path(playbook) if playbook else None, provision_tags=config.get("provisionTags"),
            host_ssh_config=path(host_ssh_config) if host_ssh_config else None,
            verify_run=config.get("verifyRun"), image=_flag(config, "image", True),
            kubernetes=_flag(config, "kubernetes", True), part=config.get("part") or None,
            revision=config.get("revision") or None,
        )  # fmt: skip


def _flag(config: pulumi.Config, key: str, default: bool) -> bool:
    value = config.get(key)
    if value is None or value == "":
        return default
    if value.lower() in ("true", "yes", "1", "on"):
        return True
    if value.lower() in ("false", "no", "0", "off"):
        return False
    raise ValueError(f"clusterforge:{key} is {value!r}; expected true or false")
