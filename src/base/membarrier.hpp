// membarrier(2): a memory barrier run on other CPUs on this thread's behalf, so that the
// common side of an asymmetric pair (a lock's owner, a ring's sender) needs only a compiler
// barrier where it would otherwise need a full fence, and the rare side pays a system call.
#pragma once

namespace softib {

// The raw system call (MEMBARRIER_CMD_*, linux/membarrier.h): its return value, -1 and errno
// on failure.
long membarrier(int cmd);

// MEMBARRIER_CMD_PRIVATE_EXPEDITED for this process: whether the kernel has it and this
// process is registered for it (registered on the first call, once).
bool private_membarrier_ready();
// A full barrier on every CPU that runs a thread of this process, before it returns: a
// thread's stores before the barrier are visible to the caller after it, and its loads after
// the barrier see the caller's stores before it. On these VMs ~20 us (an interrupt per CPU).
// REQUIRES: private_membarrier_ready().
void private_membarrier();

}  // namespace softib
