// Waiting for a process to end without a polling loop: a pidfd (pidfd_open(2), Linux 5.3+)
// turns readable when its process ends, whether or not it is the caller's child. How many
// threads this process runs, and a thread's scheduler slice.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>

namespace softib {

// Waits up to `timeout` for the process behind `pidfd` to end; true if it has (a zombie has).
// Neither closes the pidfd nor reaps the process.
bool wait_for_pidfd(int pidfd, std::chrono::milliseconds timeout);

// wait_for_pidfd() for `pid`; true also when no such process exists (gone and reaped). The
// pidfd opened by pid is another process's only if `pid` was reaped and reused meanwhile: not
// so for the caller's unreaped child; callers that signal another process open it first.
bool wait_for_exit(pid_t pid, std::chrono::milliseconds timeout);

// pidfd_open(2): the fd, or -1 with errno (ESRCH: no such process).
int open_pidfd(pid_t pid);

// How many threads this process has now (num_threads in /proc/self/stat), or 0 when that
// cannot be read.
int thread_count();

// Asks the kernel for a scheduler slice of `ns` for the calling thread (sched_setattr(2):
// sched_runtime, SCHED_OTHER); false where it refuses. EEVDF (Linux 6.12 and later) takes it
// unprivileged: a woken thread with a short slice has an early deadline and pre-empts one
// that spins. Older kernels refuse or ignore it.
bool request_slice(uint64_t ns);
// The slice thread `tid` (0: the caller) runs with (sched_getattr(2)), or nullopt.
std::optional<uint64_t> thread_slice_ns(pid_t tid);

}  // namespace softib
