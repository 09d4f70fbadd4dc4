#!/usr/bin/env python3
"""Capture raw rtnetlink bytes from the running kernel (run inside a netns).

Usage:
  capture.py dump-nexthops OUT        # RTM_GETNEXTHOP dump, every reply datagram
  capture.py dump-routes TABLE OUT    # RTM_GETROUTE dump of TABLE, v4 then v6
  capture.py monitor OUT -- CMD...    # join route/link/addr/nexthop groups, run
                                      # CMD (a shell command), then drain
OUT is a sequence of netlink messages exactly as the kernel sent them
(datagrams concatenated; each message is self-delimiting by nlmsg_len).
"""
import os, socket, struct, subprocess, sys

NETLINK_ROUTE = 0
SOL_NETLINK = 270
NETLINK_ADD_MEMBERSHIP = 1
NETLINK_GET_STRICT_CHK = 12
NLM_F_REQUEST, NLM_F_DUMP = 1, 0x300
RTM_GETROUTE, RTM_GETNEXTHOP = 26, 106
NLMSG_DONE = 3
RTA_TABLE = 15
GROUPS = [1, 5, 7, 9, 11, 32]  # LINK, IPV4_IFADDR, IPV4_ROUTE, IPV6_IFADDR, IPV6_ROUTE, NEXTHOP


def sock():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
    s.bind((0, 0))
    s.setsockopt(SOL_NETLINK, NETLINK_GET_STRICT_CHK, 1)
    return s


def dump(s, mtype, body, out):
    s.send(struct.pack("=IHHII", 16 + len(body), mtype, NLM_F_REQUEST | NLM_F_DUMP, 1, 0) + body)
    while True:
        d = s.recv(1 << 20)
        done = False
        off = 0
        while off < len(d):
            ln, ty = struct.unpack_from("=IH", d, off)
            if ty == NLMSG_DONE:
                done = True
            else:
                out.write(d[off:off + ln])
            off += (ln + 3) & ~3
        if done:
            return


def main():
    cmd = sys.argv[1]
    s = sock()
    if cmd == "dump-nexthops":
        with open(sys.argv[2], "wb") as out:
            dump(s, RTM_GETNEXTHOP, struct.pack("=BBBBI", 0, 0, 0, 0, 0), out)
    elif cmd == "dump-routes":
        table = int(sys.argv[2])
        with open(sys.argv[3], "wb") as out:
            for fam in (socket.AF_INET, socket.AF_INET6):
                hdr = struct.pack("=BBBBBBBBI", fam, 0, 0, 0, table if table < 256 else 252, 0, 0, 0, 0)
                attr = struct.pack("=HHI", 8, RTA_TABLE, table)
                dump(s, RTM_GETROUTE, hdr + attr, out)
    elif cmd == "monitor":
        out_path = sys.argv[2]
        shell = " ".join(sys.argv[4:])
        for g in GROUPS:
            s.setsockopt(SOL_NETLINK, NETLINK_ADD_MEMBERSHIP, g)
        subprocess.run(shell, shell=True, check=True)
        s.setblocking(False)
        with open(out_path, "wb") as out:
            while True:
                try:
                    out.write(s.recv(1 << 20))
                except BlockingIOError:
                    break
    else:
        sys.exit(__doc__)


main()
