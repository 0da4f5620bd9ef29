#!/bin/sh
# Builds the Pebble plugin as BUILD_DIR/plugins/lsmbench-pebble.so (default: build/ at the
# repository's top). Needs Go (PATH or /usr/local/go/bin); Pebble is fetched into the module
# cache (~/go/pkg/mod) at the version go.mod pins, checked against go.sum.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../../build}
go=$(command -v go || echo /usr/local/go/bin/go)
mkdir -p "$build/plugins"
cd "$here"
GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=1 \
  "$go" build -buildmode=c-shared -trimpath -o "$build/plugins/lsmbench-pebble.so" .
rm -f "$build/plugins/lsmbench-pebble.h"  # cgo's header of the exports: not the ABI
echo "built $build/plugins/lsmbench-pebble.so"
