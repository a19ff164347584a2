"""k8s_gpu_mode: dra's pure parts: the SIMULATED devices' product name (plan/dra.py) and what verify reads from
ResourceSlices and ResourceClaims (verify/dra_checks.py)."""

from __future__ import annotations

import re

from clusterforge.plan.dra import plan_device_classes, simulated_product
from clusterforge.plan.kubernetes import KubeNode
from clusterforge.verify.dra_checks import claim_devices, dra_probe_pod, published_devices

# the role's grammar for the product (roles/k8s_node/vars/main.yml) and cf-sim-dra-driver's
PRODUCT = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._()-]{0,63}$")


def test_simulated_product_is_selected_by_its_class_and_fits_an_attribute():
    (cls,) = plan_device_classes([KubeNode("n1", "198.18.8.16", "198.18.128.0/24", "02:cf:c6:12:80:00", 8,
                                           "H200-SXM5-141GB", ())])
    product = cls.to_dict()["simulated_product"]
    assert product == "NVIDIA H200-SXM5-141GB (SIMULATED)"
    assert cls.product in product.lower() and PRODUCT.match(product)
    longest = simulated_product("A" * 63)  # the GPU model grammar's longest
    assert len(longest) == 64 and longest.endswith(" (SIMULATED)") and PRODUCT.match(longest)
    assert simulated_product("B200 ").endswith("B200 (SIMULATED)")


def _slice(node: str, pool: str, generation: int, devices: int, driver: str = "gpu.nvidia.com",
           simulated: bool = True) -> dict:
    return {"spec": {"driver": driver, "nodeName": node, "pool": {"name": pool, "generation": generation},
                     "devices": [{"name": f"gpu-{i}", "attributes": {"simulated": {"bool": simulated}}}
                                 for i in range(devices)]}}


def test_published_devices_counts_the_node_s_newest_pool_of_the_driver():
    slices = [_slice("n1", "n1", 1, 8), _slice("n1", "n1", 2, 4), _slice("n2", "n2", 1, 8),
              _slice("n1", "n1", 2, 3, driver="other.example.com"), _slice("n1", "extra", 1, 2, simulated=False)]
    assert published_devices(slices, "n1", "gpu.nvidia.com") == (6, 4)
    assert published_devices(slices, "n3", "gpu.nvidia.com") == (0, 0)
    assert published_devices([{"spec": {}}], "n1", "gpu.nvidia.com") == (0, 0)


def test_claim_devices_reads_the_allocation_of_the_driver():
    claim = {"status": {"allocation": {"devices": {"results": [
        {"driver": "gpu.nvidia.com", "pool": "n1", "device": "gpu-3", "request": "gpu"},
        {"driver": "other.example.com", "pool": "n1", "device": "x", "request": "gpu"}]}}}}
    assert claim_devices(claim, "gpu.nvidia.com") == [("n1", "gpu-3")]
    assert claim_devices({"status": {}}, "gpu.nvidia.com") == []
    assert claim_devices({}, "gpu.nvidia.com") == []


def test_the_probe_pod_claims_through_the_template_and_tolerates_the_gpu_taint():
    pod = dra_probe_pod("p", "198.18.8.65:5000/clusterforge/cf-gpu-probe:1", "h200-1", "n1",
                        [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}])
    spec = pod["spec"]
    assert spec["resourceClaims"] == [{"name": "gpu", "resourceClaimTemplateName": "h200-1"}]
    assert spec["containers"][0]["resources"] == {"claims": [{"name": "gpu"}]}
    assert spec["containers"][0]["args"] == ["--dra"]
    assert spec["nodeSelector"] == {"kubernetes.io/hostname": "n1"}
    assert {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
