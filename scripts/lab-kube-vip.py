#!/usr/bin/env python3
"""The lab's kube-vip: the routing-table loop of kube-vip v1.2.3 for ONE VIP.

Run inside a node's network namespace (`ip netns exec rb-nodeN ...`); normally
started by `scripts/lab.sh kube-vip NODE start PREFIX ...`. Standard library
only; the kernel writes are iproute2 (`ip`) commands, as in the rest of the
lab. What it reproduces of kube-vip and what it does not: docs/LAB-WRITER.md.

Every --interval seconds (the first check one interval after start), with the
VIP's health:
  healthy (no --health, or GET URL answered 200 within --timeout):
    the address on --dev if missing
        ip addr add VIP dev lo valid_lft forever preferred_lft 0 [nodad]
    the route, once (an in-memory tracker remembers it was added)
        ip route add VIP dev lo table 198 proto 248 scope global
    on every later healthy tick a replace with the realm toggled 1 <-> 2,
    a real change the kernel announces (IPv4; see docs/LAB-WRITER.md for IPv6)
        ip route replace VIP dev lo table 198 proto 248 scope global realm R
  unhealthy (anything else: refused, timeout, another status):
    the route deleted only if the tracker has it, then the address deleted
No hysteresis: one failure withdraws, one success re-adds. SIGTERM and
SIGKILL: the process exits, the route and the address stay.
--clean-table: 10 s after start, every route of the table with the protocol
whose destination is not this VIP is deleted (both families).

One line per state change on stderr, never one per tick.
"""

import argparse
import ipaddress
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request

from lab_proc import close_inherited_fds, logger

CLEAN_AFTER = 10.0  # seconds: kube-vip's vip_cleanroutingtable delay


log = logger("lab-kube-vip")


class Writer:
    def __init__(self, args):
        net = ipaddress.ip_network(args.prefix, strict=False)
        if net.prefixlen != net.max_prefixlen:
            raise SystemExit(f"lab-kube-vip: {args.prefix} is not a single address (/32 or /128)")
        self.vip = f"{net.network_address}/{net.prefixlen}"
        self.addr = str(net.network_address)
        self.v6 = net.version == 6
        self.fam = "-6" if self.v6 else "-4"
        self.table = str(args.table)
        self.proto = str(args.proto)
        self.dev = args.dev
        self.health = args.health
        self.timeout = args.timeout
        self.route = [self.vip, "dev", self.dev, "table", self.table, "proto", self.proto, "scope", "global"]
        self.route_added = False  # kube-vip's in-memory tracker
        self.realm = 2  # the next replace writes 1, then 2, 1, ...
        self.healthy = None  # the last check's verdict, for the log
        self.why = None
        self.last_error = None

    # --- iproute2 -----------------------------------------------------------

    def ip(self, *argv):
        """Run `ip FAM ARGV`; (ok, stderr text)."""
        p = subprocess.run(["ip", self.fam, *argv], capture_output=True, text=True)
        return p.returncode == 0, p.stderr.strip()

    def error(self, what, err):
        # Logged once per distinct error, not on every tick.
        msg = f"{what} failed: {err}"
        if msg != self.last_error:
            log(msg)
            self.last_error = msg

    def has_address(self):
        p = subprocess.run(["ip", "-o", self.fam, "addr", "show", "dev", self.dev, "to", self.vip],
                           capture_output=True, text=True)
        return p.returncode == 0 and self.addr in p.stdout

    # --- health -------------------------------------------------------------

    def check(self):
        """(healthy, reason)"""
        if not self.health:
            return True, "no health check"
        try:
            with urllib.request.urlopen(self.health, timeout=self.timeout) as r:
                code = r.status
        except urllib.error.HTTPError as e:
            code = e.code
        except (urllib.error.URLError, OSError) as e:
            reason = getattr(e, "reason", e)
            return False, f"GET {self.health}: {reason}"
        if code == 200:
            return True, f"GET {self.health}: 200"
        return False, f"GET {self.health}: {code}"

    # --- one tick -----------------------------------------------------------

    def tick(self):
        ok, why = self.check()
        if ok != self.healthy:
            log(f"{self.vip}: {'healthy' if ok else 'unhealthy'} ({why})")
            self.healthy = ok
        if ok:
            self.on_healthy()
        else:
            self.on_unhealthy()

    def on_healthy(self):
        if not self.has_address():
            args = ["addr", "add", self.vip, "dev", self.dev, "valid_lft", "forever", "preferred_lft", "0"]
            if self.v6:
                args.append("nodad")
            done, err = self.ip(*args)
            if done:
                log(f"{self.vip}: address added on {self.dev}")
            else:
                self.error("address add", err)
        if not self.route_added:
            done, err = self.ip("route", "add", *self.route)
            if done:
                self.route_added = True
                self.last_error = None
                log(f"{self.vip}: route added (table {self.table} proto {self.proto})")
            elif "File exists" in err:
                # A route left by an earlier instance (SIGTERM does no
                # cleanup): it is there, so it is ours from here on.
                self.route_added = True
                log(f"{self.vip}: route already in table {self.table}; tracked as added")
            else:
                self.error("route add", err)
            return
        self.realm = 1 if self.realm == 2 else 2
        done, err = self.ip("route", "replace", *self.route, "realm", str(self.realm))
        if done:
            if self.last_error:
                log(f"{self.vip}: route replace works again")
                self.last_error = None
        else:
            self.error("route replace", err)

    def on_unhealthy(self):
        if self.route_added:
            done, err = self.ip("route", "del", *self.route)
            if done or "No such process" in err:
                self.route_added = False
                log(f"{self.vip}: route deleted" + ("" if done else " (it was already gone)"))
            else:
                self.error("route del", err)
        if self.has_address():
            done, err = self.ip("addr", "del", self.vip, "dev", self.dev)
            if done:
                log(f"{self.vip}: address deleted from {self.dev}")
            else:
                self.error("address del", err)

    # --- vip_cleanroutingtable ----------------------------------------------

    def clean_table(self):
        n = 0
        for fam, host in (("-4", "/32"), ("-6", "/128")):
            p = subprocess.run(["ip", fam, "-o", "route", "show", "table", self.table, "proto", self.proto],
                               capture_output=True, text=True)
            for line in p.stdout.splitlines():
                words = line.split()
                if not words:
                    continue
                dst = words[0]
                if dst in ("unicast", "local", "blackhole", "unreachable", "prohibit") and len(words) > 1:
                    dst = words[1]
                full = dst if "/" in dst or dst == "default" else dst + host
                if full == self.vip:
                    continue
                q = subprocess.run(["ip", fam, "route", "del", dst, "table", self.table, "proto", self.proto],
                                   capture_output=True, text=True)
                if q.returncode == 0:
                    n += 1
                    log(f"clean-table: deleted {full} from table {self.table} (not this instance's VIP)")
                else:
                    log(f"clean-table: deleting {full} failed: {q.stderr.strip()}")
        log(f"clean-table: done, {n} route(s) deleted")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("prefix", metavar="PREFIX", help="the VIP: 192.0.2.10/32 or 2001:db8::10/128 (or an address)")
    ap.add_argument("--health", metavar="URL", help="healthy iff GET URL answers 200 (default: always healthy)")
    ap.add_argument("--interval", type=float, default=5.0, metavar="S",
                    help="seconds between checks (backend_health_check_interval; default 5)")
    ap.add_argument("--timeout", type=float, metavar="S", help="the check's timeout (default: the interval)")
    ap.add_argument("--clean-table", action="store_true",
                    help="vip_cleanroutingtable: 10 s after start, delete the table's other routes of the protocol")
    ap.add_argument("--table", type=int, default=198, help="routing table (default 198)")
    ap.add_argument("--proto", type=int, default=248, help="route protocol (default 248)")
    ap.add_argument("--dev", default="lo", help="interface of the address and the route (default lo)")
    args = ap.parse_args()
    if args.interval <= 0:
        ap.error("--interval must be > 0")
    if args.timeout is None:
        args.timeout = args.interval
    close_inherited_fds()

    def on_term(signum, _frame):
        log(f"{signal.Signals(signum).name}: exiting; the route and the address stay (kube-vip does no cleanup)")
        os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)

    w = Writer(args)
    log(f"started: {w.vip} dev {w.dev} table {w.table} proto {w.proto}, "
        f"health {w.health or 'none (always healthy)'}, interval {args.interval:g}s, timeout {args.timeout:g}s"
        + (", clean-table in 10s" if args.clean_table else ""))
    start = time.monotonic()
    next_tick = start + args.interval
    clean_at = start + CLEAN_AFTER if args.clean_table else None
    while True:
        now = time.monotonic()
        due = next_tick if clean_at is None else min(next_tick, clean_at)
        if due > now:
            time.sleep(due - now)
            continue
        if clean_at is not None and clean_at <= now:
            clean_at = None
            w.clean_table()
            continue
        w.tick()
        # A Go ticker drops the ticks a slow check missed.
        next_tick += args.interval
        now = time.monotonic()
        if next_tick <= now:
            next_tick += ((now - next_tick) // args.interval + 1) * args.interval


if __name__ == "__main__":
    main()
