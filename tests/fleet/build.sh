#!/usr/bin/env bash
# Build the test bed's components from their Go modules (the Go module proxy), once per machine, into
# $GPUFLEET_CACHE/components/<name>-<version>/bin, and copy the upstream manifests the fleet installs (Trainer's
# and JobSet's CRDs and webhook configurations, KWOK's CRDs and stages) out of the module cache into
# $GPUFLEET_CACHE/components/manifests/. Versions: tests/fleet/components.env. Idempotent: a component whose
# directory carries .built is not built again; a second run takes about a second.
#
#   kube-apiserver, kube-controller-manager, kube-scheduler  k8s.io/kubernetes, for each KUBERNETES_VERSIONS entry
#   etcd                                                      go.etcd.io/etcd/server/v3
#   kwok                                                      sigs.k8s.io/kwok/cmd/kwok
#   jobset                                                    sigs.k8s.io/jobset (the module root is the manager)
#   trainer-controller-manager                                github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
#   pushgateway                                               github.com/prometheus/pushgateway (the module root)
#   promtool                                                  github.com/prometheus/prometheus/cmd/promtool
#
#   tests/fleet/build.sh --manifests-only   only the manifests (a few module downloads, no build): what the unit
#                                           steps of scripts/test.sh need for the CRD-schema tests without a fleet
#   tests/fleet/build.sh --fleet-only       the fleet's components and manifests, not the Pushgateway and promtool
#                                           (only tests/e2e/test_metrics_export.py uses them; promtool alone takes
#                                           4 to 7 minutes and 3.3 GB): what `make demo` needs
#
# k8s.io/kubernetes cannot be `go install`ed: its go.mod replaces the staging modules (k8s.io/api, ...) with
# ./staging/... directories. Each build is therefore a throw-away wrapper module that requires the component and,
# for Kubernetes, replaces every staging module with its published v0.<minor>.<patch>, taken from the
# k8s.io/kubernetes go.mod itself. Needs Go >= 1.26 (GOTOOLCHAIN=local: nothing but modules is downloaded).
set -euo pipefail

manifests_only=""
fleet_only=""
case "${1:-}" in
    "") ;;
    --manifests-only) manifests_only=1 ;;
    --fleet-only) fleet_only=1 ;;
    *)
        echo "tests/fleet/build.sh: unknown argument '$1' (allowed: --manifests-only, --fleet-only)" >&2
        exit 2
        ;;
esac

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=tests/fleet/components.env
source "$here/components.env"
cache="${GPUFLEET_CACHE:-$HOME/.cache/gpufleet-burnin}"
root="$cache/components"
log() { printf '[fleet-build] %s\n' "$*" >&2; }

# Go's own installer puts it in /usr/local/go, which a non-login shell may not have on PATH.
command -v go >/dev/null 2>&1 || [ ! -x /usr/local/go/bin/go ] || PATH="/usr/local/go/bin:$PATH"
command -v go >/dev/null 2>&1 || { log "Go is not installed (needs Go >= 1.26 on PATH)"; exit 1; }
go_minor="$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')"
[ "${go_minor:-0}" -ge 26 ] || { log "$(go version): the components need Go >= 1.26 (set PATH)"; exit 1; }
command -v openssl >/dev/null 2>&1 || {
    log "installing openssl (the fleet's certificates)"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl >/dev/null
}

mkdir -p "$root"
exec 9>"$root/.build.lock"
flock 9

export GOFLAGS="-mod=mod -buildvcs=false" CGO_ENABLED=0 GOTOOLCHAIN=local

# build NAME VERSION REQUIRE LDFLAGS PACKAGE...: go build of PACKAGEs in a wrapper module requiring REQUIRE
# (module@version), with the replacements in $REPLACES (module=module@version, space separated).
build() {
    local name="$1" version="$2" require="$3" ldflags="$4"
    shift 4
    local dest="$root/$name-$version"
    if [ -f "$dest/.built" ]; then
        log "cached: $name $version"
        return 0
    fi
    local work t0=$SECONDS
    work="$(mktemp -d "${TMPDIR:-/tmp}/gpufleet-build-$name.XXXXXX")"
    log "building $name $version (first time on this machine; Kubernetes takes several minutes)"
    (
        cd "$work"
        go mod init "gpufleet.test/build/$name" >/dev/null 2>&1
        go mod edit -require="$require"
        local r
        for r in ${REPLACES:-}; do go mod edit -replace="$r"; done
        go build -trimpath -ldflags "-s -w $ldflags" -o bin/ "$@" >build.log 2>&1 || {
            grep -v '^go: downloading' build.log | tail -n 40 >&2
            exit 1
        }
        rm -rf "$dest.tmp"
        mkdir -p "$dest.tmp"
        mv bin "$dest.tmp/bin"
    )
    rm -rf "$dest"
    mv "$dest.tmp" "$dest"
    touch "$dest/.built"
    rm -rf "$work"
    log "built $name $version in $((SECONDS - t0)) s"
}

# module_dir MODULE@VERSION: the module's directory in the module cache (downloaded if needed).
module_dir() {
    go mod download -json "$1" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",*$/\1/p'
}

# The builds; --manifests-only goes straight to the manifests below.
build_all() {
    for v in $KUBERNETES_VERSIONS; do
        minor="${v#*.}"
        minor="${minor%%.*}"
        gomod="$(go mod download -json "k8s.io/kubernetes@v$v" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",*$/\1/p')"
        REPLACES="$(awk -v ver="v0.${v#*.}" '$2 == "=>" && $3 ~ /^\.\/staging\// {print $1 "=" $1 "@" ver}' "$gomod")" \
            build kubernetes "$v" "k8s.io/kubernetes@v$v" \
            "-X k8s.io/component-base/version.gitVersion=v$v -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean" \
            k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager k8s.io/kubernetes/cmd/kube-scheduler
    done
    REPLACES="" build etcd "$ETCD_VERSION" "go.etcd.io/etcd/server/v3@v$ETCD_VERSION" "" go.etcd.io/etcd/server/v3
    # go names the binary of go.etcd.io/etcd/server/v3 after "server".
    [ -x "$root/etcd-$ETCD_VERSION/bin/etcd" ] || mv "$root/etcd-$ETCD_VERSION/bin/server" "$root/etcd-$ETCD_VERSION/bin/etcd"
    REPLACES="" build kwok "$KWOK_VERSION" "sigs.k8s.io/kwok@v$KWOK_VERSION" \
        "-X sigs.k8s.io/kwok/pkg/consts.Version=v$KWOK_VERSION" sigs.k8s.io/kwok/cmd/kwok
    REPLACES="" build jobset "$JOBSET_VERSION" "sigs.k8s.io/jobset@v$JOBSET_VERSION" "" sigs.k8s.io/jobset
    REPLACES="" build trainer "$TRAINER_VERSION" "github.com/kubeflow/trainer/v2@v$TRAINER_VERSION" "" \
        github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager
    # The metrics tests' tools, not the fleet's (--fleet-only leaves them out).
    if [ -n "$fleet_only" ]; then
        return 0
    fi
    REPLACES="" build pushgateway "$PUSHGATEWAY_VERSION" "github.com/prometheus/pushgateway@v$PUSHGATEWAY_VERSION" \
        "-X github.com/prometheus/common/version.Version=$PUSHGATEWAY_VERSION" github.com/prometheus/pushgateway
    REPLACES="" build promtool "$PROMETHEUS_MODULE_VERSION" "github.com/prometheus/prometheus@v$PROMETHEUS_MODULE_VERSION" \
        "-X github.com/prometheus/common/version.Version=$PROMETHEUS_MODULE_VERSION" github.com/prometheus/prometheus/cmd/promtool
}
# in an if's body, not after ||: there errexit would not reach into the function
if [ -z "$manifests_only" ]; then
    build_all
fi

# The upstream manifests, copied out of the module cache (the fleet and the CRD-schema tests read them here).
manifests="$root/manifests"
stamp="trainer=$TRAINER_VERSION jobset=$JOBSET_VERSION kwok=$KWOK_VERSION"
if [ "$(cat "$manifests/.stamp" 2>/dev/null || true)" != "$stamp" ]; then
    trainer="$(module_dir "github.com/kubeflow/trainer/v2@v$TRAINER_VERSION")"
    jobset="$(module_dir "sigs.k8s.io/jobset@v$JOBSET_VERSION")"
    kwok="$(module_dir "sigs.k8s.io/kwok@v$KWOK_VERSION")"
    rm -rf "$manifests.tmp"
    mkdir -p "$manifests.tmp"/{crds,trainer-webhook,jobset-webhook,kwok-stages}
    cp "$trainer"/manifests/base/crds/trainer.kubeflow.org_*.yaml "$manifests.tmp/crds/"
    cp "$jobset"/config/components/crd/bases/jobset.x-k8s.io_jobsets.yaml "$manifests.tmp/crds/"
    cp "$kwok"/kustomize/crd/bases/kwok.x-k8s.io_logs.yaml "$manifests.tmp/crds/"
    cp "$trainer"/manifests/base/webhook/{manifests,patch_mutating,patch_validating}.yaml "$manifests.tmp/trainer-webhook/"
    cp "$jobset"/config/components/webhook/manifests.yaml "$manifests.tmp/jobset-webhook/"
    cp "$jobset"/config/components/webhook/patches/{mutating,validating}-patch.yaml "$manifests.tmp/jobset-webhook/"
    cp "$kwok"/kustomize/stage/node/fast/node-initialize.yaml "$kwok"/kustomize/stage/pod/fast/pod-ready.yaml \
        "$manifests.tmp/kwok-stages/"
    chmod -R u+w "$manifests.tmp"
    echo "$stamp" >"$manifests.tmp/.stamp"
    rm -rf "$manifests"
    mv "$manifests.tmp" "$manifests"
fi
log "components and manifests in $root"
