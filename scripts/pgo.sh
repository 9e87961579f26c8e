#!/usr/bin/env bash
# The profiles for the release build's profile-guided optimisation (README, "Profile-guided
# builds"): builds bench_verbs and softibd instrumented in build/pgo-train, runs the data
# path's workloads on them (an 8-byte ping-pong, 64-byte SENDs in batches, RDMA WRITE and READ
# streams), and leaves the profiles in build/pgo-profile, whose profile-id the release preset
# looks for. By default it does nothing while the profiles are newer than every source file
# (`make bench`: the figures are of the code as it is); --if-missing only when there are none
# (`make release`: a new profile rebuilds every object, ~15 min here, and a function changed
# since only loses its profile); --force takes them again.
#
#   bash scripts/pgo.sh [--if-missing | --force]
set -euo pipefail
cd "$(dirname "$0")/.."
top=$PWD
train=$top/build/pgo-train
profile=$top/build/pgo-profile
jobs=${JOBS:-$(nproc)}

mode=${1:-}
case $mode in
  "" | --if-missing | --force) ;;
  *) echo "usage: bash scripts/pgo.sh [--if-missing | --force]" >&2; exit 2 ;;
esac
if [[ $mode == --if-missing && -f $profile/profile-id ]]; then
  echo "pgo: using the profiles in $profile (bash scripts/pgo.sh --force takes them again)"
  exit 0
fi
if [[ -z $mode && -f $profile/profile-id ]] &&
   [[ -z $(find src include bench/verbs.cpp bench/CMakeLists.txt CMakeLists.txt cmake -newer "$profile/profile-id" -print -quit) ]]; then
  echo "pgo: $profile is up to date"
  exit 0
fi

# Taken into a new directory and moved into place whole: a build never sees half a profile.
rm -rf "$profile.new"
mkdir -p "$profile.new"
cmake -S . -B "$train" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INTERPROCEDURAL_OPTIMIZATION=ON \
  -DSOFTIB_WERROR=ON -DSOFTIB_PGO_USE= -DSOFTIB_PGO_GENERATE="$profile.new" >/dev/null
cmake --build "$train" -j "$jobs" --target bench_verbs softibd

# bench_verbs starts its own softibd (../bin/softibd) on a private socket. The counts are
# what the optimiser weighs, so the mix follows what the benchmarks and programs run most:
# the ping-pong's path first, then the streams'.
run() { echo "pgo: bench_verbs $*"; (cd "$train/bench" && ./bench_verbs "$@" >/dev/null); }
run lat --size 8 --iters 200000
run lat --size 2 --iters 50000 --perftest
run rate --size 64 --iters 1000000
run bw --size 65536 --iters 5000
run bw --size 1048576 --op read --iters 500
run lat --size 8 --iters 200000

n=$(find "$profile.new" -name '*.gcda' | wc -l)
if [[ $n -eq 0 ]]; then
  echo "pgo: the training wrote no profile (in $profile.new)" >&2
  exit 1
fi
date +%s >"$profile.new/profile-id"
rm -rf "$profile"
mv "$profile.new" "$profile"
echo "pgo: $n profiles in $profile"
