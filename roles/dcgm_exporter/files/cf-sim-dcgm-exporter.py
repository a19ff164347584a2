#!/usr/bin/python3
"""SIMULATED: clusterforge's stand-in for NVIDIA's dcgm-exporter on lab hosts, which have no GPU and no DCGM.

Serves, on dcgm-exporter's port and path (/metrics), the DCGM fields of the role's metrics list for the host's
simulated GPUs, so the alerting rules read the same series names they read on a real cluster. Every series
carries simulated="true" and every HELP text begins with SIMULATED. The values are the configuration's healthy
defaults, replaced by the state file's, read on every scrape, so a test sets a GPU's temperature by writing:

    {"1": {"DCGM_FI_DEV_GPU_TEMP": 90}}

(GPU index -> field -> value; an absent file: every GPU at the defaults). Installed by roles/dcgm_exporter only
when dcgm_exporter_simulated_gpus is above 0 (site.yml sets it on lab hosts, cf_lab). Python's standard library
only.
"""

from __future__ import annotations

import argparse
import json
import math
import socket
import sys
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


def _label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _number(value: object) -> str:
    number = float(value)  # type: ignore[arg-type]
    if math.isnan(number):
        return "NaN"
    if math.isinf(number):
        return "+Inf" if number > 0 else "-Inf"
    return repr(int(number)) if number.is_integer() else repr(number)


def exposition(config: dict, state: dict) -> str:
    """The Prometheus text exposition of every configured field for every simulated GPU."""
    host = config.get("hostname") or socket.gethostname()
    model = config.get("model", "")
    gpus = int(config["gpus"])
    unknown = sorted(set(state) - {str(i) for i in range(gpus)})
    if unknown:
        raise ValueError(f"the state names GPUs {unknown}; this host simulates GPUs 0 to {gpus - 1}")
    fields = {metric["field"] for metric in config["metrics"]}
    lines: list[str] = []
    for metric in config["metrics"]:
        field = metric["field"]
        lines.append(f"# HELP {field} SIMULATED (clusterforge lab, no GPU): {metric['help']}")
        lines.append(f"# TYPE {field} {metric['type']}")
        for gpu in range(gpus):
            overrides = state.get(str(gpu), {})
            stray = sorted(set(overrides) - fields)
            if stray:
                raise ValueError(f"the state of GPU {gpu} names fields this exporter does not serve: {stray}")
            value = overrides.get(field, config["defaults"].get(field, 0))
            labels = {
                "gpu": str(gpu),
                "UUID": "GPU-" + str(uuid.uuid5(uuid.NAMESPACE_DNS, f"{host}.gpu{gpu}.simulated.clusterforge")),
                "device": f"nvidia{gpu}",
                "modelName": model,
                "Hostname": host,
                "simulated": "true",
            }
            text = ",".join(f'{k}="{_label(v)}"' for k, v in labels.items())
            lines.append(f"{field}{{{text}}} {_number(value)}")
    return "\n".join(lines) + "\n"


def _handler(config: dict, state_file: Path) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "cf-sim-dcgm-exporter"

        def _answer(self, code: int, body: str, content_type: str = "text/plain; charset=utf-8") -> None:
            data = body.encode()
            self.send_response(code)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            if self.path.split("?")[0] != "/metrics":
                self._answer(404, "SIMULATED dcgm-exporter: GET /metrics\n")
                return
            try:
                state = json.loads(state_file.read_text(encoding="utf-8")) if state_file.exists() else {}
                if not isinstance(state, dict):
                    raise ValueError("the state is a JSON object: GPU index -> field -> value")
                body = exposition(config, state)
            except (OSError, ValueError, TypeError, AttributeError) as exc:
                # a broken state file fails the scrape (the target goes down) instead of serving defaults
                self._answer(500, f"SIMULATED dcgm-exporter: {state_file}: {exc}\n")
                return
            self._answer(200, body, "text/plain; version=0.0.4; charset=utf-8")

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
            pass

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="SIMULATED dcgm-exporter: DCGM series for GPUs that do not exist.")
    parser.add_argument("--config", required=True, type=Path, help="JSON: gpus, model, hostname, metrics, defaults")
    parser.add_argument("--state", required=True, type=Path, help="JSON: GPU index -> field -> value")
    parser.add_argument("--listen", default="", help="address to listen on (all by default, as dcgm-exporter)")
    parser.add_argument("--port", type=int, default=9400)
    args = parser.parse_args(argv)
    config = json.loads(args.config.read_text(encoding="utf-8"))
    exposition(config, {})  # a configuration it cannot serve fails the start, not the first scrape
    server = ThreadingHTTPServer((args.listen, args.port), _handler(config, args.state))
    print(f"SIMULATED dcgm-exporter: {config['gpus']} GPUs on :{args.port}/metrics, state {args.state}", flush=True)
    server.serve_forever()  # until systemd's SIGTERM
    return 0


if __name__ == "__main__":
    sys.exit(main())
