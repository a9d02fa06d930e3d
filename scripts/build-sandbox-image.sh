#!/usr/bin/env bash
# Build the traj sandbox image offline: a Debian bookworm root filesystem made with
# debootstrap from the machine's configured apt mirror, then `docker import`ed.
# No registry is needed, so this works in air-gapped clusters.
#
# usage: scripts/build-sandbox-image.sh [--tag TAG] [--packages FILE] [--suite SUITE] [--rebuild]
#   --tag TAG        image tag (default traj-sandbox:bookworm, or $IMAGE)
#   --packages FILE  Debian packages to include, one per line, # comments allowed
#                    (default ../shared/sandbox-image/packages.txt, else scripts/sandbox-packages.txt)
#   --suite SUITE    Debian suite (default bookworm)
#   --rebuild        build even when the image already exists
# env: MIRROR overrides the mirror read from the apt sources.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$here")"
tag="${IMAGE:-traj-sandbox:bookworm}"
suite=bookworm
rebuild=0
packages=""
needs_value() {
  [ $# -ge 2 ] && [ -n "$2" ] || { echo "build-sandbox-image: $1 needs a value (see --help)" >&2; exit 2; }
}
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) needs_value "$@"; tag="$2"; shift 2 ;;
    --packages) needs_value "$@"; packages="$2"; shift 2 ;;
    --suite) needs_value "$@"; suite="$2"; shift 2 ;;
    --rebuild) rebuild=1; shift ;;
    -h|--help) sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-sandbox-image: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

if [ -z "$packages" ]; then
  if [ -f "$root/../shared/sandbox-image/packages.txt" ]; then
    packages="$root/../shared/sandbox-image/packages.txt"
  else
    packages="$here/sandbox-packages.txt"
  fi
fi
[ -f "$packages" ] || { echo "build-sandbox-image: package list '$packages' not found" >&2; exit 2; }

command -v docker >/dev/null || { echo "build-sandbox-image: the docker client is not installed (apt-get install docker.io)" >&2; exit 2; }
docker info >/dev/null 2>&1 || { echo "build-sandbox-image: no Docker engine answers (start dockerd; DOCKER_HOST=${DOCKER_HOST:-unset})" >&2; exit 2; }

if [ "$rebuild" = 0 ] && docker image inspect "$tag" >/dev/null 2>&1; then
  echo "build-sandbox-image: $tag already exists (use --rebuild to build it again)"
  exit 0
fi

command -v debootstrap >/dev/null || { echo "build-sandbox-image: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "build-sandbox-image: debootstrap needs root (run with sudo)" >&2; exit 2; }

# The mirror comes from the apt sources of this machine, never a hard-coded host.
if [ -z "${MIRROR:-}" ]; then
  MIRROR="$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -n1 || true)"
fi
if [ -z "${MIRROR:-}" ] && [ -f /etc/apt/sources.list ]; then
  MIRROR="$(grep -hE '^deb ' /etc/apt/sources.list | grep -v security | awk '{ for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }')"
fi
[ -n "${MIRROR:-}" ] || { echo "build-sandbox-image: no Debian mirror found in the apt sources; set MIRROR=" >&2; exit 2; }

pkgs="$(grep -vE '^\s*(#|$)' "$packages" | paste -sd, -)"
rootfs="$(mktemp -d /tmp/traj-sandbox-rootfs.XXXXXX)"
trap 'rm -rf "$rootfs"' EXIT

echo "build-sandbox-image: debootstrap $suite with $(echo "$pkgs" | tr ',' '\n' | wc -l) packages into $rootfs"
debootstrap --variant=minbase --include="$pkgs" "$suite" "$rootfs" "$MIRROR"
rm -rf "$rootfs"/var/cache/apt/archives/*.deb "$rootfs"/var/lib/apt/lists/*
echo "build-sandbox-image: importing as $tag"
tar -C "$rootfs" -c . | docker import \
  -c 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  -c 'ENV LANG=C.UTF-8' -c 'CMD ["/bin/bash"]' - "$tag"
echo "build-sandbox-image: built $tag"
