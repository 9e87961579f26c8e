#include "verbs/mr.hpp"

#include <fmt/format.h>

#include "verbs/qp_attr.hpp"

namespace softib::verbs {

namespace {

constexpr uint32_t kKnownAccess = access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead |
                                  access::kRemoteAtomic | access::kMwBind | access::kZeroBased |
                                  access::kRelaxedOrdering;

Status check_flags(uint32_t flags, uint64_t length) {
  if ((flags & ~kKnownAccess) != 0)
    return Status(Code::kInvalidArgument, fmt::format("reg_mr: unsupported access flags {:#x}", flags & ~kKnownAccess));
  if ((flags & (access::kRemoteWrite | access::kRemoteAtomic)) != 0 && (flags & access::kLocalWrite) == 0)
    return Status(Code::kInvalidArgument, "reg_mr: remote write or atomic access needs local write (IBA 10.6.3.1)");
  if (length == 0) return Status(Code::kInvalidArgument, "reg_mr: empty region");
  return Status();
}

}  // namespace

Result<const Mr*> MrTable::fill(Slot& slot, uint32_t index, const Pd* pd, void* addr, uint64_t length,
                                uint64_t iova, uint32_t access) {
  ++slot.generation;
  const uint32_t key = (index << 8) | slot.generation;
  slot.mr = Mr{pd, static_cast<uint8_t*>(addr), length, iova, access, LKey(key),
               RKey((access & (access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic)) ? key : 0)};
  slot.live = true;
  return &slot.mr;
}

Result<const Mr*> MrTable::reg(const Pd* pd, void* addr, uint64_t length, uint64_t iova, uint32_t access) {
  if (Status s = check_flags(access, length); !s.ok()) return s;
  if (pd == nullptr) return Status(Code::kInvalidArgument, "reg_mr: no protection domain");
  if (live_ >= limit_) return Status(Code::kResourceExhausted, "reg_mr: max_mr regions are registered");
  uint32_t index;
  if (!free_.empty()) {
    index = free_.back();
    free_.pop_back();
  } else {
    // Index 0 is never used, so that key 0 is never valid.
    if (slots_.empty()) slots_.push_back(std::make_unique<Slot>());
    if (slots_.size() > 0xFFFFFF) return Status(Code::kResourceExhausted, "reg_mr: key space exhausted");
    index = static_cast<uint32_t>(slots_.size());
    slots_.push_back(std::make_unique<Slot>());
  }
  ++live_;
  return fill(*slots_[index], index, pd, addr, length, iova, access);
}

Result<const Mr*> MrTable::rereg(LKey lkey, const Pd* pd, void* addr, uint64_t length, uint64_t iova,
                                 uint32_t access) {
  if (find_lkey(lkey) == nullptr) return Status(Code::kInvalidArgument, "rereg_mr: no such region");
  if (Status s = check_flags(access, length); !s.ok()) return s;
  if (pd == nullptr) return Status(Code::kInvalidArgument, "rereg_mr: no protection domain");
  return fill(*slots_[lkey.index()], lkey.index(), pd, addr, length, iova, access);
}

Status MrTable::dereg(LKey lkey) {
  if (find_lkey(lkey) == nullptr) return Status(Code::kInvalidArgument, "dereg_mr: no such region");
  Slot& slot = *slots_[lkey.index()];
  slot.live = false;
  ++slot.generation;
  free_.push_back(lkey.index());
  --live_;
  return Status();
}

}  // namespace softib::verbs
