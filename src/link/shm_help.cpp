// Shared copies (rc::CopyHelp): the receiving side (ShmLink::Help, lent to the device with a
// burst by reference) and the sending side (ShmLink::serve_help, from poll()). See the link
// README, "Shared copies", and docs/invariants.md for who writes the slot.
#include "link/shm_link.hpp"

#include <signal.h>
#include <sys/uio.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <optional>
#include <thread>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "base/tsan.hpp"

namespace softib::link {

// Shared copies (rc::CopyHelp). The receiver of a burst by reference writes its offer into the
// slot of its own channel to the sender, which sits in the sender's inbox where the sender's
// polls look. Only the slot's state word is shared both ways; the receiver writes the segments
// while the slot is idle, the sender reads them once it has taken the offer.
bool ShmLink::Help::offer(std::span<const iovec> local, std::span<const iovec> remote) {
  using Slot = ChannelControl::HelpSlot;
  if (sender_ == nullptr || local.size() > Slot::kSegments || remote.size() > Slot::kSegments) return false;
  Slot& slot = sender_->writer->control().help;
  // The same segments in the same order, as offer() below wrote them.
  const auto same = [](std::span<const iovec> pieces, const Slot::Segment* in, size_t count) {
    if (pieces.size() != count) return false;
    for (const iovec& piece : pieces) {
      const Slot::Segment seg = *in++;
      if (seg.addr != reinterpret_cast<uint64_t>(piece.iov_base) || seg.len != piece.iov_len) return false;
    }
    return true;
  };
  if (again_) {
    // Delivered again: the offer the slot holds must be this one (the slot is this link's
    // memory to read; the sender writes only its state). Any other: copied here.
    const uint32_t s = slot.state.load(std::memory_order_acquire);
    return (s == kHelpDone || s == kHelpFailed) && same(local, slot.into, slot.into_count) &&
           same(remote, slot.from, slot.from_count);
  }
  uint64_t bytes = 0;
  for (const iovec& piece : local) bytes += piece.iov_len;
  if (bytes < link_.help_min_) return false;
  if (slot.state.load(std::memory_order_relaxed) != kHelpIdle) return false;
  const auto put = [](std::span<const iovec> pieces, Slot::Segment* out) {
    for (const iovec& piece : pieces) *out++ = {reinterpret_cast<uint64_t>(piece.iov_base), piece.iov_len};
  };
  put(local, slot.into);
  put(remote, slot.from);
  slot.into_count = static_cast<uint16_t>(local.size());
  slot.from_count = static_cast<uint16_t>(remote.size());
  tsan::wire_published();  // the slot is mapped at another address in the sender (base/tsan.hpp)
  slot.state.store(kHelpOffered, std::memory_order_release);
  ++link_.counters_.helps_offered;
  // A sleeping engine takes no offers; woken, it takes the next ones (the following bursts'):
  // its spin grows while it is rung soon after each sleep (engine/spin.hpp).
  link_.ring_if_asleep(*sender_);
  return true;
}

bool ShmLink::sender_alive(uint32_t endpoint) const {
  const std::optional<uint32_t> pid = dir_.endpoint_pid(endpoint);
  return pid && !(::kill(static_cast<pid_t>(*pid), 0) != 0 && errno == ESRCH);
}

// Withdrawn if the sender has not taken it; else waits for its copy to end, for at most the
// wait bound, and then leaves it to end later. While it waits it takes offers made to this
// link (the sender may be waiting in the same way for this process), and it stops waiting
// when the sender's process is gone (its memory, and its copy, with it).
rc::CopyHelp::End ShmLink::Help::finish() {
  SOFTIB_ASSERT(sender_ != nullptr && from_ != nullptr);
  Peer& p = *sender_;
  sender_ = nullptr;
  std::atomic<uint32_t>& state = p.writer->control().help.state;
  uint32_t s = kHelpOffered;
  if (link_.help_patience_.count() > 0 && state.load(std::memory_order_relaxed) == kHelpOffered) {
    const auto until = std::chrono::steady_clock::now() + link_.help_patience_;
    for (uint32_t spins = 1; state.load(std::memory_order_relaxed) == kHelpOffered; ++spins) {
      link_.serve_helps();
      if (spins % 1024 == 0 && std::chrono::steady_clock::now() >= until) break;
    }
  }
  if (state.compare_exchange_strong(s, kHelpIdle, std::memory_order_acquire)) {
    ++link_.counters_.helps_withdrawn;
    return End::kNotWritten;
  }
  std::optional<std::chrono::steady_clock::time_point> until;  // set at the first look at the clock
  for (uint32_t spins = 1;; ++spins) {
    s = state.load(std::memory_order_acquire);
    if (s == kHelpDone || s == kHelpFailed) tsan::wire_received();
    if (s == kHelpDone) {
      state.store(kHelpIdle, std::memory_order_relaxed);
      ++link_.counters_.helps_taken;
      return End::kWritten;
    }
    if (s == kHelpFailed) {
      state.store(kHelpIdle, std::memory_order_relaxed);
      ++link_.counters_.helps_failed;
      p.help_failed = true;
      // The sender's bursts by reference go back to the size one copy suits.
      std::atomic<uint64_t>& reference = from_->reference;
      reference.store(reference.load(std::memory_order_relaxed) & ~kReferenceHelped, std::memory_order_relaxed);
      SOFTIB_LOG(kInfo, "shm", "endpoint {}: endpoint {} could not write an offered copy: copies by reference stay here",
                 link_.endpoint_, p.endpoint);
      return End::kNotWritten;
    }
    if (s != kHelpTaken) {  // only the sender moves it on from taken; anything else is not a copy it makes
      state.store(kHelpIdle, std::memory_order_relaxed);
      ++link_.counters_.helps_failed;
      return End::kNotWritten;
    }
    link_.serve_helps();
#if defined(__x86_64__)
    __builtin_ia32_pause();
#endif
    if (spins % 256 != 0) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!until) until = now + link_.help_wait_bound_;
    if (now < *until) continue;
    if (!link_.sender_alive(p.endpoint)) {
      state.store(kHelpIdle, std::memory_order_relaxed);
      ++link_.counters_.helps_failed;
      return End::kNotWritten;
    }
    // Later: the sender sets later_written and rings this link's doorbell when it is done
    // (serve_help). Cleared before the slot says waiting, so that the sender's mark is the
    // one for this copy.
    from_->later_written.store(0, std::memory_order_relaxed);
    if (state.compare_exchange_strong(s, kHelpWaiting, std::memory_order_release)) {
      ++link_.counters_.helps_later;
      later_ = true;
      return End::kLater;
    }
  }
}

void ShmLink::Help::disarm() {
  if (again_ && sender_ != nullptr) {
    std::atomic<uint32_t>& state = sender_->writer->control().help.state;
    const uint32_t s = state.load(std::memory_order_acquire);
    if (s == kHelpDone || s == kHelpFailed) state.store(kHelpIdle, std::memory_order_relaxed);
  }
  sender_ = nullptr;
  again_ = false;
}

bool ShmLink::copy_pending(const Reader& r) {
  const Peer* p = known_peer(static_cast<uint32_t>(r.token));
  if (p == nullptr || !p->writer) return false;  // the sender is gone: delivered again, to fail
  const uint32_t s = p->writer->control().help.state.load(std::memory_order_acquire);
  return s == kHelpTaken || s == kHelpWaiting;
}

bool ShmLink::live_copy_later(Reader& r) {
  if (!r.later || !copy_pending(r)) return false;
  const uint64_t now = cycle_ticks();
  if (r.alive_at == 0 || ticks_since(r.alive_at, now) >= kAliveCheckTicks) {
    r.alive = sender_alive(static_cast<uint32_t>(r.token));
    r.alive_at = now | 1;  // never 0: "not asked"
    ++counters_.sender_checks;
  }
  return r.alive;
}

// A sender kept stopped holds this wait as long as it stays stopped (as it holds its channel):
// it is named in the log, so that a program that hangs in ibv_dereg_mr, ibv_destroy_qp or
// ibv_close_device says which process it waits for.
void ShmLink::settle_copies() {
  if (copies_later_ == 0) return;
  const auto warn_at = std::chrono::steady_clock::now() + settle_warn_after_;
  bool warned = false;
  for (;;) {
    uint32_t waiting_for = 0;
    const bool pending = any_active_channel([&](uint32_t i) {
      Reader& r = readers_[i];
      if (!live_copy_later(r)) return false;
      waiting_for = static_cast<uint32_t>(r.token);
      return true;
    });
    if (!pending) return;
    if (!warned && std::chrono::steady_clock::now() >= warn_at) {
      warned = true;
      SOFTIB_LOG(kWarn, "shm",
                 "endpoint {}: waiting for endpoint {} (pid {}) to end a copy into this process's memory before it "
                 "is handed back; that process is stopped or not scheduled",
                 endpoint_, waiting_for, dir_.endpoint_pid(waiting_for).value_or(0));
    }
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

// The sender's side: the offer names this process's memory (`from`) and the offering
// process's (`into`); both come from another process, so counts and lengths are checked and
// a bad address fails the copy (EFAULT), never this process.
void ShmLink::serve_offered_help(uint32_t i) {
  using Slot = ChannelControl::HelpSlot;
  Slot& slot = watches_[i].mem.control().help;
  const Reader& r = readers_[i];
  // A process that is gone may have left an offer (the slot is reset when its channel is
  // reclaimed); its pid may name another process one day.
  if (!r.reader || r.pid <= 0 || !dir_.endpoint_alive(static_cast<uint32_t>(r.token))) return;
  uint32_t s = kHelpOffered;
  if (!slot.state.compare_exchange_strong(s, kHelpTaken, std::memory_order_acquire)) return;
  tsan::wire_received();
  // A list's bytes, its segments copied out as iovecs; nullopt when its count or a length is
  // out of bounds (1 to kSegments segments, at most 1 GiB in all).
  const auto take = [](const Slot::Segment* segments, size_t count, iovec* out) -> std::optional<uint64_t> {
    if (count == 0 || count > Slot::kSegments) return std::nullopt;
    uint64_t bytes = 0;
    for (size_t k = 0; k < count; ++k) {
      const Slot::Segment seg = segments[k];
      if (seg.len > (1u << 30) || (bytes += seg.len) > (1u << 30)) return std::nullopt;
      out[k] = iovec{reinterpret_cast<void*>(seg.addr), seg.len};
    }
    return bytes;
  };
  const size_t into_count = slot.into_count;
  const size_t from_count = slot.from_count;
  std::array<iovec, Slot::kSegments> into;
  std::array<iovec, Slot::kSegments> from;
  const std::optional<uint64_t> into_bytes = take(slot.into, into_count, into.data());
  const std::optional<uint64_t> from_bytes = take(slot.from, from_count, from.data());
  bool ok = into_bytes && from_bytes && *into_bytes == *from_bytes;
  if (ok) {
    const ssize_t n = ::process_vm_writev(r.pid, from.data(), from_count, into.data(), into_count, 0);
    ok = n >= 0 && static_cast<uint64_t>(n) == *into_bytes;
  }
  if (ok) ++counters_.helps_given;
  tsan::wire_published();
  // The receiver that stopped waiting (kHelpWaiting) reads that channel again once it sees
  // later_written (a spinning engine) or is rung (a sleeping one).
  Peer* p = known_peer(static_cast<uint32_t>(r.token));
  if (end_taken_copy(slot, ok, p != nullptr && p->writer ? &p->writer->control() : nullptr) && p != nullptr) {
    ++counters_.doorbells;
    p->doorbell.ring();
  }
}

}  // namespace softib::link
