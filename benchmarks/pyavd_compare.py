#!/usr/bin/env python3
"""Side by side with Arista's pyavd: the same EOS leaf-spine rendered by both, per-switch cost and ratio.

The fabric: L leaves x U uplinks (eBGP over /31s, one uplink to each of S spines), H routed host
ports per leaf, loopbacks, management interface in a management VRF; every switch Arista EOS.

* clusterforge: `roce-128gpu.yaml` grown to L/8 SUs (8 rails, so 8 leaves per SU) with the data
  plane on EOS and a 576-port chassis spine declared inline (so L leaves stay two tiers). Timed:
  plan_cluster of the whole cluster (servers, storage, management too) + facts, structured config
  and running-config of every data-plane switch.
* pyavd (eos_designs + eos_cli_config_gen, the pipeline AVD runs): the same spines and leaves as
  `spine`/`l3leaf` nodes, eBGP underlay, no overlay, the leaves' host ports as routed
  `l3_interfaces`. Timed: get_avd_facts + get_device_structured_config + get_device_config per switch.

Our leaves also carry the RoCE QoS (PFC, ECN, DSCP map, queue profile) the pyavd leaves do not, so
the ratio understates ours. Each side runs in its own process, interleaved, `--rounds` times; the
fastest round of each side is reported (the machine is shared).

    python benchmarks/pyavd_compare.py                   # 512 leaves + 16 spines
    python benchmarks/pyavd_compare.py --sus 8 --rounds 1
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from results import recording  # noqa: E402

CHASSIS = "bench-chassis-576x400"
CHASSIS_MODEL = {"vendor": "benchmark", "description": "576x 400GbE modular chassis spine (generated)",
                 "ports": 576, "speed_gbps": 400, "lanes_per_port": 4, "max_draw_w": 16000, "height_u": 16,
                 "weight_kg": 300, "price": 1500000}


def our_spec(sus: int):
    from clusterforge.model import ClusterSpec, load_cluster
    from clusterforge.model.scale import scaled

    base = scaled(load_cluster(REPO / "inventory" / "roce-128gpu.yaml")[0], sus).model_dump()
    base["catalog"]["switches"][CHASSIS] = CHASSIS_MODEL
    base["networks"]["data"].update(nos="eos", spine_model=CHASSIS)
    return ClusterSpec.model_validate(base)


def run_ours(sus: int) -> dict:
    from clusterforge.plan import plan_cluster
    from clusterforge.render.switches.device_config import device_files
    from clusterforge.render.switches.facts import fabric_facts
    from clusterforge.render.switches.structured_config import device_structured_config

    spec = our_spec(sus)
    started = time.perf_counter()
    cpu = time.process_time()
    plan = plan_cluster(spec)
    planned = time.perf_counter()
    files: dict[str, str] = {}
    for name, facts in fabric_facts(plan).items():
        if facts.device.plane != "data":
            continue
        files.update({f"{name}/{f}": text for f, text in device_files(
            facts.nos, device_structured_config(facts, plan.qos)).items()})
    done = time.perf_counter()
    data = plan.fabric["data"]
    leaf = next(d for d in plan.devices if d.plane == "data" and d.kind == "leaf")
    return {"side": "clusterforge", "switches": len(files), "leaves": data.leaves, "spines": data.spines,
            "tiers": data.tiers, "host_ports": sum(1 for i in leaf.interfaces if i.rail is not None),
            "uplinks": sum(1 for link in plan.links if link.a.device == leaf.name and link.tier == "data-leaf-spine"),
            "seconds": done - started, "plan_s": planned - started, "cpu_s": time.process_time() - cpu,
            "bytes": sum(map(len, files.values()))}


def avd_inputs(leaves: int, spines: int, uplinks: int, hosts: int) -> dict[str, dict]:
    per_spine = uplinks // spines

    def l3_interfaces(leaf: int) -> list[dict]:
        base = (leaf - 1) * hosts
        return [{"name": f"Ethernet{h + 1}/1", "peer": f"gpu{base + h + 1:05d}", "peer_interface": "rail",
                 "ip_address": f"10.{64 + (base + h) // 32768}.{(base + h) // 128 % 256}.{(base + h) % 128 * 2}/31"}
                for h in range(hosts)]

    common = {
        "fabric_name": "BENCH", "underlay_routing_protocol": "ebgp", "overlay_routing_protocol": "none",
        "p2p_uplinks_mtu": 9000,
        "spine": {"defaults": {"platform": "7800R3", "loopback_ipv4_pool": "10.255.0.0/24", "bgp_as": "65000"},
                  "nodes": [{"name": f"spine{j}", "id": j, "mgmt_ip": f"192.168.0.{j}/16"}
                            for j in range(1, spines + 1)]},
        "l3leaf": {"defaults": {"platform": "7050X3", "loopback_ipv4_pool": "10.254.0.0/16",
                                "uplink_interfaces": [f"Ethernet{hosts + 1 + i}/1" for i in range(uplinks)],
                                "uplink_switches": [f"spine{1 + i % spines}" for i in range(uplinks)],
                                "uplink_ipv4_pool": "10.0.0.0/11", "max_uplink_switches": spines,
                                "max_parallel_uplinks": per_spine, "vtep": False, "evpn_role": "none"},
                   "node_groups": [{"group": f"g{i}", "bgp_as": str(65100 + i), "nodes": [{
                       "name": f"leaf{i}", "id": i, "mgmt_ip": f"192.168.{1 + i // 250}.{1 + i % 250}/16",
                       "uplink_switch_interfaces": [f"Ethernet{(i - 1) * per_spine + 1 + u // spines}/1"
                                                    for u in range(uplinks)],
                       "l3_interfaces": l3_interfaces(i)}]} for i in range(1, leaves + 1)]},
    }
    out = {f"spine{j}": {**common, "type": "spine"} for j in range(1, spines + 1)}
    out.update({f"leaf{i}": {**common, "type": "l3leaf"} for i in range(1, leaves + 1)})
    return out


def run_avd(leaves: int, spines: int, uplinks: int, hosts: int) -> dict:
    import pyavd

    inputs = avd_inputs(leaves, spines, uplinks, hosts)
    started = time.perf_counter()
    cpu = time.process_time()
    facts = pyavd.get_avd_facts(inputs)
    faceted = time.perf_counter()
    configs = {name: pyavd.get_device_config(pyavd.get_device_structured_config(name, device, facts))
               for name, device in inputs.items()}
    done = time.perf_counter()
    return {"side": "pyavd", "version": pyavd.__version__, "switches": len(configs), "leaves": leaves,
            "spines": spines, "seconds": done - started, "facts_s": faceted - started,
            "cpu_s": time.process_time() - cpu, "bytes": sum(map(len, configs.values()))}


def child(args: list[str]) -> dict:
    proc = subprocess.run([sys.executable, __file__, "--child", *args], capture_output=True, text=True, check=False)
    if proc.returncode:
        raise SystemExit(f"{args[0]} failed (exit {proc.returncode}): {proc.stderr.strip()[-1500:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sus", type=int, default=64, help="SUs of 8 leaves (default 64: 512 leaves)")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        side, *numbers = args.child
        result = run_ours(*map(int, numbers)) if side == "ours" else run_avd(*map(int, numbers))
        print(json.dumps(result))
        return 0
    with recording("pyavd_compare", sus=args.sus, rounds=args.rounds) as rec:
        ours, avd = best_rounds(args.sus, args.rounds)
        ours_ms = ours["seconds"] / ours["switches"] * 1e3
        avd_ms = avd["seconds"] / avd["switches"] * 1e3
        cpu_ratio = avd["cpu_s"] / avd["switches"] / (ours["cpu_s"] / ours["switches"])
        rec.record("result", ours=ours, avd=avd, ours_ms_per_switch=ours_ms, avd_ms_per_switch=avd_ms,
                   ratio_wall=avd_ms / ours_ms, ratio_cpu=cpu_ratio)
    print(f"EOS leaf-spine: {ours['leaves']} leaves x {ours['uplinks']} uplinks, {ours['spines']} spines,"
          f" {ours['host_ports']} routed host ports per leaf; best of {args.rounds} interleaved rounds per side")
    for label, r, ms in (("clusterforge", ours, ours_ms), (f"pyavd {avd['version']}", avd, avd_ms)):
        first = f"plan {r['plan_s']:.2f} s" if "plan_s" in r else f"facts {r['facts_s']:.2f} s"
        print(f"  {label:<13} {r['switches']:>5} switches {r['seconds']:8.2f} s ({first}, cpu {r['cpu_s']:.2f} s)"
              f" = {ms:7.2f} ms/switch, {r['bytes'] / 2**20:.1f} MiB of config")
    print(f"  per-switch ratio (pyavd / clusterforge): {avd_ms / ours_ms:.1f}x wall, {cpu_ratio:.1f}x cpu")
    return 0


def best_rounds(sus: int, rounds: int) -> tuple[dict, dict]:
    """Both sides `rounds` times, interleaved, each in its own process; the fastest round of each."""
    ours_runs, avd_runs = [], []
    for _ in range(rounds):
        ours = child(["ours", str(sus)])
        ours_runs.append(ours)
        avd_runs.append(child(["avd", str(ours["leaves"]), str(ours["spines"]), str(ours["uplinks"]),
                               str(ours["host_ports"])]))
        print(f"  round {len(avd_runs)}: clusterforge {ours['seconds']:.2f} s, pyavd {avd_runs[-1]['seconds']:.2f} s",
              flush=True)
    return min(ours_runs, key=lambda r: r["seconds"]), min(avd_runs, key=lambda r: r["seconds"])


if __name__ == "__main__":
    sys.exit(main())
