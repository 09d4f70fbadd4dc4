#!/usr/bin/env bash
# Install the three FRR releases ribbridge supports, idempotently.
#
#   8.4   Debian bookworm's own package, installed on the host (/usr/lib/frr).
#   10.3  a Debian trixie root (debootstrap), FRR installed with apt inside it.
#   10.7  a Debian sid root, likewise.
#
# Each release also gets Debian's frr-pythontools of the same version: its
# /usr/lib/frr/frr-reload.py is how frr-k8s applies a configuration
# (`lab.sh reload`). An existing install or root only gains that package;
# it is pinned to the installed frr's version, so apt never upgrades frr.
#
# Roots live under the cache directory ($RIBBRIDGE_CACHE, default
# /var/cache/ribbridge): $CACHE/frr-10.3 and $CACHE/frr-10.7. A root is built
# in a temporary directory and renamed into place only when `zebra --version`
# works in it, so an interrupted run never leaves a half root that later runs
# would trust. Usage: scripts/install-frr.sh [8.4|10.3|10.7]... (default: all)
set -euo pipefail

CACHE=${RIBBRIDGE_CACHE:-/var/cache/ribbridge}
MIRROR=${RIBBRIDGE_DEBIAN_MIRROR:-http://deb.debian.org/debian}

die() { echo "install-frr: $*" >&2; exit 1; }
log() { echo "install-frr: $*" >&2; }

[[ $(id -u) -eq 0 ]] || die "must run as root (it installs packages and builds chroots)"

apt_host() {
    # apt-get update only when the package is unknown: keeps re-runs fast.
    if ! apt-cache show "$@" >/dev/null 2>&1; then apt-get update -qq; fi
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null
}

# The installed version of Debian package P ("" when it is not installed),
# in ROOT ("" for the host).
# shellcheck disable=SC2016 # ${Status} is dpkg-query's format, not ours
pkg_version() { # ROOT P
    local root=$1 out
    if [[ -n $root ]]; then
        out=$(chroot "$root" dpkg-query -W -f='${Status} ${Version}' "$2" 2>/dev/null) || true
    else
        out=$(dpkg-query -W -f='${Status} ${Version}' "$2" 2>/dev/null) || true
    fi
    [[ $out == "install ok installed "* ]] && echo "${out#install ok installed }"
    return 0
}

install_84_pythontools() {
    local ver; ver=$(pkg_version "" frr)
    if [[ $(pkg_version "" frr-pythontools) == "$ver" ]]; then
        log "8.4 frr-pythontools $ver present"
        return
    fi
    apt_host "frr-pythontools=$ver" || die "installing frr-pythontools $ver on the host failed"
    [[ -f /usr/lib/frr/frr-reload.py ]] || die "frr-pythontools $ver did not install /usr/lib/frr/frr-reload.py"
    log "8.4 frr-pythontools $ver installed"
}

install_84() {
    if /usr/lib/frr/zebra --version 2>/dev/null | grep -q 'version 8\.4'; then
        log "8.4 present: $(/usr/lib/frr/zebra --version | head -1)"
        install_84_pythontools
        return
    fi
    local t0=$SECONDS
    # No service may start: the lab runs its own daemons per namespace.
    local prc=/usr/sbin/policy-rc.d had_prc=0
    [[ -e $prc ]] && had_prc=1
    if [[ $had_prc -eq 0 ]]; then printf '#!/bin/sh\nexit 101\n' >"$prc"; chmod 755 "$prc"; fi
    apt_host frr
    [[ $had_prc -eq 0 ]] && rm -f "$prc"
    /usr/lib/frr/zebra --version | grep -q 'version 8\.4' || die "FRR 8.4 install did not give zebra 8.4"
    log "8.4 installed in $((SECONDS - t0)) s: $(/usr/lib/frr/zebra --version | head -1)"
    install_84_pythontools
}

# frr-pythontools of the root's frr version in the root of VERSION, with
# the root's apt options (its package lists first; updated only when they
# do not know that version).
root_pythontools() { # VERSION ROOT [apt options...]
    local ver=$1 root=$2; shift 2
    local frr; frr=$(pkg_version "$root" frr)
    [[ -n $frr ]] || die "the $ver root $root has no frr package installed"
    if [[ $(pkg_version "$root" frr-pythontools) == "$frr" ]]; then
        log "$ver frr-pythontools $frr present"
        return
    fi
    local apt=(chroot "$root" env DEBIAN_FRONTEND=noninteractive apt-get "$@")
    if ! chroot "$root" apt-cache show "frr-pythontools=$frr" >/dev/null 2>&1; then
        "${apt[@]}" update -qq || die "apt-get update in the $ver root failed"
    fi
    "${apt[@]}" install -y -qq --no-install-recommends "frr-pythontools=$frr" >/dev/null \
        || die "installing frr-pythontools $frr in the $ver root failed (its suite may no longer carry frr $frr: rebuild the root with rm -rf $root; scripts/install-frr.sh $ver)"
    chroot "$root" apt-get clean
    [[ -f $root/usr/lib/frr/frr-reload.py ]] || die "frr-pythontools $frr did not install frr-reload.py in the $ver root"
    log "$ver frr-pythontools $frr installed"
}

install_root() { # VERSION SUITE [apt options...]
    local ver=$1 suite=$2; shift 2
    local root=$CACHE/frr-$ver
    if [[ -x $root/usr/lib/frr/zebra ]] && chroot "$root" /usr/lib/frr/zebra --version 2>/dev/null | grep -q "version ${ver//./\\.}"; then
        log "$ver present: $(chroot "$root" /usr/lib/frr/zebra --version | head -1)"
        root_pythontools "$ver" "$root" "$@"
        return
    fi
    command -v debootstrap >/dev/null || apt_host debootstrap
    local t0=$SECONDS tmp=$CACHE/.frr-$ver.tmp
    rm -rf "$tmp" "$root"
    mkdir -p "$CACHE"
    log "$ver: debootstrap $suite into $tmp"
    debootstrap --variant=minbase "$suite" "$tmp" "$MIRROR" >"$CACHE/.debootstrap-$ver.log" 2>&1 \
        || die "debootstrap $suite failed; see $CACHE/.debootstrap-$ver.log"
    printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
    chmod 755 "$tmp/usr/sbin/policy-rc.d"
    log "$ver: debootstrap took $((SECONDS - t0)) s; installing frr"
    local t1=$SECONDS
    chroot "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get "$@" update -qq \
        || die "apt-get update in the $suite root failed"
    chroot "$tmp" env DEBIAN_FRONTEND=noninteractive apt-get "$@" install -y -qq --no-install-recommends frr frr-pythontools iproute2 >/dev/null \
        || die "installing frr and frr-pythontools in the $suite root failed"
    chroot "$tmp" apt-get clean
    chroot "$tmp" /usr/lib/frr/zebra --version | grep -q "version ${ver//./\\.}" \
        || die "the $suite root does not hold FRR $ver: $(chroot "$tmp" /usr/lib/frr/zebra --version | head -1)"
    [[ -f $tmp/usr/lib/frr/frr-reload.py ]] || die "frr-pythontools did not install frr-reload.py in the $suite root"
    mv "$tmp" "$root"
    log "$ver installed in $((SECONDS - t0)) s (apt $((SECONDS - t1)) s): $(chroot "$root" /usr/lib/frr/zebra --version | head -1)"
}

versions=("$@")
[[ ${#versions[@]} -gt 0 ]] || versions=(8.4 10.3 10.7)
for v in "${versions[@]}"; do
    case $v in
        8.4) install_84 ;;
        10.3) install_root 10.3 trixie ;;
        10.7) install_root 10.7 sid -o Acquire::Check-Valid-Until=false ;;
        *) die "unknown FRR version '$v' (supported: 8.4, 10.3, 10.7)" ;;
    esac
done
