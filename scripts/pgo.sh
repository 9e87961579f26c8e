#!/usr/bin/env bash
# The profiles for the release build's profile-guided optimisation (README, "Profile-guided
# builds"): builds bench_verbs, softibd, softib and the drop-in libibverbs.so.1 instrumented in
# build/pgo-train, runs the data path's workloads on them (an 8-byte ping-pong, 64-byte SENDs
# in batches, 64-byte RDMA WRITEs one by one, WRITE and READ streams; then perftest through the
# drop-in, when perftest is installed), and leaves the profiles in build/pgo-profile, whose
# profile-id the release preset looks for. By default it does nothing while the profiles are newer than every source file
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
cmake --build "$train" -j "$jobs" --target bench_verbs softibd softib softib_ibverbs

# bench_verbs starts its own softibd (../bin/softibd) on a private socket. The counts are
# what the optimiser weighs, so the mix follows what the benchmarks and programs run most:
# the ping-pong's path first, then the streams'. Without the 64-byte WRITEs their path (the
# RETH, the responder's WRITE) was judged cold, and its header codec left out of line.
run() { echo "pgo: bench_verbs $*"; (cd "$train/bench" && ./bench_verbs "$@" >/dev/null); }
run lat --size 8 --iters 200000
run lat --size 2 --iters 50000 --perftest
run rate --size 64 --iters 1000000
run bw --size 64 --iters 200000
run bw --size 65536 --iters 5000
run bw --size 1048576 --op read --iters 500
run lat --size 8 --iters 200000

# perftest through the drop-in (what bench/dropin.py runs): the drop-in's own layer (its
# ibv_post_send, ibv_poll_cq, the provider's dispatch) is in no bench_verbs run, and the core's
# objects it shares with bench_verbs add these counts to theirs. On a private fabric, stopped
# whatever happens; a run that fails is reported and the training goes on without it.
softib=$train/bin/softib
fabric=pgo-$$
listening() { ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
perftest() {
  local port server i
  port=$((20000 + RANDOM % 20000))
  echo "pgo: $* (drop-in, port $port)"
  "$softib" --fabric "$fabric" run --device host-a -- "$@" -p "$port" >/dev/null 2>&1 &
  server=$!
  for ((i = 0; i < 200; i++)); do  # up to ~10 s for the server to listen
    listening "$port" && break
    kill -0 "$server" 2>/dev/null || break
    sleep 0.05  # polling for the listen, not a synchronisation sleep
  done
  if ! "$softib" --fabric "$fabric" run --device host-b -- "$@" -p "$port" 127.0.0.1 >/dev/null 2>&1; then
    echo "pgo: $1 failed; its counts are left out" >&2
    kill "$server" 2>/dev/null || true
  fi
  wait "$server" 2>/dev/null || true
}
if command -v ib_send_lat >/dev/null && command -v ib_write_bw >/dev/null; then
  if "$softib" --fabric "$fabric" up >/dev/null; then
    trap '"$softib" --fabric "$fabric" down >/dev/null 2>&1 || true' EXIT
    perftest ib_send_lat -s 2 -n 100000
    perftest ib_write_bw -s 64 -n 200000
    perftest ib_write_bw -s 65536 -n 20000
    perftest ib_send_bw -s 64 -n 200000
    "$softib" --fabric "$fabric" down >/dev/null || true
    trap - EXIT
  else
    echo "pgo: softib up failed: no drop-in training" >&2
  fi
else
  echo "pgo: no perftest (apt install perftest): the drop-in's own layer is not trained"
fi

n=$(find "$profile.new" -name '*.gcda' | wc -l)
if [[ $n -eq 0 ]]; then
  echo "pgo: the training wrote no profile (in $profile.new)" >&2
  exit 1
fi
date +%s >"$profile.new/profile-id"
rm -rf "$profile"
mv "$profile.new" "$profile"
echo "pgo: $n profiles in $profile"
