#include "sm/transactions.hpp"

#include <bit>

#include "wire/bytes.hpp"

namespace softib::sm {

Transactions::Transactions(MadPort& port, const Clock& clock, Duration timeout, uint32_t retries, size_t window)
    : port_(port),
      clock_(clock),
      timeout_(timeout),
      retries_(retries),
      window_(window ? window : 1),
      // The high half of the TID tells this SM's requests from another instance's.
      session_((static_cast<uint64_t>(clock.now().time_since_epoch().count()) & 0x7FFFFFFF) | 0x1),
      slots_(std::bit_ceil(std::max<size_t>(64, 4 * (window ? window : 1)))) {}

Transactions::Slot* Transactions::find(uint64_t tid) {
  Slot& s = slots_[tid & (slots_.size() - 1)];
  return s.tid == tid && tid != 0 ? &s : nullptr;
}

void Transactions::submit(const Mad& request, Context context) {
  if (in_flight_ >= window_) {
    waiting_.push(Waiting{request, context});
    return;
  }
  launch(request, context);
}

void Transactions::launch(Mad request, Context context) {
  // A free slot: outstanding requests never exceed the window, a quarter of the table.
  Slot* slot = nullptr;
  uint64_t tid = 0;
  do {
    ++counter_;
    tid = session_ << 32 | counter_;
    slot = &slots_[tid & (slots_.size() - 1)];
  } while (slot->tid != 0 || counter_ == 0);
  wire::store_be64(&request.bytes[8], tid);
  slot->tid = tid;
  slot->request = request;
  slot->context = context;
  slot->retries_left = retries_;
  ++in_flight_;
  transmit(*slot);
}

void Transactions::transmit(Slot& slot) {
  slot.deadline = clock_.now() + timeout_;
  deadlines_.push({slot.deadline, slot.tid});
  ++sent_;
  (void)port_.send(slot.request);
}

void Transactions::add_source(Source source) {
  sources_.push_back(std::move(source));
  fill_window();
}

void Transactions::cancel_pending() {
  sources_.clear();
  while (!waiting_.empty()) (void)waiting_.pop();
}

size_t Transactions::cancel_if(const std::function<bool(const Context&)>& match) {
  size_t dropped = 0;
  for (Slot& s : slots_)
    if (s.tid != 0 && match(s.context)) {
      s.tid = 0;
      --in_flight_;
      ++dropped;
    }
  RingQueue<Waiting> keep;
  while (!waiting_.empty()) {
    Waiting w = waiting_.pop();
    if (match(w.context)) {
      ++dropped;
    } else {
      keep.push(std::move(w));
    }
  }
  waiting_ = std::move(keep);
  prune();
  fill_window();
  return dropped;
}

void Transactions::fill_window() {
  while (in_flight_ < window_) {
    if (!waiting_.empty()) {
      Waiting w = waiting_.pop();
      launch(w.request, w.context);
      continue;
    }
    if (sources_.empty() || in_source_) return;
    in_source_ = true;
    const bool more = sources_.front()();
    in_source_ = false;
    if (!more) sources_.pop_front();
  }
}

std::optional<Transactions::Context> Transactions::complete(uint64_t tid) {
  Slot* s = find(tid);
  if (!s) return std::nullopt;
  const Context c = s->context;
  s->tid = 0;
  --in_flight_;
  prune();
  fill_window();
  return c;
}

std::vector<Transactions::Failed> Transactions::expire(TimePoint now) {
  std::vector<Failed> failed;
  while (!deadlines_.empty() && deadlines_.front().first <= now) {
    const auto [deadline, tid] = deadlines_.pop();
    Slot* s = find(tid);
    if (!s || s->deadline != deadline) continue;  // answered or resent
    if (s->retries_left > 0) {
      --s->retries_left;
      ++retried_;
      transmit(*s);
      continue;
    }
    ++timed_out_;
    failed.push_back(Failed{s->context, s->request});
    s->tid = 0;
    --in_flight_;
  }
  fill_window();
  return failed;
}

void Transactions::prune() {
  while (!deadlines_.empty()) {
    const auto& [deadline, tid] = deadlines_.front();
    const Slot* s = find(tid);
    if (s && s->deadline == deadline) return;
    (void)deadlines_.pop();
  }
}

std::optional<TimePoint> Transactions::next_deadline() {
  prune();
  if (deadlines_.empty()) return std::nullopt;
  return deadlines_.front().first;
}

}  // namespace softib::sm
