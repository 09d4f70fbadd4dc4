#!/usr/bin/env bash
# Debian packages the build and tests need beyond the machine image: iproute2
# for the lab, debootstrap for the FRR 10.x roots, podman and runc for the
# container image (deploy/Containerfile; crun refuses this machine's hybrid
# cgroups, runc does not), python3-venv for the manifest checks' venv
# ($CACHE/venv: PyPI's kubernetes-validate, pinned, which validates offline
# against the schemas it bundles), systemd-container for booting an FRR root
# with systemd-nspawn beside the unit (scripts/check-systemd-unit.sh),
# prometheus for promtool (the alerting rules' checks and unit tests) and the
# server binary the alerting netns test runs in the lab with its own data
# directory: the package's own service is never used, so it is not started
# at install and is disabled and stopped where systemd runs; gobgpd (GoBGP
# 3.10: gobgpd and the gobgp CLI) for the lab's second router family
# (scripts/lab-gobgp.sh), whose own service is likewise never used;
# containerd (1.6, its CRI plugin built in) for the CRI netns test
# (netns-tests/containerd.rs), which starts its own containerd with its own
# configuration, state and socket: the package's service is likewise never
# used; libc6-dev (glibc's static libc) for its pause binary
# (scripts/build-pause-image.sh); graphviz for README's picture (docs/chain.svg
# is docs/chain.dot rendered; tests/repo.rs renders it again and compares).
# The CRI client of that test is PyPI's
# container-runtime-interface-api (the CRI v1 protos, generated; grpcio and
# protobuf), pinned, in the same venv (Debian packages no crictl).
# Idempotent and quiet.
set -euo pipefail
[[ $(id -u) -eq 0 ]] || { echo "install-deps: must run as root" >&2; exit 1; }
missing=()
for p in iproute2 debootstrap procps podman runc python3-venv systemd-container prometheus gobgpd containerd libc6-dev graphviz; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [[ ${#missing[@]} -gt 0 ]]; then
    echo "install-deps: installing ${missing[*]}" >&2
    apt-get update -qq
    # No service may start during the install (prometheus' own): a
    # policy-rc.d of our own for its duration when the machine has none.
    policy=
    if [[ ! -e /usr/sbin/policy-rc.d ]]; then
        policy=/usr/sbin/policy-rc.d
        printf '#!/bin/sh\n# install-deps.sh: no service starts during its install\nexit 101\n' >"$policy"
        chmod 0755 "$policy"
        trap 'rm -f "$policy"' EXIT
    fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    if [[ -n $policy ]]; then rm -f "$policy"; fi
fi
# The packaged Prometheus, GoBGP and containerd services (port 9090,
# /var/lib/prometheus; BGP port 179, /etc/gobgpd.conf; /run/containerd) are
# not ours: where systemd is PID 1 keep them disabled and stopped.
for svc in prometheus gobgpd containerd; do
    if [[ -d /run/systemd/system ]] && systemctl is-enabled --quiet "$svc" 2>/dev/null; then
        systemctl disable --now --quiet "$svc"
    fi
done
command -v cargo >/dev/null || { echo "install-deps: cargo is missing: this needs the machine's Rust toolchain" >&2; exit 1; }
# The manifest checks' venv (scripts/check-manifests.py runs in it). A marker
# names the pinned version, so a new pin reinstalls and nothing else does.
CACHE=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}
KUBERNETES_VALIDATE=1.37.0
venv=$CACHE/venv
if [[ ! -e $venv/.kubernetes-validate-$KUBERNETES_VALIDATE ]]; then
    echo "install-deps: kubernetes-validate==$KUBERNETES_VALIDATE into $venv" >&2
    rm -rf "$venv"
    mkdir -p "$CACHE"
    /usr/bin/python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "kubernetes-validate==$KUBERNETES_VALIDATE"
    touch "$venv/.kubernetes-validate-$KUBERNETES_VALIDATE"
fi
# The CRI client (scripts/cri.py) in the same venv, its own marker.
CRI_API=2.0.1 GRPCIO=1.85.3 PROTOBUF=6.33.6
if [[ ! -e $venv/.cri-api-$CRI_API-$GRPCIO-$PROTOBUF ]]; then
    echo "install-deps: container-runtime-interface-api==$CRI_API into $venv" >&2
    "$venv/bin/pip" install --quiet --disable-pip-version-check "container-runtime-interface-api==$CRI_API" "grpcio==$GRPCIO" "protobuf==$PROTOBUF"
    touch "$venv/.cri-api-$CRI_API-$GRPCIO-$PROTOBUF"
fi
