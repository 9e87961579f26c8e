#include "tools/mad_window.hpp"

#include <algorithm>
#include <unordered_map>

#include <fmt/format.h>

namespace softib::tools {

namespace {

uint64_t tid_of(const MadBytes& m) {
  uint64_t v = 0;
  for (size_t i = 8; i < 16; ++i) v = (v << 8) | m[i];
  return v;
}

struct Slot {
  uint64_t tid = 0;
  int tries = 0;
  TimePoint deadline{};
  bool done = false;
};

}  // namespace

Result<std::vector<Result<MadBytes>>> query_windowed(MadRpc& rpc, std::span<const MadRequest> requests,
                                                     size_t window) {
  window = std::max<size_t>(window, 1);
  std::vector<Result<MadBytes>> out(requests.size(), Status(Code::kTimeout, "not sent"));
  std::vector<Slot> slots(requests.size());
  std::unordered_map<uint64_t, size_t> by_tid;
  by_tid.reserve(window * 2);
  const SteadyClock clock;
  size_t head = 0, next = 0, in_flight = 0;
  while (head < requests.size()) {
    // Refill the window in one message.
    if (next < requests.size() && in_flight < window) {
      const size_t n = std::min(window - in_flight, requests.size() - next);
      auto tids = rpc.send_requests(requests.subspan(next, n));
      if (!tids) return Err{tids.error()};
      const TimePoint deadline = clock.now() + rpc.options().timeout;
      for (size_t i = 0; i < n; ++i) {
        slots[next + i].tid = (*tids)[i];
        slots[next + i].deadline = deadline;
        by_tid.emplace((*tids)[i], next + i);
      }
      next += n;
      in_flight += n;
    }
    while (head < next && slots[head].done) ++head;
    if (head >= requests.size()) break;
    // The oldest query still waiting has the earliest first deadline; a retried one's later
    // deadline only delays the check of the others.
    auto got = rpc.next_response(slots[head].deadline);
    if (!got) return Err{got.error()};
    if (*got) {
      auto it = by_tid.find(tid_of(**got));
      if (it == by_tid.end()) continue;  // a late answer to a query already answered
      out[it->second] = **got;
      slots[it->second].done = true;
      by_tid.erase(it);
      --in_flight;
      continue;
    }
    const TimePoint now = clock.now();
    for (size_t i = head; i < next; ++i) {
      Slot& s = slots[i];
      if (s.done || s.deadline > now) continue;
      if (s.tries < rpc.options().retries) {
        ++s.tries;
        s.deadline = now + rpc.options().timeout;
        if (auto r = rpc.resend(requests[i], s.tid); !r) return Err{r.error()};
        continue;
      }
      s.done = true;
      by_tid.erase(s.tid);
      --in_flight;
      const MadRequest& r = requests[i];
      out[i] = Status(Code::kTimeout, fmt::format("attribute 0x{:x} to {}: timed out", r.attribute_id, r.to.to_string()));
    }
  }
  return out;
}

}  // namespace softib::tools
