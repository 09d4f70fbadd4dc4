# Helpers of reload-measure.sh and intent-read-cost.sh (see README.md): bgpd's vty socket read
# directly, the router's path count for the VIP sampled, the delay of a
# route-map change measured. Standard library only; run as root on the host.
#
#   reload_measure.py cost SOCK PID N CMD...     per CMD: wall time per read
#       (one connection, N reads after one warm-up), bgpd's CPU per read
#       (utime+stime of PID from /proc over the N reads), reply size; JSON lines
#   reload_measure.py show SOCK CMD              one reply's text (no trailer)
#   reload_measure.py conf SOCK LINE...          `configure terminal`, LINEs, `end`
#   reload_measure.py sample OUT PREFIX          until SIGTERM: the router's
#       nexthop count for PREFIX every 50 ms; OUT gets "t count" on each change
#   reload_measure.py waitpaths PREFIX N TIMEOUT seconds until the router holds
#       N paths (exit 1 on timeout)
#   reload_measure.py rmdelay NODE_SOCK ROUTER_SOCK PEER PREFIX MED TIMEOUT LINE...
#       apply LINEs on the node (conf), then poll the router's bgpd until the
#       path from PEER carries MED (-1: no MED); prints seconds from the end
#       of the change
#   reload_measure.py seen ROUTER_SOCK PEER PREFIX NEEDLE 1|0 T0 TIMEOUT
#       seconds from T0 (epoch) until the router's path from PEER has (1) or
#       lacks (0) NEEDLE in its JSON
#   reload_measure.py peers64 IN OUT             the peer mapping IN with 62
#       more neighbours of rb-node1 (never up) written to OUT: 64 in all
import json, os, signal, socket, subprocess, sys, time


def connect(path):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    cmd(s, "enable")
    return s


def cmd(s, c):
    s.sendall(c.encode() + b"\0")
    buf = b""
    while True:
        b = s.recv(1 << 20)
        if not b:
            raise SystemExit(f"{c}: the daemon closed the vty")
        buf += b
        i = buf.find(b"\0")
        if i >= 0 and len(buf) >= i + 4:
            return buf[:i], buf[i + 3]


def cpu_ticks(pid):
    with open(f"/proc/{pid}/stat") as f:
        w = f.read().rsplit(")", 1)[1].split()
    return int(w[11]) + int(w[12])  # utime, stime (fields 14, 15)


def cost(sock, pid, n, cmds):
    hz = os.sysconf("SC_CLK_TCK")
    s = connect(sock)
    for c in cmds:
        out, st = cmd(s, c)  # warm-up, and the reply checked once
        walls = []
        c0 = cpu_ticks(pid)
        for _ in range(n):
            t = time.perf_counter()
            out, st = cmd(s, c)
            walls.append(time.perf_counter() - t)
        c1 = cpu_ticks(pid)
        walls.sort()
        print(json.dumps({
            "cmd": c, "status": st, "bytes": len(out), "reads": n,
            "wall_ms_median": round(walls[n // 2] * 1e3, 3),
            "wall_ms_p90": round(walls[int(n * 0.9)] * 1e3, 3),
            "wall_ms_mean": round(sum(walls) / n * 1e3, 3),
            "bgpd_cpu_ms_per_read": round((c1 - c0) * 1e3 / hz / n, 3),
            "cpu_pct_of_core_at_1hz": round((c1 - c0) / hz / n * 100, 3),
        }), flush=True)


def router_paths(prefix):
    out = subprocess.run(["ip", "-n", "rb-router", "route", "show", prefix],
                         capture_output=True, text=True).stdout
    if not out.strip():
        return 0
    n = out.count("nexthop via")
    return n if n else 1


def sample(out, prefix):
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    last = None
    t0 = time.time()
    with open(out, "a") as f:
        while not stop:
            n = router_paths(prefix)
            if n != last:
                f.write(f"{time.time():.3f} {n}\n")
                f.flush()
                last = n
            time.sleep(max(0, 0.05 - (time.time() - t0) % 0.05))


def waitpaths(prefix, n, timeout):
    t0 = time.time()
    while time.time() - t0 < timeout:
        if router_paths(prefix) == n:
            print(f"{time.time() - t0:.3f}")
            return 0
        time.sleep(0.02)
    print(f"timeout {timeout}")
    return 1


def bgp_path(s, prefix, peer, by_hostname=False):
    """The path to `prefix` that `peer` (its BGP id, or its hostname when
    `by_hostname`) sent, as bgpd's JSON has it; None when there is none."""
    out, _ = cmd(s, f"show bgp ipv4 unicast {prefix} json")
    try:
        d = json.loads(out)
    except ValueError:
        return None
    for p in d.get("paths", []):
        pe = p.get("peer", {})
        if pe.get("peerId") == peer or (by_hostname and pe.get("hostname") == peer):
            return p
    return None


def path_med(s, prefix, peer):
    p = bgp_path(s, prefix, peer, by_hostname=True)
    return None if p is None else p.get("med", p.get("metric", -1))


def path_of(s, prefix, peer):
    p = bgp_path(s, prefix, peer)
    return None if p is None else json.dumps(p)


def peers64(src, dst):
    """The lab's peer mapping `src` with 62 more neighbours of rb-node1 (31
    IPv4, 31 IPv6, never up), written to `dst`: 64 in all."""
    m = json.load(open(src))
    p = m["hostOverrides"]["rb-node1"]
    for i in range(31):
        p.append({"peerAddress": f"198.51.100.{i + 1}", "peerASN": 64600 + i})
        p.append({"peerAddress": f"fdbb:ffff::{i + 1:x}", "peerASN": 64700 + i})
    json.dump(m, open(dst, "w"))


def seen(router_sock, peer, prefix, needle, present, t0, timeout):
    r = connect(router_sock)
    while time.time() - t0 < timeout:
        p = path_of(r, prefix, peer)
        if p is not None and (needle in p) == present:
            print(f"{time.time() - t0:.3f}")
            return 0
        time.sleep(0.02)
    print(f"timeout {timeout}")
    return 1


def rmdelay(node_sock, router_sock, peer, prefix, med, timeout, lines):
    r = connect(router_sock)
    n = connect(node_sock)
    cmd(n, "configure terminal")
    for l in lines:
        out, st = cmd(n, l)
        if st != 0:
            raise SystemExit(f"{l}: status {st}: {out.decode()}")
    cmd(n, "end")
    t0 = time.time()
    while time.time() - t0 < timeout:
        if path_med(r, prefix, peer) == med:
            print(f"{time.time() - t0:.3f}")
            return 0
        time.sleep(0.02)
    print(f"timeout {timeout}")
    return 1


def main(a):
    if a[0] == "cost":
        cost(a[1], int(a[2]), int(a[3]), a[4:])
    elif a[0] == "show":
        out, _ = cmd(connect(a[1]), a[2])
        sys.stdout.write(out.decode())
    elif a[0] == "conf":
        s = connect(a[1])
        cmd(s, "configure terminal")
        for l in a[2:]:
            out, st = cmd(s, l)
            if st != 0:
                raise SystemExit(f"{l}: status {st}: {out.decode()}")
        cmd(s, "end")
    elif a[0] == "sample":
        sample(a[1], a[2])
    elif a[0] == "waitpaths":
        return waitpaths(a[1], int(a[2]), float(a[3]))
    elif a[0] == "seen":
        return seen(a[1], a[2], a[3], a[4], a[5] == "1", float(a[6]), float(a[7]))
    elif a[0] == "peers64":
        peers64(a[1], a[2])
    elif a[0] == "rmdelay":
        return rmdelay(a[1], a[2], a[3], a[4], int(a[5]), float(a[6]), a[7:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
