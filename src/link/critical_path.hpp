// The polling ping-pong's critical path, marked for callgrind: from the moment a poll's step
// (the application waits on it) finds a record in its inbox to the moment the record of the
// reply is published. Instructions there are time a message waits for (two processes' halves
// make the round trip); everything else a thread does overlaps the peer's half. Timed
// figures of that path move with the vCPUs' state (near or far) and with each reading of the
// clock; an instruction count does not. `bench/instructions.py --mode critical` builds with
// -DSOFTIB_CRITICAL_PATH=ON (the `critpath` preset) and runs callgrind collecting only
// between these marks. In every other build they are empty.
//
// Thread: any; the mark is per thread (callgrind's toggle is per thread too).
#pragma once

#ifdef SOFTIB_CRITICAL_PATH
#include <valgrind/callgrind.h>

// Called once at the start of each path, while collecting: callgrind counts its calls, and
// that count, not the messages run, divides the path's instructions (a message that a step
// no poll waits on takes, a post's or the engine's, starts no path).
extern "C" [[gnu::noinline]] inline void softib_critical_path_begun() { asm volatile(""); }
#endif

namespace softib::link::critical_path {

#ifdef SOFTIB_CRITICAL_PATH
inline constexpr bool kEnabled = true;
inline thread_local bool collecting = false;
// A poll's step found the message its caller waits for: start counting.
inline void begin() {
  if (!collecting) {
    collecting = true;
    CALLGRIND_TOGGLE_COLLECT;
    softib_critical_path_begun();
  }
}
// A record was published: the path ends (the reply's record).
inline void end() {
  if (collecting) {
    collecting = false;
    CALLGRIND_TOGGLE_COLLECT;
  }
}
#else
inline constexpr bool kEnabled = false;
inline void begin() {}
inline void end() {}
#endif

}  // namespace softib::link::critical_path
