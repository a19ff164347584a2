"""fp8 E4M3 matmul with and without fast accumulation on GPU 0 (a device-run benchmark; needs a GPU).

Prints TFLOPS and relative error per mode through the project's own matmul.burst, so the
acceptance floor is set from the mode the gate measures (FP8_FAST_ACCUM) and the other is on record.
"""

import json
import sys

from clusterforge.verify.gpu import matmul

out = {}
for fast in (False, True):
    matmul.FP8_FAST_ACCUM = fast
    runs = [matmul.burst(0, "fp8", n=8192) for _ in range(3)]
    out[f"fast_accum={fast}"] = [{k: r[k] for k in ("tflops", "rel_err", "numerics_ok")} for r in runs]
for p in ("bf16", "fp16"):
    out[p] = matmul.burst(0, p, n=8192)["tflops"]
json.dump(out, sys.stdout, indent=1)
print()
