// The SA's RMPP sender (IBA 13.6.5): sends the DATA segments of GetTable answers in a
// window the receiver opens with ACKs, retransmits the unacknowledged window when no ACK
// comes in time, and ends a transfer on the final ACK, on STOP or ABORT from the receiver,
// or by sending ABORT itself (retries exhausted, an ACK that breaks the rules).
//
// Window rules (those of the Linux kernel's sender, which OpenSM's answers go through): the
// first window is one segment; an ACK carries the highest segment received in order
// (SegmentNumber) and the last segment the receiver will accept (NewWindowLast). An ACK
// with NewWindowLast < SegmentNumber is answered ABORT(NewWindowLastTooSmall), one for a
// segment beyond the window or the transfer ABORT(SegmentNumberTooBig); an ACK older than
// the last one (smaller window or segment) is ignored.
//
// Thread: the SM's thread only.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "base/clock.hpp"
#include "base/counters.hpp"
#include "base/ids.hpp"
#include "mad/sa_mad.hpp"
#include "sm/mad_port.hpp"
#include "sm/sa.hpp"

namespace softib::sm {

class RmppSender {
 public:
  RmppSender(MadPort& port, CounterSet<SaCounter>& counters, SaOptions options)
      : port_(port), counters_(counters), options_(options) {}

  // Starts sending `segments` (DATA MADs as mad::sa_segments makes them, at least one) to
  // the requester: LID `to`, QP `qp`, transaction `tid` (the request's). A transfer to the
  // same requester and TID already under way is replaced (the requester asked again).
  // Returns false when max_transfers are under way (nothing is sent).
  bool start(Lid to, Qpn qp, std::vector<mad::SaMad> segments, TimePoint now);

  // An ACK, STOP or ABORT from `from` (RMPP active, type not DATA). Returns false when it
  // belongs to no transfer of ours.
  bool on_control(Lid from, const mad::SaMad& m, TimePoint now);

  // Retransmits or abandons the transfers whose ACK is overdue.
  void poll(TimePoint now);
  std::optional<TimePoint> next_deadline() const;
  size_t in_progress() const { return transfers_.size(); }

 private:
  struct Transfer {
    Qpn qp;
    std::vector<mad::SaMad> segments;
    uint32_t last_ack = 0;     // highest segment acknowledged
    uint32_t window_last = 1;  // the receiver accepts segments up to this one
    uint32_t sent = 0;         // highest segment sent
    uint32_t retries_left = 0;
    TimePoint deadline;
  };
  using Key = std::pair<uint16_t, uint64_t>;  // requester LID, TID

  // Sends segments first..min(window_last, n) and rearms the ACK timer.
  void send_window(Lid to, Transfer& t, uint32_t first, TimePoint now);
  void send_abort(Lid to, const Transfer& t, mad::RmppStatus status);
  void send(Lid to, Qpn qp, const mad::SaMad& m);

  MadPort& port_;
  CounterSet<SaCounter>& counters_;
  SaOptions options_;
  std::map<Key, Transfer> transfers_;
};

}  // namespace softib::sm
