#!/usr/bin/env bash
# Build the pod sandbox ("pause") image offline, for the CRI netns test
# (netns-tests/containerd.rs: containerd's `sandbox_image`): a few-line C
# program, linked statically, that holds the pod's namespaces and waits for
# SIGTERM or SIGINT (exit 0), alone in a FROM scratch image. No registry, no
# base image, no network: cc (the Rust toolchain's linker) and glibc's static
# libc (libc6-dev) build it, podman packs it (scripts/install-deps.sh).
#
# Usage: scripts/build-pause-image.sh [--tag NAME:TAG]
#   stdout: the image's name:tag, alone on one line (for scripts and tests)
#   stderr: what it did
# Never a shipped image: a node's runtime has its own pause image.
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "build-pause-image: $*" >&2; exit 1; }

tag=localhost/ribbridge-pause:1
while [[ $# -gt 0 ]]; do
    case $1 in
        --tag) [[ $# -ge 2 ]] || die "--tag needs NAME:TAG"; tag=$2; shift 2 ;;
        -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
read -r -a podman <<<"${PODMAN:-podman --runtime runc}"
command -v "${podman[0]}" >/dev/null || die "${podman[0]} is missing: run scripts/install-deps.sh"
command -v cc >/dev/null || die "cc is missing: the Rust toolchain's linker builds the pause binary"

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
cat >"$ctx/pause.c" <<'EOF'
/* The pod sandbox's process: holds its namespaces until SIGTERM/SIGINT. */
#include <signal.h>
#include <unistd.h>
static void stop(int sig) { (void)sig; _exit(0); }
int main(void) {
    signal(SIGTERM, stop);
    signal(SIGINT, stop);
    for (;;) pause();
}
EOF
cc -static -Os -s -o "$ctx/pause" "$ctx/pause.c" \
    || die "cc -static failed: glibc's static libc (libc6-dev) is needed"
rm "$ctx/pause.c"
cat >"$ctx/Containerfile" <<'EOF'
FROM scratch
COPY pause /pause
USER 65535:65535
ENTRYPOINT ["/pause"]
EOF
# The same image for the same binary: rebuilt only when it differs.
want=$(sha256sum "$ctx/pause" | cut -d' ' -f1)
have=$("${podman[@]}" image inspect --format '{{index .Labels "pause.sha256"}}' "$tag" 2>/dev/null || true)
if [[ $have != "$want" ]]; then
    "${podman[@]}" build --quiet --layers=false --pull=never --network=none \
        --label "pause.sha256=$want" -f "$ctx/Containerfile" -t "$tag" "$ctx" >/dev/null
    echo "build-pause-image: $tag built ($(stat -c %s "$ctx/pause") bytes binary)" >&2
fi
echo "$tag"
