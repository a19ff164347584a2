#!/usr/bin/python3
"""LAB ONLY: clusterforge's lab alert receiver, the webhook the lab's Alertmanager delivers to.

Not a paging integration: it records every notification Alertmanager POSTs (its webhook payload, as sent) with
the time it arrived (Unix seconds, this host's clock) as one JSON line in the record file, writes one line per
alert to its journal, and answers GET /notifications[?since=<unix seconds>] with the recorded notifications, so a
test measures the time from a fault to the delivered alert. Installed by roles/monitoring only when
monitoring_lab_receiver_enabled is on (playbooks/monitoring.yml turns it on for lab hosts, cf_lab); a real cluster
delivers to its own receivers (monitoring_alertmanager_webhook_urls). Python's standard library only.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

MAX_BODY = 16 * 1024 * 1024  # Alertmanager's notifications are far smaller


def _handler(record: Path, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        server_version = "cf-lab-alert-receiver"

        def _answer(self, code: int, document: object) -> None:
            body = json.dumps(document).encode()
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            length = int(self.headers.get("Content-Length") or 0)
            if not 0 < length <= MAX_BODY:
                self._answer(400, {"error": f"a JSON body of 1 to {MAX_BODY} bytes is expected"})
                return
            body = self.rfile.read(length)
            received = time.time()
            try:
                payload = json.loads(body)
            except ValueError as exc:
                self._answer(400, {"error": f"not JSON: {exc}"})
                return
            line = json.dumps({"received": received, "path": self.path, "payload": payload}, sort_keys=True)
            with lock, record.open("a", encoding="utf-8") as out:
                out.write(line + "\n")
            alerts = payload.get("alerts", []) if isinstance(payload, dict) else []
            for alert in alerts if isinstance(alerts, list) else []:
                labels = alert.get("labels", {}) if isinstance(alert, dict) else {}
                print(f"{alert.get('status', '?')} {labels.get('alertname', '?')} host={labels.get('host', '')}"
                      f" gpu={labels.get('gpu', '')} severity={labels.get('severity', '')}", flush=True)
            self._answer(200, {"recorded": len(alerts) if isinstance(alerts, list) else 0})

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            url = urllib.parse.urlsplit(self.path)
            if url.path != "/notifications":
                self._answer(404, {"error": "GET /notifications[?since=<unix seconds>]"})
                return
            try:
                since = float(urllib.parse.parse_qs(url.query).get("since", ["0"])[0])
            except ValueError:
                self._answer(400, {"error": "since: Unix seconds"})
                return
            with lock:
                lines = record.read_text(encoding="utf-8").splitlines() if record.exists() else []
            notifications = [n for n in map(json.loads, lines) if n["received"] >= since]
            self._answer(200, notifications)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (http.server's name)
            pass  # one journal line per alert (do_POST), not one per request

    return Handler


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="LAB ONLY: records Alertmanager's webhook notifications.")
    parser.add_argument("--listen", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=9097, help="port to listen on")
    parser.add_argument("--record", required=True, type=Path, help="file the notifications are appended to")
    args = parser.parse_args(argv)
    server = ThreadingHTTPServer((args.listen, args.port), _handler(args.record, threading.Lock()))
    print(f"LAB ONLY alert receiver on {args.listen}:{args.port}, recording to {args.record}", flush=True)
    server.serve_forever()  # until systemd's SIGTERM
    return 0


if __name__ == "__main__":
    sys.exit(main())
