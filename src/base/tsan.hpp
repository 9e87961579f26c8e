// What ThreadSanitizer cannot see for itself: a frame crossing a link.
//
// The sanitizer learns that one thread's writes happen before another's reads from the
// synchronisation it watches in this process's memory. A ring in shared memory (link/
// shm_channel.hpp) is mapped at another address by each side, so the producer's release of a
// record's tag and the consumer's acquire of it are on two addresses that, to the sanitizer,
// have nothing to do with each other. The suites run both sides of a link in one process (two
// contexts and their engines), and without help every payload the data path copies (a SEND's
// bytes, a READ's source, a WRITE's target the application then reads) is reported as a race.
//
// So a link calls wire_published() just before a frame becomes visible to the other side and
// wire_received() once it has taken one: every publication happens before every later
// receipt, the order the wire itself gives. In other builds both are nothing.
#pragma once

#if defined(__SANITIZE_THREAD__)
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace softib::tsan {

#if defined(__SANITIZE_THREAD__)
inline char wire_token;  // one address for every link: the edges are coarse, and sound
inline void wire_published() { __tsan_release(&wire_token); }
inline void wire_received() { __tsan_acquire(&wire_token); }
#else
inline void wire_published() {}
inline void wire_received() {}
#endif

}  // namespace softib::tsan
