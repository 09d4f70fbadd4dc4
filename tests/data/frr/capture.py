# Captures zebra's ZAPI frames and vty replies for tests/data/frr (see README.md).
# Usage, inside the node's namespace: capture.py SOCKDIR 8.4|10.3|10.7 OUT.json
import socket, struct, sys, subprocess, time, select, json
sockdir, rel, out = sys.argv[1], sys.argv[2], sys.argv[3]
if rel == "8.4":
    HELLO, RADD, TYPE, hello_body = 18, 11, 15, bytes(9)
else:
    HELLO, RADD, TYPE, hello_body = 19, 12, 31, bytes(8)
def frame(cmd, body):
    return struct.pack(">HBBIH", 10+len(body), 0xFE, 6, 0, cmd) + body
def vty2(cmds, d):
    s = socket.socket(socket.AF_UNIX); s.connect(f"{sockdir}/{d}.vty")
    for cmd in cmds:
        s.sendall(cmd.encode()+b"\0"); buf=b""
        while True:
            b = s.recv(65536)
            if not b: break
            buf += b
            i = buf.find(b"\0")
            if i >= 0 and len(buf) >= i+4: break
    s.close(); return buf
def vty(cmd, d="zebra"):
    return vty2([cmd], d)
res = {"release": rel, "show_version_raw": vty("show version").hex(), "frames": []}
z = socket.socket(socket.AF_UNIX); z.connect(f"{sockdir}/zserv.api")
z.sendall(frame(HELLO, hello_body))
for afi in (1, 2):
    z.sendall(frame(RADD, struct.pack(">BBH", afi, TYPE, 198)))
buf = b""; t0=time.time()
def pump(secs, label):
    global buf
    end = time.time()+secs
    while time.time() < end:
        r,_,_ = select.select([z],[],[],max(0,end-time.time()))
        if not r: continue
        b = z.recv(65536)
        if not b: return
        buf += b
        while len(buf) >= 2:
            l = struct.unpack(">H", buf[:2])[0]
            if len(buf) < l: break
            f, buf = buf[:l], buf[l:]
            cmd = struct.unpack(">H", f[8:10])[0]
            res["frames"].append({"step": label, "t": round(time.time()-t0,4), "cmd": cmd, "hex": f.hex()})
def sh(c):
    subprocess.run(c, shell=True, check=False)
pump(1.0, "dump")
ns = "rb-node1"
steps = [
  ("add_single_v4", f"ip -n {ns} route add 192.0.2.10/32 dev lo table 198 proto 248"),
  ("add_ecmp_v4", f"ip -n {ns} route add 192.0.2.20/32 table 198 proto 248 nexthop via 198.18.1.1 dev eth0 nexthop dev lo"),
  ("add_gw_v4_metric", f"ip -n {ns} route add 192.0.2.30/32 via 198.18.1.1 dev eth0 table 198 proto 248 metric 77"),
  ("add_single_v6", f"ip -n {ns} -6 route add 2001:db8::10/128 dev lo table 198 proto 248"),
  ("add_ecmp_v6", f"ip -n {ns} -6 route add 2001:db8::20/128 table 198 proto 248 nexthop via fdbb:0:0:1::1 dev eth0 nexthop dev lo"),
  ("add_ecmp2_v4", f"ip -n {ns} route add 192.0.2.40/32 table 198 proto 248 nexthop via 198.18.1.1 dev eth0 nexthop via 198.18.1.3 dev eth0"),
  ("add_ecmp2_v6", f"ip -n {ns} -6 route add 2001:db8::40/128 table 198 proto 248 nexthop via fdbb:0:0:1::1 dev eth0 nexthop via fdbb:0:0:1::3 dev eth0"),
  ("del_single_v4", f"ip -n {ns} route del 192.0.2.10/32 dev lo table 198 proto 248"),
  ("del_ecmp_v4", f"ip -n {ns} route del 192.0.2.20/32 table 198"),
  ("del_single_v6", f"ip -n {ns} -6 route del 2001:db8::10/128 table 198"),
]
for label, c in steps:
    sh(c); pump(0.6, label)
sh(f"ip -n {ns} route add 192.0.2.10/32 dev lo table 198 proto 248"); pump(0.5, "readd_single_v4")
for i in range(100):
    a = vty("show bgp ipv4 unicast neighbors 198.18.1.1 advertised-routes json", "bgpd")
    if b"192.0.2.10/32" in a: break
    time.sleep(0.1)
res["rt198"] = vty("show ip route table 198 json").hex()
res["rt198v6"] = vty("show ipv6 route table 198 json").hex()
res["bgpsum"] = vty("show bgp summary json", "bgpd").hex()
res["bgprun"] = vty2(["enable", "show running-config"], "bgpd").hex()
res["adv"] = vty("show bgp ipv4 unicast neighbors 198.18.1.1 advertised-routes json", "bgpd").hex()
res["adv6"] = vty("show bgp ipv6 unicast neighbors fdbb:0:0:1::1 advertised-routes json", "bgpd").hex()
res["sum4"] = vty("show bgp ipv4 unicast summary json", "bgpd").hex()
res["sum6"] = vty("show bgp ipv6 unicast summary json", "bgpd").hex()
json.dump(res, open(out, "w"), indent=1)
print("frames", len(res["frames"]))
