#!/usr/bin/env python3
"""Print the kernel's route and address events with what `ip monitor` hides.

Run inside a network namespace (`ip netns exec NS python3 scripts/lab-nlmon.py`).
One line per netlink message: the message type (RTM_NEWROUTE, RTM_DELROUTE,
RTM_NEWADDR, RTM_DELADDR), nlmsg_flags (0x600 = NLM_F_CREATE|NLM_F_EXCL, an
add; 0x100 = NLM_F_REPLACE, a replace), for routes the table, protocol and
RTA_FLOW (the realm), for addresses IFA_FLAGS decoded (TENTATIVE, DADFAILED,
NODAD, DEPRECATED, ...). Used for the measurements in docs/LAB-WRITER.md.
Standard library only.
"""

import socket
import struct
import time

RTMGRP_IPV4_IFADDR = 0x10
RTMGRP_IPV4_ROUTE = 0x40
RTMGRP_IPV6_IFADDR = 0x100
RTMGRP_IPV6_ROUTE = 0x400
NAMES = {20: "RTM_NEWADDR", 21: "RTM_DELADDR", 24: "RTM_NEWROUTE", 25: "RTM_DELROUTE"}
IFA_BITS = [(0x01, "SECONDARY"), (0x02, "NODAD"), (0x08, "DADFAILED"), (0x20, "DEPRECATED"),
            (0x40, "TENTATIVE"), (0x80, "PERMANENT"), (0x200, "NOPREFIXROUTE")]


def attrs(d, a, end):
    while a + 4 <= end:
        al, at = struct.unpack_from("=HH", d, a)
        if al < 4:
            return
        yield at, a + 4
        a += (al + 3) & ~3


def describe(ty, d, o, ln):
    if ty in (24, 25):
        fam, dl, _sl, _tos, table, proto, _scope, _rtype, _rflags = struct.unpack_from("=BBBBBBBBI", d, o + 16)
        flow = None
        for at, v in attrs(d, o + 28, o + ln):
            if at == 11:  # RTA_FLOW
                flow = struct.unpack_from("=I", d, v)[0]
            if at == 15:  # RTA_TABLE
                table = struct.unpack_from("=I", d, v)[0]
        return f"fam={fam} dst_len={dl} table={table} proto={proto} RTA_FLOW={flow}"
    if ty in (20, 21):
        fam, plen, flags, _scope, idx = struct.unpack_from("=BBBBI", d, o + 16)
        for at, v in attrs(d, o + 24, o + ln):
            if at == 8:  # IFA_FLAGS, the 32-bit flags
                flags = struct.unpack_from("=I", d, v)[0]
        bits = "|".join(n for b, n in IFA_BITS if flags & b)
        return f"fam={fam} plen={plen} ifindex={idx} IFA_FLAGS=0x{flags:x} {bits}"
    return ""


def main():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, socket.NETLINK_ROUTE)
    s.bind((0, RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR))
    print("ready", flush=True)
    while True:
        d = s.recv(1 << 16)
        o = 0
        while o + 16 <= len(d):
            ln, ty, fl, _seq, _pid = struct.unpack_from("=IHHII", d, o)
            if ln < 16:
                break
            print(f"{time.monotonic():.3f} {NAMES.get(ty, ty)} nlmsg_flags=0x{fl:x} {describe(ty, d, o, ln)}",
                  flush=True)
            o += (ln + 3) & ~3


if __name__ == "__main__":
    main()
