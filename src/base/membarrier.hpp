// membarrier(2): a memory barrier run on other CPUs on this thread's behalf, so that the
// common side of an asymmetric pair (a lock's owner, a ring's sender) needs only a compiler
// barrier where it would otherwise need a full fence, and the rare side pays a system call.
//
// Registration. A process must register for an expedited command before it uses it
// (PRIVATE_EXPEDITED) or before others' GLOBAL_EXPEDITED reaches it. The kernel registers a
// process with a single thread with a fence (~3 us); one with more threads waits for an RCU
// grace period first, 4-36 ms each here. Made where first needed (the first lock created,
// the first peer attached) they held up a program's setup by ~20 ms, so the first engine to
// start registers the process before it starts its thread (engine/README.md), on a thread of
// its own if the application already has others. The fast paths that rely on a registration
// read whether it has finished: until then they fence (a sender's publish) or register first
// (a lock's revocation, in private_membarrier()). A forked child does not inherit the
// registration (the kernel keeps it per address space): its flags start over (a
// pthread_atfork handler), and so does its first engine's registration.
#pragma once

#include <atomic>

namespace softib {

namespace membarrier_detail {
extern std::atomic<bool> global_registered;  // global_membarrier_registered()
}  // namespace membarrier_detail

// The raw system call (MEMBARRIER_CMD_*, linux/membarrier.h): its return value, -1 and errno
// on failure.
long membarrier(int cmd);

// Whether the kernel offers each expedited command with its registration (asked once).
bool private_membarrier_available();
bool global_membarrier_available();

// Registers this process for both available commands, and says so (the flags below): the
// first call does it (blocking: ~3 us alone, tens of ms with other threads running), later
// ones return at once, whether it has finished or not. Thread: any.
void register_membarriers();
// Whether register_membarriers() has been called in this process (finished or not).
bool membarrier_registration_started();
// Whether this process's registration for GLOBAL_EXPEDITED has finished: from then on a
// barrier another process runs reaches this one's CPUs. Thread: any. Inline, one acquire
// load: a sender asks at every publish (link::ShmInbox::needs_doorbell).
inline bool global_membarrier_registered() {
  return membarrier_detail::global_registered.load(std::memory_order_acquire);
}
// Blocks until the registration has finished, making it here if no one has started it.
void wait_for_membarrier_registration();

// A full barrier on every CPU that runs a thread of this process, before it returns: a
// thread's stores before the barrier are visible to the caller after it, and its loads after
// the barrier see the caller's stores before it. On these VMs ~20 us (an interrupt per CPU);
// the first call may wait for the registration as well.
// REQUIRES: private_membarrier_available().
void private_membarrier();

}  // namespace softib
