#!/usr/bin/env bash
# Installs the Debian 12 packages softib needs to build and test. Idempotent; run as root.
# Only calls apt when something is missing, so `make test` stays fast on a prepared machine.
#   bootstrap.sh           the build and test packages
#   bootstrap.sh --bench   those plus the data-path benchmark anchors (UCX, libfabric)
set -euo pipefail

mode=default
case "${1:-}" in
  "") ;;
  --bench) mode=bench ;;
  *) echo "usage: $0 [--bench]" >&2; exit 2 ;;
esac

packages=(
  # build
  build-essential cmake ninja-build pkg-config clang libclang-rt-14-dev
  # libraries
  libfmt-dev libcli11-dev nlohmann-json3-dev zlib1g-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  # rdma-core headers and libraries (drop-in targets and oracles)
  libibverbs-dev libibumad-dev librdmacm-dev libibmad-dev libopensm-dev
  # independent decoders and reference tools used by the tests
  tshark infiniband-diags ibsim-utils libumad2sim0 opensm
  # unmodified rdma-core programs the drop-in libraries must run (tests/compat)
  ibverbs-utils perftest qperf iproute2
  python3
)

# Anchors for bench/datapath.py (bench/anchors/README.md): ucx_perftest over posix/cma,
# libfabric's shm provider (our fi_rma_bw links libfabric-dev; fi_info is in libfabric-bin);
# valgrind for bench/instructions.py (callgrind, and its header for the `critpath` build).
bench_packages=(ucx-utils libfabric-dev libfabric-bin valgrind)
if [ "$mode" = bench ]; then
  packages+=("${bench_packages[@]}")
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "bootstrap: all ${#packages[@]} packages present"
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "bootstrap: missing packages: ${missing[*]}" >&2
  echo "bootstrap: run as root (or: sudo $0)" >&2
  exit 1
fi

echo "bootstrap: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
# tshark asks whether non-root users may capture; answer once, non-interactively.
echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
