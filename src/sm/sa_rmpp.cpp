#include "sm/sa_rmpp.hpp"

#include <algorithm>

#include "base/log.hpp"

namespace softib::sm {

void RmppSender::send(Lid to, Qpn qp, const mad::SaMad& m) {
  Mad out;
  mad::encode(m, wire::MutByteSpan(out.bytes));
  out.dlid = to;
  out.remote_qp = qp;
  (void)port_.send(out);
}

void RmppSender::send_window(Lid to, Transfer& t, uint32_t first, TimePoint now) {
  const uint32_t n = static_cast<uint32_t>(t.segments.size());
  const uint32_t last = std::min(t.window_last, n);
  for (uint32_t s = first; s <= last; ++s) {
    if (s <= t.sent) counters_.inc(SaCounter::kRmppRetransmitted);
    send(to, t.qp, t.segments[s - 1]);
  }
  t.sent = std::max(t.sent, last);
  t.deadline = now + options_.rmpp_ack_timeout;
}

void RmppSender::send_abort(Lid to, const Transfer& t, mad::RmppStatus status) {
  mad::SaMad abort = t.segments.front();
  abort.rmpp = mad::RmppHeader{};
  abort.rmpp.version = mad::kRmppVersion;
  abort.rmpp.type = mad::RmppType::kAbort;
  abort.rmpp.resp_time = mad::kNoRespTime;
  abort.rmpp.flags = mad::kRmppActive;
  abort.rmpp.status = status;
  abort.data.fill(0);
  send(to, t.qp, abort);
  counters_.inc(SaCounter::kRmppAbortedBySa);
}

bool RmppSender::start(Lid to, Qpn qp, std::vector<mad::SaMad> segments, TimePoint now) {
  SOFTIB_ASSERT(!segments.empty());
  const Key key{to.value(), segments.front().header.transaction_id};
  // The requester asked again (its own timeout): the old transfer is replaced, silently.
  // An ABORT with this TID would fail the retried request at the requester's kernel.
  transfers_.erase(key);
  if (transfers_.size() >= options_.max_transfers) return false;
  Transfer& t = transfers_[key];
  t.qp = qp;
  t.segments = std::move(segments);
  t.retries_left = options_.rmpp_retries;
  counters_.inc(SaCounter::kRmppTransfers);
  send_window(to, t, 1, now);
  return true;
}

bool RmppSender::on_control(Lid from, const mad::SaMad& m, TimePoint now) {
  const auto it = transfers_.find(Key{from.value(), m.header.transaction_id});
  if (it == transfers_.end()) return false;
  Transfer& t = it->second;
  const uint32_t n = static_cast<uint32_t>(t.segments.size());
  switch (m.rmpp.type) {
    case mad::RmppType::kStop:
      counters_.inc(SaCounter::kRmppStoppedByPeer);
      transfers_.erase(it);
      return true;
    case mad::RmppType::kAbort:
      counters_.inc(SaCounter::kRmppAbortedByPeer);
      transfers_.erase(it);
      return true;
    case mad::RmppType::kAck:
      break;
    default:
      return false;  // DATA is not a control segment; the caller routes it elsewhere
  }
  const uint32_t segment = m.rmpp.segment_number();
  const uint32_t window_last = m.rmpp.new_window_last();
  if (window_last < segment) {
    send_abort(from, t, mad::RmppStatus::kNewWindowLastTooSmall);
    transfers_.erase(it);
    return true;
  }
  if (segment > n || segment > t.window_last) {
    send_abort(from, t, mad::RmppStatus::kSegmentNumberTooBig);
    transfers_.erase(it);
    return true;
  }
  if (window_last < t.window_last || segment < t.last_ack) return true;  // an old ACK
  const bool progress = segment > t.last_ack || window_last > t.window_last;
  if (segment > t.last_ack) {
    t.last_ack = segment;
    t.retries_left = options_.rmpp_retries;
  }
  t.window_last = window_last;
  if (t.last_ack == n) {
    counters_.inc(SaCounter::kRmppCompleted);
    transfers_.erase(it);
    return true;
  }
  // Send what the new window allows and has not been sent. A repeated ACK (no progress)
  // says the receiver lost the next segment: send that one again.
  const uint32_t first = std::max(t.sent, t.last_ack) + 1;
  if (first <= std::min(t.window_last, n)) {
    send_window(from, t, first, now);
  } else if (!progress) {
    counters_.inc(SaCounter::kRmppRetransmitted);
    send(from, t.qp, t.segments[t.last_ack]);
    t.deadline = now + options_.rmpp_ack_timeout;
  } else {
    t.deadline = now + options_.rmpp_ack_timeout;
  }
  return true;
}

void RmppSender::poll(TimePoint now) {
  for (auto it = transfers_.begin(); it != transfers_.end();) {
    Transfer& t = it->second;
    const Lid to(it->first.first);
    if (now < t.deadline) {
      ++it;
      continue;
    }
    if (t.retries_left == 0) {
      log(LogLevel::kDebug, "sa", "RMPP transfer to LID {} TID 0x{:x}: no ACK after {} retries; abort", to,
          it->first.second, options_.rmpp_retries);
      send_abort(to, t, mad::RmppStatus::kTooManyRetries);
      it = transfers_.erase(it);
      continue;
    }
    --t.retries_left;
    send_window(to, t, t.last_ack + 1, now);
    ++it;
  }
}

std::optional<TimePoint> RmppSender::next_deadline() const {
  std::optional<TimePoint> t;
  for (const auto& [key, transfer] : transfers_)
    if (!t || transfer.deadline < *t) t = transfer.deadline;
  return t;
}

}  // namespace softib::sm
