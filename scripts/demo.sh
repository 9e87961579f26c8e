#!/usr/bin/env bash
# The main job: what the admin guides walk a user through, on softib. Bring up the guides'
# simplest fabric (one switch, host-a and host-b), watch the ports wait in Initializing, start
# the subnet manager, watch them go Active, list the fabric, check links, ibping a port, read
# counters, run an unmodified verbs program between the hosts, run a fabric diagnosis, break a
# link and see it, and tear it all down.
#   scripts/demo.sh BUILD_DIR
set -euo pipefail
build=${1:-build/release}
softib="$(cd "$build/bin" && pwd)/softib"
work=$(mktemp -d "${TMPDIR:-/tmp}/softib-demo.XXXXXX")
# A private fabric: the demo never touches a fabric the user runs.
export SOFTIB_FABRIC="demo-$$" SOFTIB_RUNTIME_DIR="$work/run" SOFTIB_STATE_DIR="$work/state"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  "$softib" down >/dev/null 2>&1 || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

step() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
show() { printf '\033[2m$ %s\033[0m\n' "$*"; "$@"; }

step "Start the fabric daemon: one switch, host-a and host-b (no subnet manager yet)"
show "$softib" up --no-sm

step "Without a subnet manager the port waits in Initializing (host-a's view)"
show "$softib" --host host-a stat

step "Start the subnet manager on host-a (as opensm)"
echo "\$ softib --host host-a sm -s 5 &"
"$softib" --host host-a sm -s 5 >"$work/sm.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 600); do grep -q "SUBNET UP" "$work/sm.out" && break; sleep 0.05; done
cat "$work/sm.out"

step "Now the port is Active, with the LID the SM assigned"
show "$softib" --host host-a stat
show "$softib" sminfo

step "The fabric as the SM sees it"
show "$softib" hosts
show "$softib" switches
show "$softib" linkinfo --switches-only | head -n 4

step "ibping host-b from host-a (host-b runs the ibping server)"
lid_b=$("$softib" --host host-b stat -s 2>/dev/null | awk '/Base lid/ {print $3}')
[ -n "$lid_b" ] || lid_b=$("$softib" --host host-b stat | awk '/Base lid/ {print $3}')
echo "\$ softib --host host-b ping -S &"
"$softib" --host host-b ping -S >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do
  "$softib" ping -c 1 -t 100 -L "$lid_b" >/dev/null 2>&1 && break
  sleep 0.05
done
show "$softib" ping -c 5 -L "$lid_b"

step "RDMA between the hosts: the unmodified ibv_rc_pingpong through softib run"
port=$((20000 + $$ % 20000))
echo "\$ softib run --device host-b -- ibv_rc_pingpong -p $port -n 1000 -c &"
"$softib" run --device host-b -- ibv_rc_pingpong -p "$port" -n 1000 -c >"$work/pp-server.out" 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do ss -ltn 2>/dev/null | grep -q ":$port " && break; sleep 0.05; done
show "$softib" run --device host-a -- ibv_rc_pingpong -p "$port" -n 1000 -c 127.0.0.1
wait "${pids[-1]}" 2>/dev/null || true
echo "(server side)"; tail -n 2 "$work/pp-server.out"

step "Port counters of host-a's port"
show "$softib" perfquery

step "A fabric diagnosis (ibdiagnet-style)"
show "$softib" diagnet || true

step "Break host-b's link and look again"
show "$softib" port set host-b 1 down
show "$softib" linkinfo --switches-only | head -n 4
"$softib" diagnet >"$work/diag.txt" || true; echo "$ softib diagnet | tail -n 12"; tail -n 12 "$work/diag.txt"
show "$softib" port set host-b 1 up

step "Tear it down"
show "$softib" down
