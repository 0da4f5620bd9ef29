#!/usr/bin/env bash
# Installs the toolchains the Pebble and fjall plugins build with, where the machine lacks
# them (`make deps` runs this as root): Debian's are too old (golang-go 1.19 for Pebble's
# go.mod, which names Go 1.26; rustc 1.63 for fjall 3).
#   Go    the toolchain module golang.org/toolchain@v0.0.1-goVERSION.linux-ARCH from the Go
#         module proxy (what the go command itself fetches for GOTOOLCHAIN), unpacked to
#         GO_ROOT (default /usr/local/go), where CMake looks for it
#   Rust  rustup-init from static.rust-lang.org, a minimal profile of RUST_VERSION into
#         CARGO_HOME/RUSTUP_HOME (default ~/.cargo, ~/.rustup), where CMake looks for cargo
# A toolchain already there (go on PATH or in GO_ROOT of GO_VERSION's minor or newer; cargo
# on PATH or in CARGO_HOME) is left alone. FORCE=1 installs anyway (the test of this script
# installs into scratch directories).
#
# usage: engines/plugin/install-toolchains.sh [go] [rust]   (default: both)
set -euo pipefail
GO_VERSION=${GO_VERSION:-1.26.8}
RUST_VERSION=${RUST_VERSION:-1.95.0}
GO_ROOT=${GO_ROOT:-/usr/local/go}
CARGO_HOME=${CARGO_HOME:-$HOME/.cargo}
RUSTUP_HOME=${RUSTUP_HOME:-$HOME/.rustup}
GOPROXY_URL=${GOPROXY_URL:-https://proxy.golang.org}
export CARGO_HOME RUSTUP_HOME
case "$(uname -m)" in
  x86_64) GOARCH=amd64; RUSTARCH=x86_64 ;;
  aarch64) GOARCH=arm64; RUSTARCH=aarch64 ;;
  *) echo "install-toolchains: no toolchain for $(uname -m)" >&2; exit 2 ;;
esac

want=("$@")
[ ${#want[@]} -gt 0 ] || want=(go rust)

# go1.26.8 -> 126 (major*100 + minor): newer or equal minors build Pebble's go.mod.
minor_of() { sed -n 's/^go version go\([0-9]*\)\.\([0-9]*\).*/\1 \2/p' | awk '{print $1 * 100 + $2}'; }

have_go() {
  local go
  go=$(PATH="$GO_ROOT/bin:$PATH" command -v go) || return 1
  local have need
  have=$("$go" version | minor_of)
  need=$(echo "go version go$GO_VERSION" | minor_of)
  [ -n "$have" ] && [ "$have" -ge "$need" ]
}

install_go() {
  if [ "${FORCE:-0}" != 1 ] && have_go; then return 0; fi
  local module="golang.org/toolchain/@v/v0.0.1-go$GO_VERSION.linux-$GOARCH.zip"
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  echo "install-toolchains: Go $GO_VERSION from $GOPROXY_URL into $GO_ROOT"
  curl -fsSL --retry 3 -o "$work/go.zip" "$GOPROXY_URL/$module"
  (cd "$work" && python3 -m zipfile -e go.zip unpacked)
  local top
  top=$(echo "$work"/unpacked/golang.org/toolchain@*)
  # Module zips keep no file modes: the go command marks its toolchain's programs itself.
  chmod +x "$top"/bin/* "$top"/pkg/tool/*/*
  rm -rf "$GO_ROOT.part" && mkdir -p "$(dirname "$GO_ROOT")"
  mv "$top" "$GO_ROOT.part"
  rm -rf "$GO_ROOT" && mv "$GO_ROOT.part" "$GO_ROOT"
  "$GO_ROOT/bin/go" version
}

install_rust() {
  if [ "${FORCE:-0}" != 1 ] && PATH="$CARGO_HOME/bin:$PATH" command -v cargo >/dev/null; then
    return 0
  fi
  local work
  work=$(mktemp -d)
  trap 'rm -rf "$work"' RETURN
  echo "install-toolchains: Rust $RUST_VERSION (rustup, minimal profile) into $CARGO_HOME"
  curl -fsSL --retry 3 -o "$work/rustup-init" \
    "https://static.rust-lang.org/rustup/dist/$RUSTARCH-unknown-linux-gnu/rustup-init"
  chmod +x "$work/rustup-init"
  "$work/rustup-init" -y --quiet --no-modify-path --profile minimal \
    --default-toolchain "$RUST_VERSION"
  "$CARGO_HOME/bin/cargo" --version
}

for t in "${want[@]}"; do
  case "$t" in
    go) install_go ;;
    rust) install_rust ;;
    *) echo "install-toolchains: unknown toolchain '$t' (choose from: go, rust)" >&2; exit 2 ;;
  esac
done
