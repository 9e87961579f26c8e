// ShmChannel: a single-producer, single-consumer ring of records in shared memory, the unit
// the shared-memory link is built from (one channel per sender in each receiver's inbox).
//
//   control (12 cache lines)                  data (capacity bytes, a power of two)
//   +--------+--------+-----------+------+     +-------------------------------------+
//   | owner  | head   | reference | help |     | rec | rec |pad| ... | rec |          |
//   +--------+--------+-----------+------+     +-------------------------------------+
//
// A record is 64-byte aligned: a 16-byte header, then `length` body bytes.
//
//   byte 0        8          12      14      16
//        +--------+----------+-------+-------+---------------------------+
//        | tag    | length   | kind  | aux   | body ...                  |
//        +--------+----------+-------+-------+---------------------------+
//
// Positions are free-running 64-bit byte counts. The producer writes the body and the
// length, then publishes the record by storing tag = position + 1 (release). The consumer
// polls the tag of the record at its read position (acquire): a matching tag means the record
// is complete. Stale records from an earlier lap carry another position, so nothing needs
// clearing, and a small frame costs the consumer one cache line, not a separate index line
// plus the data (what a head/tail pair would cost: the difference is one cross-core transfer,
// 30-170 ns on these machines, brief §6).
//
// The consumer publishes how far it has read (`head`) lazily, every quarter ring and when it
// goes idle; the producer re-reads it only when its cached copy says the ring is full. A
// record that does not fit before the end of the data is preceded by a pad record that runs to
// the end. A record may use at most half the ring, so a drained ring always has room.
//
// The producer asks for the lines it will write next before it needs them (prefetch for
// write, `kWriteAhead` bytes past the record it just published): each was last read by the
// consumer's core, and a store to it waits for that core to give it up (a cross-core
// transfer, 55-240 ns here). Asked early, the transfers of several small records overlap
// instead of stalling one store each. Large records skip it: their bodies are copied with
// non-temporal stores (base/copy.hpp), which fetch nothing.
//
// Thread: one producer thread at a time (serialised by its owner) and one consumer thread at
// a time; the two sides may be in different processes.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "base/assert.hpp"
#include "base/tsan.hpp"
#include "rc/frame.hpp"
#include "wire/bytes.hpp"

namespace softib::link {

struct ChannelControl {
  alignas(64) std::atomic<uint64_t> owner{0};  // 0: free; else the claiming sender's token
  // Producer sets, consumer clears: the producer has ended a copy that the consumer stopped
  // waiting for (kHelpWaiting in the slot of the consumer's channel to the producer), so the
  // burst the consumer left unread here can come again. The consumer's ready() reads it, with
  // no lock and no peer's memory: a spinning engine then steps at once, not when the doorbell
  // that comes with it wakes a sleep. Beside `owner`: both are written once in a long while.
  std::atomic<uint32_t> later_written{0};
  alignas(64) std::atomic<uint64_t> head{0};   // consumer: bytes consumed (published lazily)
  // Consumer: whether it may read the sender's memory with process_vm_readv, asked when it
  // meets the sender (kReference*). The sender sends payloads by reference (rc/frame.hpp
  // Burst) only once it reads kReferenceAllowed: never a frame the consumer must refuse.
  alignas(64) std::atomic<uint64_t> reference{0};
  // Producer offers, consumer takes (rc::CopyHelp): a copy this channel's producer asks its
  // consumer to make, from the consumer's memory into the producer's. The consumer sent a
  // payload by reference the other way (its own channel in the producer's inbox), and the
  // producer, reading it, offers part of the copy back here, where the consumer's polls look.
  struct HelpSlot {
    static constexpr size_t kSegments = 16;
    using Segment = rc::RefSegment;  // an address and a length in another process, as in a burst
    alignas(64) std::atomic<uint32_t> state{0};  // kHelp*
    uint16_t into_count = 0;                     // segments of `into` in use
    uint16_t from_count = 0;                     // ... and of `from`
    Segment into[kSegments];                     // where the bytes go: the producer's memory
    Segment from[kSegments];                     // where they are: the consumer's memory
  } help;
};
// HelpSlot::state. Offered -> taken -> done or failed by the consumer; offered -> idle
// (withdrawn), taken -> waiting (it stopped waiting: the consumer rings its doorbell when it
// is done), done -> idle, failed -> idle by the producer, which writes the segments only
// while the slot is idle.
inline constexpr uint32_t kHelpIdle = 0;
inline constexpr uint32_t kHelpOffered = 1;
inline constexpr uint32_t kHelpTaken = 2;
inline constexpr uint32_t kHelpDone = 3;
inline constexpr uint32_t kHelpFailed = 4;
inline constexpr uint32_t kHelpWaiting = 5;
// The end of a copy taken from `slot`: it says done or failed. Returns whether the offering
// side had stopped waiting (kHelpWaiting); `back`, the taker's channel into the offerer's
// inbox (nullptr: it has none), is then marked later_written, and the caller rings the
// offerer's doorbell. Thread: the taker.
inline bool end_taken_copy(ChannelControl::HelpSlot& slot, bool ok, ChannelControl* back) {
  if (slot.state.exchange(ok ? kHelpDone : kHelpFailed, std::memory_order_acq_rel) != kHelpWaiting) return false;
  if (back != nullptr) back->later_written.store(1, std::memory_order_release);
  return true;
}
inline constexpr uint64_t kReferenceUnknown = 0;  // not asked yet (a channel not read yet)
inline constexpr uint64_t kReferenceAllowed = 1;
inline constexpr uint64_t kReferenceRefused = 2;  // EPERM (ptrace_scope, another user), ENOSYS
// With kReferenceAllowed: the consumer measured bursts by reference faster than through the
// ring (or is trying them): a sender that chooses by measuring (SOFTIB_SHM_CMA=auto) sends so.
inline constexpr uint64_t kReferencePreferred = 4;
// With kReferenceAllowed: the consumer offers the sender part of each large copy (HelpSlot
// below): larger bursts by reference pay then (ShmLink::kRefBurstHelpedBytes).
inline constexpr uint64_t kReferenceHelped = 8;
static_assert(sizeof(ChannelControl) == 192 + 576);
static_assert(std::atomic<uint64_t>::is_always_lock_free, "records are published across processes");

struct RecordHeader {
  std::atomic<uint64_t> tag;
  uint32_t length;
  uint16_t kind;
  uint16_t aux;
};
static_assert(sizeof(RecordHeader) == 16);

inline constexpr size_t kRecordAlign = 64;
inline constexpr uint16_t kRecordPad = 0xFFFF;  // the kind of a pad record (never delivered)

constexpr size_t record_size(size_t body) { return (sizeof(RecordHeader) + body + kRecordAlign - 1) / kRecordAlign * kRecordAlign; }

// Bytes a channel of `capacity` data bytes occupies (control + data).
constexpr size_t channel_footprint(size_t capacity) { return sizeof(ChannelControl) + capacity; }

// A view of one channel's memory. REQUIRES: `base` is 64-byte aligned; capacity a power of two
// of at least 4 KiB.
class ChannelMemory {
 public:
  ChannelMemory() = default;  // no channel (a slot filled in later); use none of it
  ChannelMemory(uint8_t* base, size_t capacity)
      : control_(reinterpret_cast<ChannelControl*>(base)), data_(base + sizeof(ChannelControl)), capacity_(capacity) {
    SOFTIB_ASSERT(capacity >= 4096 && (capacity & (capacity - 1)) == 0);
    SOFTIB_ASSERT(reinterpret_cast<uintptr_t>(base) % 64 == 0);
  }
  ChannelControl& control() const { return *control_; }
  uint8_t* data() const { return data_; }
  size_t capacity() const { return capacity_; }
  RecordHeader& header_at(uint64_t position) const {
    return *reinterpret_cast<RecordHeader*>(data_ + (position & (capacity_ - 1)));
  }
  // The largest body one record may carry.
  size_t max_body() const { return capacity_ / 2 - sizeof(RecordHeader); }

 private:
  ChannelControl* control_ = nullptr;
  uint8_t* data_ = nullptr;
  size_t capacity_ = 0;
};

// The producer side. Its position lives in the producer's own memory; a new producer of a
// reclaimed channel starts where the consumer has read to (the published head).
class ChannelWriter {
 public:
  // How far ahead of the next record the producer prefetches for write, and the largest
  // record after which it does.
  static constexpr uint64_t kWriteAhead = 1024;
  static constexpr uint64_t kWriteAheadMaxRecord = 1024;  // a packed record (ShmLink) at most

  ChannelWriter(ChannelMemory mem, uint64_t start)
      : mem_(mem), tail_(start), head_cache_(start), prefetchw_(cpu_has_prefetchw()) {}

  // Room for a record with `length` body bytes, or nullopt when the ring is full (the consumer
  // is behind). REQUIRES: length <= max_body(). A reservation that is not committed is simply
  // reserved again by the next call.
  // reserve() and commit() are inlined into each caller (the link has two of each: a frame's
  // own record and a packed one); out of line they cost ~15 instructions a frame more.
  [[gnu::always_inline]] std::optional<wire::MutByteSpan> reserve(size_t length) {
    if (uint8_t* body = reserve_in_place(length)) return wire::MutByteSpan(body, length);
    const uint64_t need = record_size(length);
    const uint64_t to_end = mem_.capacity() - (tail_ & (mem_.capacity() - 1));
    if (need > to_end) return reserve_after_pad(length, need, to_end);
    if (!room_after_reading_head(need)) return std::nullopt;
    return wire::MutByteSpan(reserve_at_tail(), length);
  }
  // reserve()'s common case, where the record needs no pad before it and the cached head
  // shows room: its body's address, or nullptr (reserve() then pads or reads the head). It
  // calls nothing, so a caller's fast path through it saves no registers (ShmLink::reserve).
  [[gnu::always_inline]] uint8_t* reserve_in_place(size_t length) {
    SOFTIB_ASSERT(length <= max_body());
    const uint64_t need = record_size(length);
    if (need > mem_.capacity() - (tail_ & (mem_.capacity() - 1)) || !room_by_cached_head(need)) return nullptr;
    return reserve_at_tail();
  }
  // Publishes the reserved record with its first `length` bytes. REQUIRES: length <= the
  // reserved length.
  [[gnu::always_inline]] void commit(size_t length, uint16_t kind, uint16_t aux = 0) {
    SOFTIB_ASSERT(reserved_at_ == tail_);
    RecordHeader& h = mem_.header_at(tail_);
    h.length = static_cast<uint32_t>(length);
    h.kind = kind;
    h.aux = aux;
    tsan::wire_published();
    h.tag.store(tail_ + 1, std::memory_order_release);
    const uint64_t next = tail_ + record_size(length);
    prefetch_for_write(tail_, next);
    tail_ = next;
    reserved_at_ = UINT64_MAX;
  }

  size_t max_body() const { return mem_.max_body(); }
  uint64_t capacity() const { return mem_.capacity(); }
  ChannelControl& control() const { return mem_.control(); }
  uint64_t position() const { return tail_; }
  // Bytes written and not yet consumed, as far as this producer knows.
  uint64_t backlog() const { return tail_ - head_cache_; }

  // Whether the consumer's core looks near this one (shares its cache). Measured for free:
  // when the ring looks full the producer reloads the consumer's head, and when the consumer
  // has moved it since, that load is one cross-core transfer of the head's line. The first
  // window of kDistanceWindow such loads says near when their median is under kNearNs; after
  // it, the judgment changes only when the median leaves the band: near under kNearNs, far at
  // kFarNs or more. False until measured.
  bool consumer_near() const { return near_; }
  static constexpr uint32_t kDistanceWindow = 16;
  // Between the two states these VMs show: 30-70 ns near, 140-240 ns far, as timed here
  // (two readings of the clock included). A third, middle state times 80-120 ns (median
  // ~95-100): with one threshold its windows fell either side, and each change of judgment
  // restarted the copy chooser from its guess (CopyChooser::start_over), streaming when far.
  // 4 MiB WRITEs through the ring: 60 restarts in 700 windows, 137 of those windows streamed
  // at ~25 % less, and 10.5 GB/s against 11.6 with ordinary stores forced (10 runs each).
  static constexpr uint64_t kNearNs = 110;
  static constexpr uint64_t kFarNs = 130;
  // One timed head load (for tests): `ns` is what it took.
  void note_head_transfer(uint64_t ns);
  // Windows judged so far, each way (diagnostics: a run whose large copies all went one way
  // says here whether it was measured so, or never measured).
  uint32_t windows_near() const { return windows_near_; }
  uint32_t windows_far() const { return windows_far_; }
  // How many reservations found the ring full (the consumer behind): a producer that waited
  // for room was busy, however long it waited (CopyChooser).
  uint64_t times_full() const { return full_; }

 private:
  // Whether `bytes` fit behind the consumer's head as last read (no load of the shared head).
  bool room_by_cached_head(uint64_t bytes) const { return mem_.capacity() - (tail_ - head_cache_) >= bytes; }
  // The same, else reads the head again.
  bool room_for(uint64_t bytes) { return room_by_cached_head(bytes) || room_after_reading_head(bytes); }
  // The record at the tail is reserved: its body's address.
  uint8_t* reserve_at_tail() {
    reserved_at_ = tail_;
    return mem_.data() + (tail_ & (mem_.capacity() - 1)) + sizeof(RecordHeader);
  }
  bool room_after_reading_head(uint64_t bytes);
  // A record that does not fit before the end of the data: a pad record to the end first.
  std::optional<wire::MutByteSpan> reserve_after_pad(size_t length, uint64_t need, uint64_t to_end);
  void prefetch_for_write(uint64_t from, uint64_t to) const {
#if defined(__x86_64__)
    if (to - from > kWriteAheadMaxRecord || !prefetchw_) return;
    // Lines of the data a lap behind the consumer (already read: the ring is not full there
    // unless the consumer is a whole lap behind, when this only costs it a refetch).
    for (uint64_t p = (from + kWriteAhead) & ~uint64_t{kRecordAlign - 1}; p < to + kWriteAhead; p += kRecordAlign)
      asm volatile("prefetchw %0" ::"m"(*(mem_.data() + (p & (mem_.capacity() - 1)))));
#else
    (void)from;
    (void)to;
#endif
  }
  // PREFETCHW (CPUID 0x80000001 ECX bit 8, "3DNowPrefetch"): AMD since K8, Intel since
  // Broadwell. Elsewhere the opcode is not promised to be a no-op, so it is asked (once).
  static bool cpu_has_prefetchw();

  ChannelMemory mem_;
  uint64_t tail_;
  uint64_t head_cache_;
  uint64_t reserved_at_ = UINT64_MAX;
  uint32_t distance_samples_ = 0;
  uint32_t distance_near_ = 0;  // samples in the window under kNearNs
  uint32_t distance_far_ = 0;   // samples in the window at kFarNs or more
  uint32_t windows_near_ = 0;
  uint32_t windows_far_ = 0;
  uint64_t full_ = 0;
  bool near_ = false;
  bool prefetchw_;
};

struct Record {
  uint16_t kind;
  uint16_t aux;
  wire::ByteSpan body;
};

// The consumer side.
class ChannelReader {
 public:
  ChannelReader(ChannelMemory mem, uint64_t start) : mem_(mem), head_(start), published_(start) {}

  // The next complete record, or nullopt. Pad records are skipped. The body stays valid (and
  // unchanged: the producer cannot reuse the space) until release(). Inline: returned through
  // memory, the record's fields were stored and read straight back on every frame.
  std::optional<Record> peek() {
    const RecordHeader& h = mem_.header_at(head_);
    if (h.tag.load(std::memory_order_acquire) != head_ + 1) return std::nullopt;
    tsan::wire_received();
    const uint64_t offset = head_ & (mem_.capacity() - 1);
    // The length comes from the other process: a record may not run past the end of the data
    // (a producer never writes one that does; a corrupt one is treated as a pad to the end).
    if (h.kind == kRecordPad || h.length > mem_.capacity() - offset - sizeof(RecordHeader)) return peek_after_pad();
    peeked_size_ = record_size(h.length);
    return Record{h.kind, h.aux, wire::ByteSpan(mem_.data() + offset + sizeof(RecordHeader), h.length)};
  }
  // Consumes the record returned by the last peek(). Inline, as peek(): a call on the way from
  // each frame to its completion (callgrind, 8-byte ping-pong: ~10 instructions of the path).
  void release() {
    SOFTIB_ASSERT(peeked_size_ != 0);
    head_ += peeked_size_;
    peeked_size_ = 0;
    if (head_ - published_ >= mem_.capacity() / 4) publish();
  }
  // Makes the space consumed so far visible to the producer.
  void publish() {
    if (published_ != head_) {
      mem_.control().head.store(head_, std::memory_order_release);
      published_ = head_;
    }
  }
  // True when a complete record waits. The reader's thread only (ShmLink::ready(), asked from
  // other threads, looks through its own copy of the position).
  bool ready() const {
    return mem_.header_at(head_).tag.load(std::memory_order_acquire) == head_ + 1;
  }
  uint64_t position() const { return head_; }
  const ChannelMemory& memory() const { return mem_; }

 private:
  std::optional<Record> peek_after_pad();  // peek() at a pad record: skips it, looks again

  ChannelMemory mem_;
  uint64_t head_;
  uint64_t published_;
  uint64_t peeked_size_ = 0;
};

}  // namespace softib::link
