#!/usr/bin/env bash
# Records what a release's bgpd sends a BMP station, byte for byte, into
# tests/data/bmp/<release>/session<N>.bin (one file per TCP session).
#
#   flock /run/ribbridge-lab.lock tests/data/bmp/capture.sh 8.4|10.3|10.7
#
# As root, with no lab up. The lab router's bgpd is restarted with -M bmp and
# a `bmp targets` block in its frr.conf (so a restart keeps it); a Python
# listener in the router's namespace writes each session to its own file.
# The script's sleeps pace the scenario for the recording only; no test
# waits like this.
set -Eeuo pipefail
rel=${1:?release: 8.4, 10.3 or 10.7}
repo=$(cd "$(dirname "$0")/../../.." && pwd)
out=$repo/tests/data/bmp/$rel
lab=$repo/scripts/lab.sh
mkdir -p "$out"
rm -f "$out"/session*.bin

vips=(--vip 192.0.2.10/32)
[[ $rel != 8.4 ]] && vips+=(--vip 2001:db8::10/128)
"$lab" up --frr "$rel" --nodes 2 "${vips[@]}"
trap '"$lab" down >/dev/null 2>&1 || true; kill "$listener" 2>/dev/null || true' EXIT
# The VIP on both nodes before the router's bgpd exports: the initial sync
# carries two paths.
for n in rb-node1 rb-node2; do
    "$lab" vip-add "$n" 192.0.2.10/32
    [[ $rel != 8.4 ]] && "$lab" vip-add "$n" 2001:db8::10/128
done
root=$(grep '^FRR_ROOT=' /run/ribbridge-lab/state | cut -d= -f2)

# One listener process per BMP session, so the script can end a session
# from the station's side (the router then reconnects and dumps its table).
listen() { # N
    ip netns exec rb-router python3 -c '
import socket, sys
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 11019))
s.listen(1)
c, _ = s.accept()
s.close()
with open(sys.argv[1], "wb") as f:
    while True:
        d = c.recv(65536)
        if not d:
            break
        f.write(d)
        f.flush()
' "$out/session$1.bin" &
    listener=$!
}
listen 1

conf=$root/run/ribbridge-lab/rb-router/frr.conf
afs=(ipv4 ipv6)
block=" bmp targets T1\n  bmp connect 127.0.0.1 port 11019 min-retry 100 max-retry 1000\n  bmp stats interval 1000\n"
block+="  bmp monitor ipv4 unicast pre-policy\n"
for af in "${afs[@]}"; do block+="  bmp monitor $af unicast post-policy\n"; done
if [[ $rel != 8.4 ]]; then
    for af in "${afs[@]}"; do block+="  bmp monitor $af unicast loc-rib\n"; done
fi
block+=" exit\n"
# The block goes inside `router bgp`, before its closing top-level `exit`.
python3 -c 'import sys; p, b = sys.argv[1:]; s = open(p).read(); open(p, "w").write(s.replace("\nexit\n", "\n" + b.replace("\\n", "\n") + "exit\n", 1))' "$conf" "$block"
grep -A12 'bmp targets' "$conf" >&2
"$lab" kill rb-router bgpd TERM
start_bgpd() {
    if [[ -n $root ]]; then
        ip netns exec rb-router chroot "$root" /usr/lib/frr/bgpd -d -N rb-router -f /run/ribbridge-lab/rb-router/frr.conf -i /run/frr/rb-router/bgpd.pid -M bmp
    else
        ip netns exec rb-router /usr/lib/frr/bgpd -d -N rb-router -f /run/ribbridge-lab/rb-router/frr.conf -i /run/frr/rb-router/bgpd.pid -M bmp
    fi
}
start_bgpd
sleep 8   # session 1, a starting router: sessions up, routes, stats reports
"$lab" vtysh rb-router 'show bmp' >&2 || true
"$lab" vip-del rb-node1 192.0.2.10/32; sleep 2
"$lab" vip-add rb-node1 192.0.2.10/32; sleep 2
kill "$listener"; wait "$listener" 2>/dev/null || true
listen 2; sleep 4                           # session 2: the station reconnects to a running router
"$lab" kill rb-node2 bgpd; sleep 2          # Peer Down
"$lab" kill rb-router bgpd TERM; sleep 1    # bgpd stops: Termination or just a close?
wait "$listener" 2>/dev/null || true
listen 3; start_bgpd; sleep 6               # session 3: a restarted router
"$lab" kill rb-router bgpd KILL; sleep 1
wait "$listener" 2>/dev/null || true
ls -l "$out" >&2
