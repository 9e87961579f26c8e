#include "link/shm_channel.hpp"

#include <time.h>

#if defined(__x86_64__)
#include <cpuid.h>
#endif

namespace softib::link {

namespace {

// CLOCK_MONOTONIC through the vDSO: its counter read is ordered after earlier loads, so a
// load between two readings is timed whole.
uint64_t clock_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

bool ChannelWriter::cpu_has_prefetchw() {
#if defined(__x86_64__)
  static const bool yes = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __get_cpuid(0x80000001, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 8)) != 0;
  }();
  return yes;
#else
  return false;
#endif
}

std::optional<wire::MutByteSpan> ChannelWriter::reserve_after_pad(size_t length, uint64_t need, uint64_t to_end) {
  // Pad to the end of the data and start at offset 0. The pad is published at once: it is a
  // complete record on its own, and the consumer skips it.
  if (!room_for(to_end + need)) return std::nullopt;
  RecordHeader& pad = mem_.header_at(tail_);
  pad.length = static_cast<uint32_t>(to_end - sizeof(RecordHeader));
  pad.kind = kRecordPad;
  pad.aux = 0;
  pad.tag.store(tail_ + 1, std::memory_order_release);
  tail_ += to_end;
  return wire::MutByteSpan(reserve_at_tail(), length);  // at offset 0
}

void ChannelWriter::note_head_transfer(uint64_t ns) {
  if (ns < kNearNs) ++distance_near_;
  if (ns >= kFarNs) ++distance_far_;
  if (++distance_samples_ == kDistanceWindow) {
    const bool first = windows_near_ + windows_far_ == 0;
    if (distance_near_ > kDistanceWindow / 2)
      near_ = true;
    else if (first || distance_far_ > kDistanceWindow / 2)
      near_ = false;
    ++(near_ ? windows_near_ : windows_far_);
    distance_samples_ = 0;
    distance_near_ = distance_far_ = 0;
  }
}

bool ChannelWriter::room_after_reading_head(uint64_t bytes) {
  // Timed (consumer_near()): the clock's second reading waits for the load to complete.
  const uint64_t t0 = clock_ns();
  const uint64_t head = mem_.control().head.load(std::memory_order_acquire);
  const uint64_t t1 = clock_ns();
  if (head != head_cache_) note_head_transfer(t1 - t0);
  head_cache_ = head;
  if (mem_.capacity() - (tail_ - head_cache_) >= bytes) return true;
  ++full_;
  return false;
}

std::optional<Record> ChannelReader::peek_after_pad() {
  for (;;) {
    head_ += mem_.capacity() - (head_ & (mem_.capacity() - 1));  // the pad runs to the end
    const RecordHeader& h = mem_.header_at(head_);
    if (h.tag.load(std::memory_order_acquire) != head_ + 1) return std::nullopt;
    const uint64_t offset = head_ & (mem_.capacity() - 1);
    if (h.kind == kRecordPad || h.length > mem_.capacity() - offset - sizeof(RecordHeader)) continue;
    peeked_size_ = record_size(h.length);
    return Record{h.kind, h.aux, wire::ByteSpan(mem_.data() + offset + sizeof(RecordHeader), h.length)};
  }
}

}  // namespace softib::link
