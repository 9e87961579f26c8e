#include "sm/lid_manager.hpp"

#include <array>
#include <bit>
#include <bitset>
#include <memory>
#include <unordered_set>

#include <fmt/format.h>

#include "base/format.hpp"

namespace softib::sm {

namespace {

constexpr uint32_t kLidSpace = Lid::kMaxUnicast + 1;

class LidSpace {
 public:
  bool free(uint32_t base, uint32_t count) const {
    if (base == 0 || base + count > kLidSpace) return false;
    for (uint32_t l = base; l < base + count; ++l)
      if (used_->test(l)) return false;
    return true;
  }
  void take(uint32_t base, uint32_t count) {
    for (uint32_t l = base; l < base + count; ++l) used_->set(l);
  }
  // The lowest free aligned range, skipping `reserved` unless nothing else is left. LIDs are
  // only ever taken during one assignment, so the first pass resumes where it last stopped.
  std::optional<uint32_t> find(uint32_t count, const LidSpace& reserved) {
    uint32_t& hint = hint_[static_cast<size_t>(std::countr_zero(count))];
    for (uint32_t base = std::max(hint, count); base + count <= kLidSpace; base += count) {
      if (free(base, count) && reserved.free(base, count)) {
        hint = base;
        return base;
      }
    }
    for (uint32_t base = count; base + count <= kLidSpace; base += count)
      if (free(base, count)) return base;
    return std::nullopt;
  }

 private:
  std::unique_ptr<std::bitset<kLidSpace>> used_ = std::make_unique<std::bitset<kLidSpace>>();
  std::array<uint32_t, 8> hint_{};
};

bool aligned(uint32_t base, uint32_t count) { return base != 0 && base % count == 0; }

}  // namespace

Result<LidAssignment> assign_lids(std::span<const LidRequest> requests, Guid2Lid& persisted, bool reassign_lids) {
  LidAssignment out;
  out.ranges.resize(requests.size());
  std::vector<bool> done(requests.size(), false);
  LidSpace used;
  // LIDs guid2lid keeps for ports that are not here now: avoided while anything else is free.
  LidSpace reserved;
  std::unordered_set<uint64_t> present;
  for (const LidRequest& r : requests) present.insert(r.port_guid.value());
  for (const auto& [guid, range] : persisted.entries())
    if (!present.contains(guid.value())) reserved.take(range.min.value(), range.max.value() - range.min.value() + 1u);

  const auto give = [&](size_t i, uint32_t base, uint32_t count) {
    used.take(base, count);
    out.ranges[i] = LidRange{Lid(static_cast<uint16_t>(base)), Lid(static_cast<uint16_t>(base + count - 1))};
    done[i] = true;
  };
  // 1. Remembered ranges.
  for (size_t i = 0; i < requests.size(); ++i) {
    const uint32_t count = 1u << requests[i].lmc;
    auto r = persisted.get(requests[i].port_guid);
    if (!r) continue;
    const uint32_t base = r->min.value();
    if (r->max.value() - base + 1u != count || !aligned(base, count) || !used.free(base, count)) continue;
    give(i, base, count);
    ++out.from_guid2lid;
  }
  // 2. LIDs the ports already carry.
  if (!reassign_lids) {
    for (size_t i = 0; i < requests.size(); ++i) {
      if (done[i]) continue;
      const uint32_t count = 1u << requests[i].lmc;
      const uint32_t base = requests[i].current.value() & ~(count - 1);
      if (!requests[i].current.is_unicast() || !aligned(base, count) || !used.free(base, count)) continue;
      give(i, base, count);
      ++out.kept;
    }
  }
  // 3. Fresh ranges.
  for (size_t i = 0; i < requests.size(); ++i) {
    if (done[i]) continue;
    const uint32_t count = 1u << requests[i].lmc;
    auto base = used.find(count, reserved);
    if (!base)
      return Status(Code::kResourceExhausted,
                    fmt::format("no free LID range of {} for port {} ({} ports need LIDs)", count,
                                requests[i].port_guid, requests.size()));
    if (requests[i].current.value() != 0) ++out.moved;
    else ++out.fresh;
    give(i, *base, count);
  }
  for (size_t i = 0; i < requests.size(); ++i) persisted.set(requests[i].port_guid, out.ranges[i]);
  return out;
}

}  // namespace softib::sm
