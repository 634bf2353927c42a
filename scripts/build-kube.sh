#!/usr/bin/env bash
# Build kube-apiserver, kube-controller-manager and kubectl v1.20.2 from Debian bookworm's `kubernetes`
# source package (no registry ships these binaries here; kubectl merges the AWX credential's kubeconfig in the
# tests, as docs/awx.md tells users to). The result is cached outside the clone
# and reused; KUBE_BIN_DIR or envtest's KUBEBUILDER_ASSETS may point at existing binaries instead.
# Prints the directory holding the binaries on its last line.
set -euo pipefail

want=v1.20.2
cache=${CAPI_ROLLOUT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-rollout}
# "-zerostring": the build carries the empty-string validation fix below.
out=$cache/kube-$want-zerostring/bin

log() { printf '[build-kube] %s\n' "$*" >&2; }

usable() { # dir -> 0 when it has both server binaries at the wanted version
  [ -x "$1/kube-apiserver" ] && [ -x "$1/kube-controller-manager" ] &&
    "$1/kube-apiserver" --version 2>/dev/null | grep -q "$want"
}
has_kubectl() { [ -x "$1/kubectl" ] && "$1/kubectl" version --client --short 2>/dev/null | grep -q "$want"; }

for d in "${KUBE_BIN_DIR:-}" "${KUBEBUILDER_ASSETS:-}"; do
  if [ -n "$d" ] && [ -x "$d/kube-apiserver" ]; then
    [ -x "$d/kube-controller-manager" ] || { log "$d has no kube-controller-manager; garbage collection needs it"; exit 1; }
    echo "$d"; exit 0
  fi
done
if usable "$out" && has_kubectl "$out"; then echo "$out"; exit 0; fi
# An earlier build without kubectl: add just kubectl (the Go build cache keeps that short).
what="cmd/kube-apiserver cmd/kube-controller-manager cmd/kubectl"
usable "$out" && what="cmd/kubectl"

need_pkgs=()
for p in golang-go rsync etcd-server golang-github-modern-go-reflect2-dev; do
  dpkg -s "$p" >/dev/null 2>&1 || need_pkgs+=("$p")
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  log "installing Debian packages: ${need_pkgs[*]}"
  sudo_cmd=""; [ "$(id -u)" = 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2
fi

work=$cache/build
mkdir -p "$work/apt/lists/partial" "$work/apt/cache/archives/partial" "$work/apt/sources"
# A private apt configuration that knows deb-src entries, leaving the system's untouched.
sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources > "$work/apt/sources/debian.sources"
aptopts=(-o Dir::Etc::SourceList=/dev/null -o "Dir::Etc::SourceParts=$work/apt/sources"
         -o "Dir::State::Lists=$work/apt/lists" -o "Dir::Cache=$work/apt/cache")
cd "$work"
if ! ls kubernetes_*.orig.tar.* >/dev/null 2>&1; then
  log "fetching the Debian kubernetes source package (about 34 MB)"
  apt-get "${aptopts[@]}" update -qq >&2
  apt-get "${aptopts[@]}" source --download-only kubernetes >&2
fi
tree=$work/src
if [ ! -f "$tree/.unpacked" ]; then
  log "unpacking"
  rm -rf "$tree" && mkdir -p "$tree"
  tar -xf kubernetes_*.orig.tar.* -C "$tree" --strip-components=1
  # The vendored reflect2 v1.0.1 crashes Go >= 1.18 apiservers on the first custom resource create.
  r2=$tree/vendor/github.com/modern-go/reflect2
  rm -f "$r2"/*.go "$r2"/*.s
  cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.go "$r2"/
  cp /usr/share/gocode/src/github.com/modern-go/reflect2/*.s "$r2"/ 2>/dev/null || true
  rm -f "$r2"/*_test.go
  touch "$tree/.unpacked"
fi
# go-openapi/kube-openapi type validation: under Go >= 1.18 reflect.Zero and ValueOf("") compare
# equal, so every "" in a custom resource (condition messages, topology labels) would be rejected
# as null. Only nil is null. Idempotent, so it runs on every build.
sed -i 's/if data == nil || reflect.DeepEqual(reflect.Zero(reflect.TypeOf(data)), reflect.ValueOf(data)) {/if data == nil {/' \
  "$tree/vendor/github.com/go-openapi/validate/type.go" "$tree/vendor/k8s.io/kube-openapi/pkg/validation/validate/type.go"
mkdir -p "$tree/.go/src/k8s.io"
ln -sfn "$tree" "$tree/.go/src/k8s.io/kubernetes"
log "compiling $what (about 3-5 minutes on 2 cores)"
start=$(date +%s)
(
  cd "$tree/.go/src/k8s.io/kubernetes"
  export GOPATH=$tree/.go CGO_ENABLED=0 GOPROXY=off GO111MODULE=off GOFLAGS=
  export KUBE_GIT_VERSION=$want KUBE_GIT_TREE_STATE=clean KUBE_GIT_MAJOR=1 KUBE_GIT_MINOR=20
  make WHAT="$what" 2>&1 | sed 's/^/[build-kube]   /' >&2
)
mkdir -p "$out"
for b in $what; do cp "$tree/_output/bin/${b#cmd/}" "$out/"; done
log "built in $(( $(date +%s) - start ))s into $out"
if ! usable "$out" || ! has_kubectl "$out"; then log "built binaries do not report $want"; exit 1; fi
echo "$out"
