// Memory regions (IBA 10.6): registration hands out an L_Key and, when remote access is
// granted, an R_Key; every data-path access names a key and is checked against the region's
// bounds, protection domain and access rights before a byte moves.
//
// Keys: bits 31:8 index the table slot, bits 7:0 are a generation that changes at every
// registration, re-registration and deregistration of the slot, so a stale key never matches
// (IBA 10.6.2.1: the consumer-owned key byte; softib owns all of it).
//
// Thread: one owner (the device's control lock serialises registration against the data
// path, which only reads).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/ids.hpp"
#include "base/result.hpp"

namespace softib::verbs {

class Pd {
 public:
  explicit Pd(uint32_t handle) : handle_(handle) {}
  uint32_t handle() const { return handle_; }

 private:
  uint32_t handle_;
};

struct Mr {
  const Pd* pd = nullptr;
  uint8_t* addr = nullptr;  // where the region lives in this process
  uint64_t length = 0;
  uint64_t iova = 0;        // the address remote peers and SGEs use for addr (== addr unless iova registration)
  uint32_t access = 0;      // verbs::access flags
  LKey lkey{};
  RKey rkey{};              // 0 when no remote access was granted
};

// Why an access was refused. The transport maps each to a completion status or a NAK.
enum class MemFault : uint8_t {
  kNone,
  kBadKey,        // no region has this key (or the key's generation is stale)
  kPdMismatch,    // the region belongs to another protection domain than the QP
  kOutOfBounds,   // [va, va + len) leaves the region
  kNoAccess,      // the region does not grant the access
};

class MrTable {
 public:
  // libibverbs ibv_reg_mr: EINVAL for remote write or atomic without local write (IBA
  // 10.6.3.1), for an empty region or unknown flags; ENOMEM when max_mr regions exist.
  Result<const Mr*> reg(const Pd* pd, void* addr, uint64_t length, uint64_t iova, uint32_t access);
  // ibv_rereg_mr with IBV_REREG_MR_CHANGE_{TRANSLATION,PD,ACCESS}: new keys.
  Result<const Mr*> rereg(LKey lkey, const Pd* pd, void* addr, uint64_t length, uint64_t iova, uint32_t access);
  Status dereg(LKey lkey);

  void set_limit(uint32_t max_mr) { limit_ = max_mr; }
  size_t size() const { return live_; }

  const Mr* find_lkey(LKey k) const;
  const Mr* find_rkey(RKey k) const;

  // Resolves [va, va + len) of a local SGE for the given access (0 = read only,
  // access::kLocalWrite for data written into it). On success `*out` points at va's byte.
  MemFault resolve_local(LKey k, const Pd* pd, uint64_t va, uint64_t len, uint32_t need, uint8_t** out) const;
  // The same for a remote access through an R_Key (need: kRemoteWrite, kRemoteRead, kRemoteAtomic).
  MemFault resolve_remote(RKey k, const Pd* pd, uint64_t va, uint64_t len, uint32_t need, uint8_t** out) const;

 private:
  struct Slot {
    Mr mr;
    uint8_t generation = 0;
    bool live = false;
  };
  static MemFault check(const Mr& mr, const Pd* pd, uint64_t va, uint64_t len, uint32_t need, uint8_t** out);
  Result<const Mr*> fill(Slot& slot, uint32_t index, const Pd* pd, void* addr, uint64_t length, uint64_t iova,
                         uint32_t access);

  // Each slot on its own: reg() and rereg() hand out pointers into the slots, which the
  // callers (provider::Context, the drop-in ibv_mr, the native MemoryRegion) keep until
  // dereg, so adding a slot must not move the others. Not a deque, which kept them in place
  // too: every SGE and R_Key lookup indexes the table, and a deque's index costs ~30
  // instructions against a vector's one load.
  std::vector<std::unique_ptr<Slot>> slots_;
  std::vector<uint32_t> free_;
  size_t live_ = 0;
  uint32_t limit_ = 1u << 20;
};

// The lookups every SGE and R_Key of the data path makes: inline, so that a scatter or a
// gather does not pay two calls per SGE (they were ~45 of a 64-byte SEND's ~680 receive
// instructions). Always: with the fast paths' call sites GCC had stopped inlining
// resolve_local, and a 64-byte SEND's lookup cost 48 instructions instead of ~29.
[[gnu::always_inline]] inline const Mr* MrTable::find_lkey(LKey k) const {
  const uint32_t i = k.index();
  if (i == 0 || i >= slots_.size()) return nullptr;
  const Slot& s = *slots_[i];
  return s.live && s.mr.lkey == k ? &s.mr : nullptr;
}

[[gnu::always_inline]] inline const Mr* MrTable::find_rkey(RKey k) const {
  const uint32_t i = k.index();
  if (i == 0 || i >= slots_.size()) return nullptr;
  const Slot& s = *slots_[i];
  return s.live && s.mr.rkey.value() != 0 && s.mr.rkey == k ? &s.mr : nullptr;
}

[[gnu::always_inline]] inline MemFault MrTable::check(const Mr& mr, const Pd* pd, uint64_t va, uint64_t len, uint32_t need, uint8_t** out) {
  if (mr.pd != pd) return MemFault::kPdMismatch;
  if ((mr.access & need) != need) return MemFault::kNoAccess;
  // Zero-length accesses carry no address (IBA 9.4.1.1: a zero-length RDMA may name any va).
  if (len == 0) {
    *out = nullptr;
    return MemFault::kNone;
  }
  if (va < mr.iova || va - mr.iova > mr.length || len > mr.length - (va - mr.iova)) return MemFault::kOutOfBounds;
  *out = mr.addr + (va - mr.iova);
  return MemFault::kNone;
}

[[gnu::always_inline]] inline MemFault MrTable::resolve_local(LKey k, const Pd* pd, uint64_t va, uint64_t len, uint32_t need,
                                       uint8_t** out) const {
  const Mr* mr = find_lkey(k);
  if (mr == nullptr) return MemFault::kBadKey;
  return check(*mr, pd, va, len, need, out);
}

[[gnu::always_inline]] inline MemFault MrTable::resolve_remote(RKey k, const Pd* pd, uint64_t va, uint64_t len, uint32_t need,
                                        uint8_t** out) const {
  const Mr* mr = find_rkey(k);
  if (mr == nullptr) return MemFault::kBadKey;
  return check(*mr, pd, va, len, need, out);
}

}  // namespace softib::verbs
