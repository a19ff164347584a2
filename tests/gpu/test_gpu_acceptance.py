"""A short GPU acceptance on a real NVIDIA GPU. Skips, saying why, where none is usable.

It never pretends: with no GPU it is skipped, never passed. On a GPU it runs every step
(burst and a short sustained matmul with NVML telemetry, copy bandwidth, the all-reduce
smoke test and a small sweep through torchrun, scaling) and checks that each produced
real, correct numbers; it does not judge the GPU model's thresholds (any GPU may run it).
"""

from __future__ import annotations

import json

import pytest

from clusterforge.verify.gpu import probe
from clusterforge.verify.gpu.spec import AcceptanceSpec

pytestmark = pytest.mark.gpu


@pytest.fixture(scope="module")
def torch_cuda():
    try:
        return probe.require_gpu()
    except probe.NoGpuError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="module")
def short_report(torch_cuda, tmp_path_factory):
    from clusterforge.verify.gpu.runner import run_acceptance

    n = torch_cuda.cuda.device_count()
    name = torch_cuda.cuda.get_device_name(0)
    peaks = {"fp16": 1, "bf16": 1, "fp32": 1, "tf32": 1}
    if _has_fp8(torch_cuda):
        peaks["fp8"] = 1
    spec = AcceptanceSpec.from_dict({"gpu": {"model": name, "count": n, "tflops_dense": peaks}})
    out = tmp_path_factory.mktemp("accept")
    rep = run_acceptance(
        spec,
        out,
        sustained_s=3,
        window_s=1,
        sizes=[64 << 20, 128 << 20],
        precisions=("bf16", "fp32", "fp8"),  # fp8 is dropped (and logged) where undeclared
        sustained_precisions=("bf16",),
        n=4096,
        membw_bytes=1 << 30,
        allreduce_iters=5,
        scaling_steps=3,
        tokens_per_gpu=2048,
    )
    return rep, out


def _has_fp8(torch) -> bool:
    from clusterforge.verify.gpu.matmul import FP8_MIN_CAPABILITY

    return tuple(torch.cuda.get_device_capability(0)) >= FP8_MIN_CAPABILITY


def test_report_files_written(short_report):
    rep, out = short_report
    data = json.loads((out / "report.json").read_text())
    assert data["evaluation"] == rep["evaluation"]
    assert (out / "report.md").read_text().startswith("# GPU acceptance:")
    assert "GPU0" in (out / "nvidia-smi-topo.txt").read_text()


def test_every_step_ran(short_report):
    rep, _ = short_report
    m = rep["measurements"]
    assert m["errors"] == {}
    ev = rep["evaluation"]
    # tiny declared peaks (1 TFLOPS): every check must pass on any working GPU
    assert ev["failed"] == [], ev["checks"]
    assert ev["passed"] is True


def test_matmul_numbers_are_real(short_report):
    rep, _ = short_report
    mm = rep["measurements"]["matmul"]
    for gpu, per in mm["burst"].items():
        for p in ("bf16", "fp32"):
            assert per[p]["tflops"] > 1, (gpu, p)
            assert per[p]["numerics_ok"], (gpu, p, per[p]["rel_err"])
        assert per["bf16"]["tflops"] > per["fp32"]["tflops"]
        if "fp8" in per:  # E4M3 tensor cores: faster than bf16 and still a correct product
            assert per["fp8"]["numerics_ok"], (gpu, per["fp8"]["rel_err"])
            assert per["fp8"]["tflops"] > per["bf16"]["tflops"], (gpu, per["fp8"], per["bf16"])
    sus = mm["sustained"]["bf16"]["per_gpu"]
    for r in sus.values():
        assert len(r["windows"]) == 3
        tele = r["telemetry"]
        assert "error" not in tele, tele
        assert tele["summary"]["samples"] >= 3
        assert tele["summary"]["sm_mhz"]["max"] > 0
        assert tele["summary"]["power_w"]["max"] > 0


def test_fp8_measured_where_the_gpu_has_it(short_report, torch_cuda):
    rep, _ = short_report
    burst = rep["measurements"]["matmul"]["burst"]
    if not _has_fp8(torch_cuda):
        pytest.skip("this GPU has no fp8 tensor cores (compute capability < 8.9)")
    assert all("fp8" in per for per in burst.values()), burst


def test_allreduce_and_scaling(short_report):
    rep, _ = short_report
    m = rep["measurements"]
    world = m["host"]["gpu_count"]
    ar = m["allreduce"]
    assert ar["smoke"]["ok"] and ar["world_size"] == world
    assert {r["value"] for r in ar["smoke"]["ranks"]} == {float(world)}
    if world > 1:
        assert [r["bytes"] for r in ar["sweep"]] == [64 << 20, 128 << 20]
        assert all(r["correct"] and r["busbw_gbps"] > 0 for r in ar["sweep"])
    runs = m["scaling"]["runs"]
    assert [r["world_size"] for r in runs][0] == 1
    assert all(ph["loss_finite"] for r in runs for ph in r["phases"].values())
