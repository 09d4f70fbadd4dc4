#!/usr/bin/env python3
"""The lab's backend: the OpenShift router's health endpoints.

Run inside a node's network namespace (`ip netns exec rb-nodeN ...`); normally
started by `scripts/lab.sh backend NODE up|draining|slow` and stopped by
`lab.sh backend NODE down`. Standard library only.

Serves, on 127.0.0.1:PORT (default 1936, the router's stats port):
  /healthz        liveness: 200 while the process runs
  /healthz/ready  readiness: 200 when ready; 503 while draining
according to the state read from --state-file on every request:
  up        both 200
  draining  /healthz 200, /healthz/ready 503
            "[-]process-running failed: process is terminating"
  slow      both answer 200, but only after --slow-delay seconds (default
            10: longer than the lab writer's timeout)
`down` is no state of this process: a dead router refuses connections, so
lab.sh stops the process.
"""

import argparse
import http.server
import os
import signal
import sys
import time

from lab_proc import close_inherited_fds, logger

DRAINING_BODY = "[-]process-running failed: process is terminating\n"
STATES = ("up", "draining", "slow")


log = logger("lab-backend")


class Handler(http.server.BaseHTTPRequestHandler):
    server_version = "lab-backend"
    protocol_version = "HTTP/1.1"
    state_file = None
    slow_delay = 10.0
    last_state = None

    def state(self):
        try:
            with open(self.state_file) as f:
                s = f.read().strip()
        except OSError:
            s = "up"  # no file: a plain running router
        if s != Handler.last_state:
            log(f"state {s}")
            Handler.last_state = s
        return s

    def answer(self, code, body):
        data = body.encode()
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        self.close_connection = True

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path not in ("/healthz", "/healthz/ready"):
            self.answer(404, "404 page not found\n")
            return
        s = self.state()
        if s == "slow":
            time.sleep(self.slow_delay)
        elif s == "draining" and path == "/healthz/ready":
            self.answer(503, DRAINING_BODY)
            return
        elif s not in STATES:
            self.answer(500, f"lab-backend: unknown state '{s}' in {self.state_file}\n")
            return
        self.answer(200, "ok")

    do_HEAD = do_GET

    def log_message(self, fmt, *args):
        pass  # one line per state change, not per request


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int, default=1936)
    ap.add_argument("--address", default="127.0.0.1")
    ap.add_argument("--state-file", required=True, help="holds up, draining or slow; read on every request")
    ap.add_argument("--slow-delay", type=float, default=10.0, metavar="S")
    args = ap.parse_args()
    close_inherited_fds()
    Handler.state_file = args.state_file
    Handler.slow_delay = args.slow_delay

    def on_term(signum, _frame):
        log(f"{signal.Signals(signum).name}: exiting")
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    http.server.ThreadingHTTPServer.allow_reuse_address = True
    http.server.ThreadingHTTPServer.daemon_threads = True
    srv = http.server.ThreadingHTTPServer((args.address, args.port), Handler)
    log(f"listening on {args.address}:{args.port} (state file {args.state_file})")
    srv.serve_forever()


if __name__ == "__main__":
    main()
