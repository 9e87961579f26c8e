#include "link/shm_inbox.hpp"

#include <linux/membarrier.h>
#include <time.h>

#include <fmt/format.h>

#include "base/membarrier.hpp"

namespace softib::link {

uint64_t monotonic_ns() {
  timespec ts{};
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

Result<ShmInbox> ShmInbox::create(uint64_t endpoint, uint32_t pid, uint32_t channels, uint32_t capacity) {
  if (channels == 0 || channels > kMaxInboxChannels || capacity < 4096 || (capacity & (capacity - 1)) != 0)
    return Status(Code::kInvalidArgument, fmt::format("inbox: {} channels of {} bytes", channels, capacity));
  auto region = ShmRegion::create(fmt::format("softib-inbox-{}", endpoint), inbox_bytes(channels, capacity));
  if (!region) return region.error();
  // A fresh memfd is zero-filled: every atomic starts at 0 (free channels, nobody asleep).
  auto* h = new (region->data()) InboxHeader{};
  h->magic = kInboxMagic;
  h->version = kInboxVersion;
  h->channels = channels;
  h->capacity = capacity;
  h->endpoint = endpoint;
  h->pid = pid;
  h->flags.store(global_membarrier_available() ? kInboxSleeperBarrier : 0, std::memory_order_relaxed);
  return ShmInbox(std::move(*region));
}

Result<ShmInbox> ShmInbox::attach(ShmRegion region) {
  if (region.size() < kInboxHeaderBytes) return Status(Code::kInvalidArgument, "inbox: region too small");
  const auto* h = reinterpret_cast<const InboxHeader*>(region.data());
  if (h->magic != kInboxMagic || h->version != kInboxVersion)
    return Status(Code::kInvalidArgument, fmt::format("inbox: bad magic {:#x} or version {}", h->magic, h->version));
  if (h->channels == 0 || h->channels > kMaxInboxChannels || h->capacity < 4096 ||
      (h->capacity & (h->capacity - 1)) != 0 || region.size() < inbox_bytes(h->channels, h->capacity))
    return Status(Code::kInvalidArgument,
                  fmt::format("inbox: {} channels of {} bytes do not fit {} bytes", h->channels, h->capacity, region.size()));
  return ShmInbox(std::move(region));
}

ChannelMemory ShmInbox::channel(uint32_t i) const {
  SOFTIB_ASSERT(i < channels());
  return ChannelMemory(region_.data() + kInboxHeaderBytes + size_t{i} * channel_footprint(header().capacity),
                       header().capacity);
}

std::optional<uint32_t> ShmInbox::claim(uint64_t token) const {
  SOFTIB_ASSERT(token != 0);
  for (uint32_t i = 0; i < channels(); ++i) {
    uint64_t expected = 0;
    if (channel(i).control().owner.compare_exchange_strong(expected, token, std::memory_order_acq_rel)) {
      header().active[i / 64].fetch_or(uint64_t{1} << (i % 64), std::memory_order_release);
      return i;
    }
  }
  return std::nullopt;
}

std::optional<uint32_t> ShmInbox::next_claim() const {
  const uint32_t n = channels();
  for (uint32_t w = 0; w * 64 < n; ++w) {
    uint64_t free = ~active_mask(w);
    if (n - w * 64 < 64) free &= (uint64_t{1} << (n - w * 64)) - 1;
    if (free != 0) return w * 64 + static_cast<uint32_t>(__builtin_ctzll(free));
  }
  return std::nullopt;
}

bool ShmInbox::sleep_begin() const {
  header().rung.store(0, std::memory_order_relaxed);
  header().sleeping.store(1, std::memory_order_seq_cst);
  // The senders' half of the barrier (see above): after it, every sender either has its
  // records visible to the caller's last look, or reads sleeping == 1.
  if (!sleeper_barrier()) return true;
  if (membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED) == 0) return true;
  // Not expected once the command was reported available. Senders fence from their next
  // publish; one that did not may go unheard, so the caller sleeps only briefly.
  header().flags.store(0, std::memory_order_relaxed);
  return false;
}

void ShmInbox::set_sleeper_barrier(bool on) const {
  if (on == sleeper_barrier() || !global_membarrier_available()) return;
  header().flags.store(on ? kInboxSleeperBarrier : 0, std::memory_order_seq_cst);
  // Turning it off: a sender that read it on has published before this barrier reaches its
  // CPU (its later reads see it off), so the caller's next look finds its record.
  if (!on) (void)membarrier(MEMBARRIER_CMD_GLOBAL_EXPEDITED);
}

bool ShmInbox::needs_doorbell() const {
  // Store (the record's tag, release) then load (sleeping): the sender's half of the Dekker
  // pair with sleep_begin(). A full fence, unless the sleeper's membarrier stands in for it.
  if (sender_registered() && sleeper_barrier())
    std::atomic_signal_fence(std::memory_order_seq_cst);
  else
    std::atomic_thread_fence(std::memory_order_seq_cst);
  if (header().sleeping.load(std::memory_order_relaxed) == 0) return false;
  const uint64_t lease = header().lease_ns.load(std::memory_order_relaxed);
  if (lease != 0 && monotonic_ns() < lease) return false;
  return header().rung.exchange(1, std::memory_order_acq_rel) == 0;
}

void ShmInbox::take_lease(uint64_t now_ns, uint64_t length_ns) const {
  auto& lease = header().lease_ns;
  if (lease.load(std::memory_order_relaxed) < now_ns + length_ns * 3 / 4)
    lease.store(now_ns + length_ns, std::memory_order_relaxed);
}

void ShmInbox::hold_lease(uint64_t now_ns, std::atomic<uint64_t>& polling_since) const {
  uint64_t since = polling_since.load(std::memory_order_relaxed);
  if (lease_until() <= now_ns || since == 0 || since > now_ns) {
    since = now_ns;
    polling_since.store(now_ns, std::memory_order_relaxed);
  }
  take_lease(now_ns, lease_length(now_ns - since));
}

void ShmInbox::reclaim(uint32_t i, uint64_t read_position) const {
  ChannelControl& c = channel(i).control();
  c.head.store(read_position, std::memory_order_release);
  c.reference.store(kReferenceUnknown, std::memory_order_relaxed);  // the next sender is another process
  c.help.state.store(kHelpIdle, std::memory_order_relaxed);  // an offer the dead sender left
  c.later_written.store(0, std::memory_order_relaxed);
  header().active[i / 64].fetch_and(~(uint64_t{1} << (i % 64)), std::memory_order_acq_rel);
  c.owner.store(0, std::memory_order_release);
}

}  // namespace softib::link
