"""GPU acceptance: pure evaluation, formulas, parsing and reports on recorded measurements.

The measurements below are shaped like the runner's and carry figures of the kind seen on
lent 2x H200 machines (shared/reference/gpu-acceptance.md). Every check here can fail: each
"bad" case changes one measurement and expects exactly that check (or finding) to flip.
"""

from __future__ import annotations

import copy
import json
import os

import pytest
from pydantic import ValidationError

from clusterforge.verify.gpu import launch, metrics, nccltests, probe, scaling, throttle
from clusterforge.verify.gpu.evaluate import evaluate
from clusterforge.verify.gpu.report import atomic_write_text, render_markdown, write_report
from clusterforge.verify.gpu.sampler import summarize_samples
from clusterforge.verify.gpu.spec import AcceptanceSpec, Thresholds

H200_GPU = {
    "model": "H200",
    "count": 2,
    "memory_gb": 141,
    "tflops_dense": {"fp16": 989.4, "bf16": 989.4, "fp32": 66.9, "tf32": 494.7},
    "nvswitch": False,
    "tdp_w": 700,
}


def spec(**th) -> AcceptanceSpec:
    return AcceptanceSpec.from_dict({"gpu": H200_GPU}, thresholds=th or None)


def _burst(tflops: float, ok: bool = True) -> dict:
    return {
        "tflops": tflops,
        "numerics_ok": ok,
        "rel_err": 1e-3 if ok else 0.5,
        "rel_err_limit": 2e-2,
        "n": 8192,
    }


def _tele(mask: int, temp=(61, 66), power=(650.0, 695.0)) -> dict:
    samples = [
        {
            "t": i * 0.2,
            "sm_mhz": 1260 + 10 * i,
            "mem_mhz": 3201,
            "power_w": power[i % 2],
            "temp_c": temp[i % 2],
            "util_pct": 100,
            "reasons": mask if i % 4 else 0,
        }
        for i in range(40)
    ]
    return {"static": {"power_limit_w": 700.0, "max_sm_mhz": 1980}, "summary": summarize_samples(samples)}


def _sustained(mean: float, mask: int = 0x4) -> dict:
    windows = [{"iters": 3000, "seconds": 5.0, "tflops": mean + d} for d in (4, -4, 2, -2, 0, 0)]
    return {
        "windows": windows,
        "best_tflops": mean + 4,
        "mean_tflops": mean,
        "min_tflops": mean - 4,
        "numerics_ok": True,
        "rel_err": 1e-3,
        "telemetry": _tele(mask),
    }


def good_measurements() -> dict:
    burst = {"fp16": _burst(757.0), "bf16": _burst(785.0), "fp32": _burst(51.0), "tf32": _burst(380.0)}
    sizes = [128 * metrics.MIB * 2**k for k in range(6)]
    ours = [284.0, 300.0, 315.0, 327.0, 335.0, 343.0]
    return {
        "errors": {},
        "host": {
            "gpu_count": 2,
            "gpus": [{"index": 0, "name": "NVIDIA H200"}, {"index": 1, "name": "NVIDIA H200"}],
        },
        "matmul": {
            "burst": {"0": copy.deepcopy(burst), "1": copy.deepcopy(burst)},
            "sustained": {
                "bf16": {
                    "duration_s": 30,
                    "concurrent_gpus": 2,
                    "per_gpu": {"0": _sustained(750.0), "1": _sustained(748.0)},
                },
            },
        },
        "membw": {
            "0": {"tbps": 4.29, "copy_ok": True, "bytes": 4 * metrics.GIB},
            "1": {"tbps": 4.28, "copy_ok": True, "bytes": 4 * metrics.GIB},
        },
        "allreduce": {
            "world_size": 2,
            "dtype": "bf16",
            "iters": 20,
            "smoke": {"ok": True, "ranks": [{"rank": 0, "value": 2.0}, {"rank": 1, "value": 2.0}]},
            "sweep": [
                {"bytes": b, "busbw_gbps": v, "algbw_gbps": v, "time_us": b / v / 1e3, "correct": True}
                for b, v in zip(sizes, ours, strict=True)
            ],
            "baseline": nccltests.reference_baseline(["NVIDIA H200", "NVIDIA H200"], 2),
        },
        "scaling": {
            "runs": [
                {
                    "world_size": 1,
                    "phases": {
                        "weak": {"tokens_per_s": 1.0e6, "step_s": 0.02, "loss_finite": True},
                        "strong": {"step_s": 0.04, "loss_finite": True},
                    },
                },
                {
                    "world_size": 2,
                    "phases": {
                        "weak": {"tokens_per_s": 1.9e6, "step_s": 0.021, "loss_finite": True},
                        "strong": {"step_s": 0.022, "loss_finite": True},
                    },
                },
            ],
        },
    }


def _with_eff(m: dict) -> dict:
    m["scaling"]["efficiency"] = scaling.efficiencies(m["scaling"]["runs"])
    return m


def by_name(ev: dict) -> dict:
    return {c["name"]: c for c in ev["checks"]}


def kinds(ev: dict) -> list[str]:
    return [f["kind"] for f in ev["findings"]]


# --- formulas -------------------------------------------------------------------------


def test_tflops_is_documents_formula():
    # 2 n^3 iters / seconds: 10 products of 8192^3 in 14.52 ms -> ~757 TFLOPS
    assert metrics.tflops(8192, 10, 0.014524) == pytest.approx(2 * 8192**3 * 10 / 0.014524 / 1e12)
    assert metrics.tflops(8192, 10, 0.014524) == pytest.approx(757.0, rel=1e-3)
    with pytest.raises(ValueError):
        metrics.tflops(8192, 10, 0)


def test_busbw_formula_matches_nccl_tests():
    # nccl-tests: busbw = algbw * 2 (n - 1) / n
    size, t = 4 * metrics.GIB, 0.01245
    algbw = size / t / 1e9
    assert metrics.allreduce_algbw_gbps(size, t) == pytest.approx(algbw)
    assert metrics.allreduce_busbw_gbps(size, t, 2) == pytest.approx(algbw)  # factor 1 at n = 2
    assert metrics.allreduce_busbw_gbps(size, t, 8) == pytest.approx(algbw * 1.75)
    assert metrics.allreduce_busbw_gbps(size, t, 1) == 0.0
    assert metrics.allreduce_bus_factor(4) == pytest.approx(1.5)


def test_copy_bandwidth_counts_read_and_write():
    # 4 GiB copied in 2.0 ms: 8.59 GB moved -> 4.29 TB/s
    assert metrics.copy_bandwidth_tbps(4 * metrics.GIB, 1, 0.002) == pytest.approx(4.295, rel=1e-3)


def test_scaling_efficiency_formulas():
    # documents' example: 100 min on 1 card, 18 min on 8 -> 69.4 %
    assert metrics.strong_scaling_efficiency(100, 18, 8) == pytest.approx(0.694, abs=1e-3)
    assert metrics.weak_scaling_efficiency(1000, 7600, 8) == pytest.approx(0.95)


def test_sizes():
    assert metrics.parse_size("128M") == 128 * 2**20
    assert metrics.parse_size("4GiB") == 4 * 2**30
    assert metrics.parse_size("1048576") == 2**20
    assert metrics.size_sweep(metrics.parse_size("128M"), metrics.parse_size("4G")) == [
        2**27,
        2**28,
        2**29,
        2**30,
        2**31,
        2**32,
    ]
    with pytest.raises(ValueError):
        metrics.size_sweep(10, 5)


# --- throttle reasons -------------------------------------------------------------------


def test_throttle_reasons_decoded():
    assert throttle.decode(0) == []
    assert throttle.decode(0x4) == ["sw_power_cap"]
    assert throttle.decode(0x1) == ["gpu_idle"]
    assert throttle.decode(0x44) == ["sw_power_cap", "hw_thermal_slowdown"]
    assert throttle.decode(0x28) == ["hw_slowdown", "sw_thermal_slowdown"]
    assert throttle.decode(0x80) == ["hw_power_brake_slowdown"]
    assert throttle.decode(0x1000) == ["unknown_0x1000"]
    # idle and application clocks are not throttling
    assert throttle.throttling_names(0x1 | 0x2 | 0x10) == []
    assert throttle.throttling_names(0x5) == ["sw_power_cap"]
    assert throttle.causes(["sw_power_cap", "hw_thermal_slowdown"]) == ["power", "thermal"]
    assert throttle.causes(["gpu_idle"]) == []


def test_mask_summary_counts_and_causes():
    s = throttle.summarize_masks([0x4, 0x4, 0x0, 0x20])
    assert s["samples"] == 4
    assert s["counts"] == {"sw_power_cap": 2, "sw_thermal_slowdown": 1}
    assert s["fractions"]["sw_power_cap"] == pytest.approx(0.5)
    assert s["mask_union_hex"] == "0x24"
    assert s["causes"] == ["power", "thermal"]


def test_sample_summary():
    samples = [
        {"sm_mhz": 1980, "mem_mhz": 3201, "power_w": 400.0, "temp_c": 50, "util_pct": 100, "reasons": 0},
        {"sm_mhz": 1260, "mem_mhz": 3201, "power_w": 695.0, "temp_c": 66, "util_pct": 100, "reasons": 4},
        {"sm_mhz": None, "mem_mhz": None, "power_w": None, "temp_c": None, "util_pct": None, "reasons": None},
    ]
    s = summarize_samples(samples)
    assert s["sm_mhz"] == {"min": 1260, "max": 1980, "mean": 1620.0}
    assert s["power_w"]["max"] == 695.0
    assert s["reasons"]["samples"] == 2
    assert s["reasons"]["throttling"] == ["sw_power_cap"]


# --- spec -------------------------------------------------------------------------------


def test_spec_from_catalog_shapes_and_defaults():
    a = AcceptanceSpec.from_dict({"gpu": H200_GPU})
    b = AcceptanceSpec.from_dict(H200_GPU)
    c = AcceptanceSpec.from_dict(json.loads(a.model_dump_json()))
    assert a == b == c
    assert a.gpu_count == 2 and a.gpu_model == "H200"
    assert a.tflops_dense.get("bf16") == 989.4
    assert a.thresholds.matmul_fraction == 0.75
    assert a.thresholds.scaling_efficiency_floor == 0.6
    assert a.thresholds.sustained_gap_finding == 0.10
    assert a.thresholds.busbw_floor_gbps is None
    with pytest.raises(ValidationError):  # frozen
        a.gpu_count = 4  # type: ignore[misc]


def test_spec_rejects_bad_input():
    with pytest.raises(ValueError):
        AcceptanceSpec.from_dict({"nothing": 1})
    with pytest.raises(ValueError):
        Thresholds(matmul_fraction_by_precision={"fp4": 0.5})
    with pytest.raises(ValueError):
        AcceptanceSpec.from_dict({"gpu": {**H200_GPU, "tflops_dense": {"fp16": -1, "bf16": 1, "fp32": 1, "tf32": 1}}})


def test_fp8_peak_is_optional_and_declared_only_where_given():
    h200 = AcceptanceSpec.from_dict({"gpu": {**H200_GPU, "tflops_dense": {**H200_GPU["tflops_dense"], "fp8": 1979}}})
    assert h200.tflops_dense.declares("fp8") and h200.tflops_dense.get("fp8") == 1979
    plain = AcceptanceSpec.from_dict({"gpu": H200_GPU})
    assert not plain.tflops_dense.declares("fp8")
    with pytest.raises(KeyError):
        plain.tflops_dense.get("fp8")


def test_fp8_burst_below_catalog_floor_fails():
    s = AcceptanceSpec.from_dict({"gpu": {**H200_GPU, "tflops_dense": {**H200_GPU["tflops_dense"], "fp8": 1979},
                                          "acceptance": {"burst_tflops": {"fp8": 1200}}}})
    m = good_measurements()
    m["matmul"]["burst"]["0"]["fp8"] = {"tflops": 1100.0, "rel_err": 0.004, "numerics_ok": True}
    ev = evaluate(m, s)
    fp8 = next(c for c in ev["checks"] if c["name"] == "matmul.fp8.burst[gpu0]")
    assert fp8["passed"] is False and fp8["expected"] == 1200
    m["matmul"]["burst"]["0"]["fp8"]["tflops"] = 1300.0
    fp8 = next(c for c in evaluate(m, s)["checks"] if c["name"] == "matmul.fp8.burst[gpu0]")
    assert fp8["passed"] is True


# --- evaluation ---------------------------------------------------------------------------


def test_good_measurements_pass():
    ev = evaluate(_with_eff(good_measurements()), spec(busbw_floor_gbps=300, membw_floor_tbps=4.0))
    failed = [c for c in ev["checks"] if not c["passed"]]
    assert failed == []
    assert ev["passed"] is True
    names = by_name(ev)
    assert names["matmul.bf16.burst[gpu0]"]["expected"] == pytest.approx(0.75 * 989.4, abs=0.01)
    assert names["allreduce.busbw[4 GiB]"]["measured"] == 343.0
    assert names["scaling.weak[2]"]["measured"] == pytest.approx(0.95)
    assert names["scaling.strong[2]"]["measured"] == pytest.approx(0.04 / (2 * 0.022), abs=1e-4)


def test_matmul_below_threshold_fails():
    m = _with_eff(good_measurements())
    m["matmul"]["burst"]["1"]["bf16"] = _burst(700.0)  # 70.7 % of 989.4 < 75 %
    ev = evaluate(m, spec())
    assert ev["passed"] is False
    assert ev["failed"] == ["matmul.bf16.burst[gpu1]"]
    c = by_name(ev)["matmul.bf16.burst[gpu1]"]
    assert c["measured"] == 700.0 and c["unit"] == "TFLOPS"


def test_per_precision_fraction_override():
    m = _with_eff(good_measurements())
    m["matmul"]["burst"]["0"]["tf32"] = _burst(364.0)  # 73.6 % of 494.7
    assert "matmul.tf32.burst[gpu0]" in evaluate(m, spec())["failed"]
    ev = evaluate(m, spec(matmul_fraction_by_precision={"tf32": 0.7}))
    assert ev["passed"] is True


def test_wrong_matmul_result_fails_even_if_fast():
    m = _with_eff(good_measurements())
    m["matmul"]["burst"]["0"]["fp16"] = _burst(900.0, ok=False)
    ev = evaluate(m, spec())
    assert ev["failed"] == ["matmul.fp16.burst[gpu0]"]
    assert "WRONG RESULT" in by_name(ev)["matmul.fp16.burst[gpu0]"]["detail"]


def test_sustained_gate_only_when_configured():
    m = _with_eff(good_measurements())
    m["matmul"]["sustained"]["bf16"]["per_gpu"]["0"] = _sustained(660.0)
    assert evaluate(m, spec())["passed"] is True  # finding only by default
    ev = evaluate(m, spec(sustained_matmul_fraction=0.7))  # 0.7 * 989.4 = 692.6
    assert ev["failed"] == ["matmul.bf16.sustained[gpu0]"]


def test_sustained_gap_and_throttle_findings_name_the_cause():
    m = _with_eff(good_measurements())
    m["matmul"]["sustained"]["bf16"]["per_gpu"]["0"] = _sustained(660.0, mask=0x4)  # 15.9 % below 785
    ev = evaluate(m, spec())
    gaps = [f for f in ev["findings"] if f["kind"] == "sustained_gap"]
    assert len(gaps) == 1 and gaps[0]["gpu"] == "0"
    assert gaps[0]["gap"] == pytest.approx(1 - 660 / 785, abs=1e-4)
    assert gaps[0]["causes"] == ["power"]
    throttles = [f for f in ev["findings"] if f["kind"] == "throttling"]
    assert {f["gpu"] for f in throttles} == {"0", "1"}
    assert all(f["reasons"] == ["sw_power_cap"] and f["causes"] == ["power"] for f in throttles)
    assert "700.0 W" in throttles[0]["message"]


def test_no_gap_finding_within_threshold_and_no_throttle_without_reason():
    m = _with_eff(good_measurements())
    for g in ("0", "1"):
        m["matmul"]["sustained"]["bf16"]["per_gpu"][g] = _sustained(760.0, mask=0x1)  # 3 % gap, idle bit only
    ev = evaluate(m, spec())
    assert "sustained_gap" not in kinds(ev)
    assert "throttling" not in kinds(ev)


def test_thermal_throttle_and_hot_gpu():
    m = _with_eff(good_measurements())
    s = _sustained(600.0, mask=0x40)
    s["telemetry"] = _tele(0x40, temp=(88, 91))
    m["matmul"]["sustained"]["bf16"]["per_gpu"]["1"] = s
    ev = evaluate(m, spec())
    gap = next(f for f in ev["findings"] if f["kind"] == "sustained_gap")
    assert gap["causes"] == ["thermal"]
    assert any(f["kind"] == "temperature" and f["gpu"] == "1" for f in ev["findings"])


def test_busbw_below_floor_fails():
    m = _with_eff(good_measurements())
    m["allreduce"]["sweep"][-1]["busbw_gbps"] = 250.0
    ev = evaluate(m, spec(busbw_floor_gbps=300))
    assert ev["failed"] == ["allreduce.busbw[4 GiB]"]


def test_smoke_failure_and_wrong_sum_fail():
    m = _with_eff(good_measurements())
    m["allreduce"]["smoke"] = {"ok": False, "ranks": [{"rank": 0, "value": 2.0}, {"rank": 1, "value": 1.0}]}
    m["allreduce"]["sweep"][2]["correct"] = False
    ev = evaluate(m, spec())
    assert set(ev["failed"]) == {"allreduce.smoke", "allreduce.sweep_correct"}
    assert by_name(ev)["allreduce.smoke"]["measured"] == [1.0, 2.0]


def test_fidelity_against_reference_within_and_outside_tolerance():
    m = _with_eff(good_measurements())
    f = next(x for x in evaluate(m, spec())["findings"] if x["kind"] == "fidelity")
    assert f["measured_here"] is False and "reference" in f["baseline_source"]
    assert f["within_tolerance_at_1GiB_plus"] is True
    ratios = {r["bytes"]: r["ratio"] for r in f["rows"]}
    assert ratios[4 * metrics.GIB] == pytest.approx(343 / 345, abs=1e-4)
    m["allreduce"]["sweep"][3]["busbw_gbps"] = 300.0  # 1 GiB: 300 / 325 = 0.923
    f = next(x for x in evaluate(m, spec())["findings"] if x["kind"] == "fidelity")
    assert f["within_tolerance_at_1GiB_plus"] is False and f["severity"] == "warning"
    # below 1 GiB a deviation is reported but not counted
    m = _with_eff(good_measurements())
    m["allreduce"]["sweep"][0]["busbw_gbps"] = 200.0
    f = next(x for x in evaluate(m, spec())["findings"] if x["kind"] == "fidelity")
    assert f["within_tolerance_at_1GiB_plus"] is True


def test_scaling_below_floor_fails_with_finding():
    m = good_measurements()
    m["scaling"]["runs"][1]["phases"]["weak"]["tokens_per_s"] = 1.1e6  # 55 %
    ev = evaluate(_with_eff(m), spec())
    assert ev["failed"] == ["scaling.weak[2]"]
    f = next(x for x in ev["findings"] if x["kind"] == "scaling")
    assert f["efficiency"] == pytest.approx(0.55) and f["gpus"] == 2


def test_gpu_count_and_model_mismatch_fail():
    m = _with_eff(good_measurements())
    m["host"]["gpu_count"] = 1
    m["host"]["gpus"] = [{"index": 0, "name": "NVIDIA H100 80GB HBM3"}]
    ev = evaluate(m, spec())
    assert {"gpu.count", "gpu.model"} <= set(ev["failed"])


def test_step_error_is_a_failed_check():
    m = _with_eff(good_measurements())
    m["errors"]["allreduce"] = "LaunchError: exit 1"
    ev = evaluate(m, spec())
    assert ev["failed"] == ["step.allreduce"]


def test_empty_measurements_do_not_pass():
    ev = evaluate({}, spec())
    assert ev["checks"] == [] and ev["passed"] is False


def test_single_gpu_allreduce_is_smoke_only():
    m = {
        "host": {"gpu_count": 1, "gpus": [{"index": 0, "name": "NVIDIA H200"}],
                 "nvidia_smi": [{"index": "0", "enforced.power.limit": "700.00"}]},  # as the runner records it
        "allreduce": {"world_size": 1, "smoke": {"ok": True, "ranks": [{"value": 1.0}]}, "sweep": []},
    }
    ev = evaluate(m, AcceptanceSpec.from_dict({**H200_GPU, "count": 1}))
    assert ev["passed"] is True
    assert "allreduce_single_gpu" in kinds(ev)
    assert not any(c["name"].startswith("allreduce.busbw") for c in ev["checks"])


# --- nccl-tests parsing, scaling, launch -----------------------------------------------------

ALL_REDUCE_PERF_OUT = """\
# nccl-tests version 2.19.6 nccl-headers=22803 nccl-library=22803
# Collective test starting: all_reduce_perf
#  Rank  0 Group  0 Pid   1234 on   host1 device  0 [0000:19:00] NVIDIA H200
#  Rank  1 Group  0 Pid   1234 on   host1 device  1 [0000:3b:00] NVIDIA H200
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
   134217728      67108864  bfloat16     sum      -1    472.6  284.00  284.00      0    470.9  285.02  285.02      0
  4294967296    2147483648  bfloat16     sum      -1  12449.0  345.01  345.01      0  12420.1  345.81  345.81      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 314.96
#
"""  # noqa: E501


def test_parse_all_reduce_perf():
    p = nccltests.parse_all_reduce_perf(ALL_REDUCE_PERF_OUT)
    assert p["avg_busbw_gbps"] == pytest.approx(314.96)
    assert p["version"].startswith("nccl-tests version 2.19.6")
    assert [r["bytes"] for r in p["rows"]] == [134217728, 4294967296]
    assert p["rows"][1]["in_place"]["busbw_gbps"] == 345.81
    assert p["rows"][0]["out_of_place"]["time_us"] == 472.6
    b = nccltests.baseline_from_nccl_tests(p, "/x/all_reduce_perf")
    assert b["measured_here"] is True and b["busbw_gbps"][4294967296] == 345.81
    argv = nccltests.all_reduce_perf_argv("all_reduce_perf", 2**27, 2**32, 2)
    assert argv[:9] == ["all_reduce_perf", "-b", "134217728", "-e", "4294967296", "-f", "2", "-g", "2"]
    assert "bfloat16" in argv


def test_reference_baseline_only_for_2x_h200():
    assert nccltests.reference_baseline(["NVIDIA H200"] * 2, 2) is not None
    assert nccltests.reference_baseline(["NVIDIA H200"] * 8, 8) is None
    assert nccltests.reference_baseline(["NVIDIA H100 80GB HBM3"] * 2, 2) is None


def test_gpu_counts_and_efficiencies():
    assert scaling.gpu_counts(1) == [1]
    assert scaling.gpu_counts(2) == [1, 2]
    assert scaling.gpu_counts(8) == [1, 2, 4, 8]
    assert scaling.gpu_counts(6) == [1, 2, 4, 6]
    eff = scaling.efficiencies(good_measurements()["scaling"]["runs"])
    assert eff["weak"] == {"1": 1.0, "2": 0.95}
    assert scaling.efficiencies([{"world_size": 2, "phases": {}}])["weak"] == {}


def test_torchrun_argv_single_and_multi_node():
    one = launch.torchrun_argv("m.w", ["--x", "1"], 8, python="py")
    assert one == [
        "py",
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nnodes",
        "1",
        "--nproc-per-node",
        "8",
        "-m",
        "m.w",
        "--x",
        "1",
    ]
    multi = launch.torchrun_argv("m.w", [], 8, hosts=["n1", "n2"], rdzv_port=29500, python="py")
    assert multi[3:11] == [
        "--nnodes",
        "2",
        "--rdzv-backend",
        "c10d",
        "--rdzv-endpoint",
        "n1:29500",
        "--rdzv-id",
        "clusterforge-accept",
    ]


def test_result_line_round_trip(capsys):
    launch.emit_result({"a": 1, "b": [1, 2]})
    out = "noise\n[rank0]: warning\n" + capsys.readouterr().out + "tail\n"
    assert launch.parse_result(out) == {"a": 1, "b": [1, 2]}
    assert launch.parse_result("nothing here") is None


def test_parse_nvidia_smi_query_csv():
    rows = probe.parse_query_csv(
        "0, NVIDIA H200, 00000000:19:00.0\n1, NVIDIA H200, 00000000:3B:00.0\n",
        fields=("index", "name", "pci.bus_id"),
    )
    assert rows == [
        {"index": "0", "name": "NVIDIA H200", "pci.bus_id": "00000000:19:00.0"},
        {"index": "1", "name": "NVIDIA H200", "pci.bus_id": "00000000:3B:00.0"},
    ]


# --- reports ----------------------------------------------------------------------------------


def test_report_written_atomically(tmp_path):
    m = _with_eff(good_measurements())
    m["matmul"]["burst"]["1"]["bf16"] = _burst(700.0)
    s = spec()
    rep = {"schema": "x", "spec": s.model_dump(mode="json"), "measurements": m, "evaluation": evaluate(m, s)}
    paths = write_report(rep, tmp_path / "out")
    data = json.loads(paths["json"].read_text())
    assert data["evaluation"]["failed"] == ["matmul.bf16.burst[gpu1]"]
    md = paths["markdown"].read_text()
    assert md.startswith("# GPU acceptance: FAILED")
    assert "| matmul.bf16.burst[gpu1] | 700.0 | 742.0 | TFLOPS | **FAIL** |" in md.replace("742.05", "742.0")
    assert "sw_power_cap" in md and "4 GiB" in md
    assert sorted(os.listdir(tmp_path / "out")) == ["report.json", "report.md"]  # no temporaries left


def test_atomic_write_leaves_old_file_on_failure(tmp_path):
    p = tmp_path / "r.json"
    atomic_write_text(p, "old")

    with pytest.raises(TypeError):
        atomic_write_text(p, object())  # type: ignore[arg-type]
    assert p.read_text() == "old"
    assert os.listdir(tmp_path) == ["r.json"]


def test_markdown_for_passing_report():
    m = _with_eff(good_measurements())
    s = spec()
    md = render_markdown({"spec": s.model_dump(mode="json"), "measurements": m, "evaluation": evaluate(m, s)})
    assert md.startswith("# GPU acceptance: PASSED")
    assert "0 failed" in md
    assert "| 4 GiB |" in md and "0.9942" in md  # ours / reference at 4 GiB


# --- no GPU -----------------------------------------------------------------------------------


def _gpu_usable() -> bool:
    try:
        probe.require_gpu()
    except probe.NoGpuError:
        return False
    return True


@pytest.mark.skipif(_gpu_usable(), reason="a GPU is usable here; the no-GPU path cannot be exercised")
def test_no_gpu_raises_clear_error(tmp_path):
    from clusterforge.verify.gpu import accept_main, run_acceptance

    with pytest.raises(probe.NoGpuError, match="no NVIDIA GPU visible"):
        run_acceptance(spec(), tmp_path)
    assert accept_main({"gpu": H200_GPU}, tmp_path) == 2
    assert accept_main({"bogus": 1}, tmp_path) == 2


# --- driver clock-event counters and transient throttling ------------------------------------

NVIDIA_SMI_Q_PERFORMANCE = """\
==============NVSMI LOG==============

Driver Version                                         : 580.159.04
Attached GPUs                                          : 2
GPU 00000000:00:06.0
    Performance State                                  : P0
    Clocks Event Reasons
        Idle                                           : Active
        SW Power Cap                                   : Not Active
    Clocks Event Reasons Counters
        SW Power Capping                               : 3979945 us
        Sync Boost                                     : 0 us
        SW Thermal Slowdown                            : 0 us
        HW Thermal Slowdown                            : 0 us
        HW Power Braking                               : 0 us
    Sparse Operation Mode                              : Disabled

GPU 00000000:00:07.0
    Clocks Event Reasons Counters
        SW Power Capping                               : 12 us
        HW Thermal Slowdown                            : 7 us
"""


def test_parse_clock_event_counters_and_delta():
    before = probe.parse_clock_event_counters(NVIDIA_SMI_Q_PERFORMANCE)
    assert before["00000000:00:06.0"] == {
        "sw_power_cap_us": 3979945,
        "sync_boost_us": 0,
        "sw_thermal_slowdown_us": 0,
        "hw_thermal_slowdown_us": 0,
        "hw_power_brake_us": 0,
    }
    assert before["00000000:00:07.0"] == {"sw_power_cap_us": 12, "hw_thermal_slowdown_us": 7}
    after = {"00000000:00:06.0": {"sw_power_cap_us": 3979945 + 29_500_000, "sync_boost_us": 0}}
    assert probe.counters_delta(before, after) == {
        "00000000:00:06.0": {"sw_power_cap_us": 29_500_000, "sync_boost_us": 0}
    }
    assert probe.parse_clock_event_counters("") == {}


def test_transient_throttle_is_info_and_counters_are_quoted():
    m = _with_eff(good_measurements())
    s = _sustained(750.0)
    samples = [{"sm_mhz": 1980, "power_w": 690.0, "temp_c": 62, "reasons": 0x4 if i == 0 else 0} for i in range(100)]
    s["telemetry"] = {"static": {"power_limit_w": 700.0}, "summary": summarize_samples(samples)}
    m["matmul"]["sustained"]["bf16"]["per_gpu"]["0"] = s
    t = _sustained(700.0)
    t["telemetry"]["clock_event_counters_us"] = {"sw_power_cap_us": 29_500_000, "sync_boost_us": 0}
    m["matmul"]["sustained"]["bf16"]["per_gpu"]["1"] = t
    ev = evaluate(m, spec())
    th = {f["gpu"]: f for f in ev["findings"] if f["kind"] == "throttling"}
    assert th["0"]["severity"] == "info" and th["0"]["share"] == pytest.approx(0.01)
    assert th["1"]["severity"] == "warning"
    assert "sw_power_cap 29.5 s" in th["1"]["message"]


def test_reevaluate_recorded_report_against_another_spec(tmp_path):
    from clusterforge.verify.gpu.runner import accept_main

    m = _with_eff(good_measurements())
    s = spec()
    src = tmp_path / "old"
    write_report({"spec": s.model_dump(mode="json"), "measurements": m, "evaluation": evaluate(m, s)}, src)
    assert accept_main({"gpu": H200_GPU}, tmp_path / "same", reevaluate_from=str(src / "report.json")) == 0
    stricter = {"gpu": H200_GPU, "thresholds": {"busbw_floor_gbps": 400}}
    assert accept_main(stricter, tmp_path / "new", reevaluate_from=str(src / "report.json")) == 1
    data = json.loads((tmp_path / "new" / "report.json").read_text())
    assert data["evaluation"]["failed"] == ["allreduce.busbw[4 GiB]"]
    assert data["reevaluated"]["previous_failed"] == []
    assert data["measurements"] == json.loads((src / "report.json").read_text())["measurements"]


@pytest.mark.parametrize(
    ("declared", "reported", "ok"),
    [
        ("H200", "NVIDIA H200", True),
        ("H200-SXM5-141GB", "NVIDIA H200", True),  # the catalog's spelling
        ("H100-SXM5-80GB", "NVIDIA H100 80GB HBM3", True),
        ("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3", True),
        ("H100-SXM5-80GB", "NVIDIA H100 PCIe", False),  # form factor
        ("H100-SXM5-80GB", "NVIDIA H100 NVL", False),  # issue 47: names match exactly (test_gpu_floors.py)
        ("H200-SXM5-141GB", "NVIDIA H200 NVL", False),
        ("H100-NVL", "NVIDIA H100 80GB HBM3", False),
        ("H100-SXM5-80GB", "NVIDIA H100 94GB HBM2e", False),  # memory
        ("H200", "NVIDIA H100 80GB HBM3", False),  # family
        ("H20", "NVIDIA H200", False),
        ("A100-SXM4-80GB", "NVIDIA A100-SXM4-80GB", True),
        ("", "NVIDIA H200", False),
    ],
)
def test_gpu_model_matching(declared, reported, ok):
    from clusterforge.verify.gpu_names import gpu_model_matches

    assert gpu_model_matches(declared, reported) is ok


def test_spec_from_shipped_device_inventories():
    """The lent machines' declarations (inventory/device-h200x*.yaml) give the acceptance specs."""
    import pathlib

    model = pytest.importorskip("clusterforge.model.loader")
    root = pathlib.Path(__file__).resolve().parents[2]
    for name, count in (("device-h200x1", 1), ("device-h200x2", 2)):
        cluster, _ = model.load_cluster(root / "inventory" / f"{name}.yaml")
        server = cluster.catalog.servers[cluster.scalable_units[0].server_model]
        s = AcceptanceSpec.from_dict(server.model_dump(mode="json"))
        assert s.gpu_count == count and s.gpu_model == "H200"
        assert s.tflops_dense.get("bf16") == 989.4
