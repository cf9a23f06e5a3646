#!/usr/bin/env bash
# Build kube-apiserver and kube-controller-manager from Debian bookworm's `kubernetes` source package
# into a cache outside the repository, once per machine. Idempotent: when the binaries are already cached
# it only makes sure etcd is installed.
#
#   GPUFLEET_CACHE   cache root (default: $HOME/.cache/gpufleet-burnin)
#   GPUFLEET_K8S_VERSION  upstream version to build (default: tests/fleet/K8S_VERSION)
#
# Binaries end up in $GPUFLEET_CACHE/k8s/<version>/bin/. The source tree and Go build cache live in a temp
# directory that is deleted afterwards. A lock file serialises concurrent builds.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
version="${GPUFLEET_K8S_VERSION:-$(tr -d '[:space:]' < "$here/K8S_VERSION")}"
cache="${GPUFLEET_CACHE:-$HOME/.cache/gpufleet-burnin}"
dest="$cache/k8s/$version"
bin="$dest/bin"

log() { printf '[fleet-build] %s\n' "$*" >&2; }

sudo_cmd=()
if [ "$(id -u)" != 0 ]; then
    sudo_cmd=(sudo)
fi

apt_updated=0
apt_update() {
    if [ "$apt_updated" = 0 ]; then
        log "apt-get update"
        "${sudo_cmd[@]}" apt-get update -qq
        apt_updated=1
    fi
}

# Install the named Debian packages that are missing.
apt_ensure() {
    local missing=()
    local p
    for p in "$@"; do
        if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
            missing+=("$p")
        fi
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        apt_update
        log "installing ${missing[*]}"
        # etcd-server would start a system etcd: forbid service starts during the install (the fleet runs its
        # own etcd on a free port and must leave nothing running).
        local policy_added=0
        if [ ! -e /usr/sbin/policy-rc.d ]; then
            printf '#!/bin/sh\nexit 101\n' | "${sudo_cmd[@]}" tee /usr/sbin/policy-rc.d >/dev/null
            "${sudo_cmd[@]}" chmod +x /usr/sbin/policy-rc.d
            policy_added=1
        fi
        DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
        if [ "$policy_added" = 1 ]; then
            "${sudo_cmd[@]}" rm -f /usr/sbin/policy-rc.d
        fi
    fi
}

binaries_ok() {
    [ -x "$bin/kube-apiserver" ] && [ -x "$bin/kube-controller-manager" ] &&
        "$bin/kube-apiserver" --version >/dev/null 2>&1 &&
        "$bin/kube-controller-manager" --version >/dev/null 2>&1
}

# etcd and openssl are needed at run time whatever happens.
apt_ensure etcd-server openssl

if binaries_ok; then
    log "cached: $bin ($("$bin/kube-apiserver" --version))"
    exit 0
fi

mkdir -p "$cache/k8s"
exec 9>"$cache/k8s/.build-$version.lock"
log "waiting for build lock $cache/k8s/.build-$version.lock"
flock 9
# Another process may have finished the build while we waited.
if binaries_ok; then
    log "cached (built concurrently): $bin"
    exit 0
fi

# A deb-src entry for bookworm, in its own file, mirroring the binary entry of debian.sources.
srcfile=/etc/apt/sources.list.d/gpufleet-burnin-deb-src.sources
if ! grep -rqsE '^(deb-src|Types:.*deb-src)' /etc/apt/sources.list /etc/apt/sources.list.d/; then
    uri="http://deb.debian.org/debian"
    keyring="/usr/share/keyrings/debian-archive-keyring.gpg"
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        u="$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources)"
        [ -n "$u" ] && uri="$u"
    fi
    log "adding deb-src entry $srcfile ($uri bookworm)"
    "${sudo_cmd[@]}" tee "$srcfile" >/dev/null <<EOF
Types: deb-src
URIs: $uri
Suites: bookworm
Components: main
Signed-By: $keyring
EOF
    apt_updated=0
fi

apt_ensure golang-go dpkg-dev rsync jq make gcc libc6-dev golang-github-modern-go-reflect2-dev
apt_update

work="$(mktemp -d "${TMPDIR:-/tmp}/gpufleet-k8s-build.XXXXXX")"
chmod 755 "$work"  # apt-get source downloads as _apt
cleanup() { chmod -R u+w "$work" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT

# Debian's source package version that carries this upstream version (e.g. 1.20.5+really1.20.2-1.1+deb12u1).
deb_src_version="${GPUFLEET_K8S_DEB_VERSION:-$(apt-cache showsrc kubernetes | awk -v v="$version" '$1 == "Version:" && ($2 ~ ("really" v "-") || index($2, v "-") == 1) {print $2; exit}')}"
[ -n "$deb_src_version" ] || { log "no Debian source package of kubernetes carries $version"; exit 1; }
log "fetching kubernetes=$deb_src_version sources into $work (this and the build take ~5-10 min)"
(cd "$work" && apt-get source -qq "kubernetes=$deb_src_version" >/dev/null)
src="$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'kubernetes-*' | head -n1)"
[ -n "$src" ] || { log "apt-get source produced no tree"; exit 1; }

# The vendored reflect2 v1.0.1 makes kube-apiserver built with Go >= 1.18 crash (fatal error: fault).
reflect2=/usr/share/gocode/src/github.com/modern-go/reflect2
[ -d "$reflect2" ] || { log "missing $reflect2"; exit 1; }
log "replacing vendor/github.com/modern-go/reflect2 with Debian's $(dpkg-query -W -f='${Version}' golang-github-modern-go-reflect2-dev)"
rsync -a --delete --exclude '*_test.go' "$reflect2/" "$src/vendor/github.com/modern-go/reflect2/"

log "building with $(go version)"
(
    cd "$src"
    export GOCACHE="$work/gocache" GOPATH="$work/gopath" GOFLAGS=-mod=vendor GO111MODULE=on
    export KUBE_GIT_VERSION="v$version" KUBE_GIT_TREE_STATE=clean
    make WHAT="cmd/kube-apiserver cmd/kube-controller-manager" >"$work/build.log" 2>&1 || {
        tail -n 50 "$work/build.log" >&2
        exit 1
    }
)

out="$src/_output/bin"
[ -x "$out/kube-apiserver" ] || out="$(dirname "$(find "$src/_output" -type f -name kube-apiserver | head -n1)")"
mkdir -p "$dest"
rm -rf "$dest/bin.tmp"
mkdir "$dest/bin.tmp"
cp "$out/kube-apiserver" "$out/kube-controller-manager" "$dest/bin.tmp/"
rm -rf "$bin"
mv "$dest/bin.tmp" "$bin"
if ! binaries_ok; then
    log "built binaries do not run"
    exit 1
fi
log "built: $bin ($("$bin/kube-apiserver" --version))"
