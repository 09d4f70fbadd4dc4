#!/usr/bin/env bash
# Build ribbridge's container image offline: the statically linked release
# binary (glibc's static-pie, `-C target-feature=+crt-static`), stripped, in a
# FROM scratch image (deploy/Containerfile). Needs cargo and podman
# (scripts/install-deps.sh installs podman and runc); no registry, no base
# image, no network.
#
# Usage: scripts/build-image.sh [--tag NAME:TAG] [--features LIST]
#   --features  cargo features of the binary (the netns tests' `failpoints`
#               image: netns-tests/containerd.rs); the default tag then ends
#               in -LIST (`localhost/ribbridge:0.1.0-failpoints`). Never a
#               shipped image.
#   stdout: the image's name:tag, alone on one line (for scripts and tests)
#   stderr: what it did, the binary's size and the image's size
# Environment: PODMAN (default: podman --runtime runc; crun refuses hybrid
# cgroup hosts, runc does not: the runtime does not matter to a build, it is
# given for the same command line as `podman run`).
set -euo pipefail
cd "$(dirname "$0")/.."

die() { echo "build-image: $*" >&2; exit 1; }
log() { echo "build-image: $*" >&2; }

TARGET=x86_64-unknown-linux-gnu
version=$(sed -n 's/^version = "\(.*\)"$/\1/p' Cargo.toml | head -n1)
revision=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
tag=
features=
while [[ $# -gt 0 ]]; do
    case $1 in
        --tag) [[ $# -ge 2 ]] || die "--tag needs NAME:TAG"; tag=$2; shift 2 ;;
        --features) [[ $# -ge 2 && -n $2 ]] || die "--features needs a list"; features=$2; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) die "unknown argument '$1' (see --help)" ;;
    esac
done
if [[ -z $tag ]]; then
    tag="localhost/ribbridge:${version}${features:+-${features//,/-}}"
fi
read -r -a podman <<<"${PODMAN:-podman --runtime runc}"
command -v "${podman[0]}" >/dev/null || die "${podman[0]} is missing: run scripts/install-deps.sh"

log "cargo build --release --locked --target $TARGET (crt-static)${features:+ --features $features}"
RUSTFLAGS="-C target-feature=+crt-static" \
    cargo build --release --locked --target "$TARGET" --bin ribbridge ${features:+--features "$features"} >&2
bin=target/$TARGET/release/ribbridge
# A dynamically linked binary would not start in an empty image: refuse it
# here rather than at `podman run`.
if readelf -l "$bin" | grep -q 'Requesting program interpreter'; then
    die "$bin has a program interpreter: not statically linked"
fi

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
strip -o "$ctx/ribbridge" "$bin"
chmod 0755 "$ctx/ribbridge"
log "binary: $(stat -c %s "$ctx/ribbridge") bytes stripped (from $bin)"

old=$("${podman[@]}" image inspect --format '{{.Id}}' "$tag" 2>/dev/null || true)
"${podman[@]}" build --quiet --layers=false --pull=never --network=none \
    --build-arg "VERSION=$version" --build-arg "REVISION=$revision" \
    -f deploy/Containerfile -t "$tag" "$ctx" >/dev/null
# The image this tag named before, if now untagged, is this script's own
# leftover: remove it (and nothing else).
new=$("${podman[@]}" image inspect --format '{{.Id}}' "$tag")
if [[ -n $old && $old != "$new" ]] && [[ -z $("${podman[@]}" image inspect --format '{{join .RepoTags ","}}' "$old" 2>/dev/null) ]]; then
    "${podman[@]}" rmi "$old" >/dev/null 2>&1 || true
fi
size=$("${podman[@]}" image inspect --format '{{.Size}}' "$tag")
log "image $tag: $size bytes ($(numfmt --to=iec-i --suffix=B "$size"))"
echo "$tag"
