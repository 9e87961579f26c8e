// Outstanding MAD requests of the SM: transaction IDs, a window of requests on the wire
// (OpenSM's max_wire_smps), timeouts with retries, and what each response means to the SM
// (a small Context instead of a callback, so that millions of requests cost no allocation).
//
// A request gets its TID when it goes on the wire; the TID's low bits index a slot table of
// the requests in flight, so matching a response is an array access.
//
// Thread: the SM's thread only.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "base/clock.hpp"
#include "base/ring_queue.hpp"
#include "sm/mad_port.hpp"

namespace softib::sm {

class Transactions {
 public:
  struct Context {
    uint8_t op = 0;      // which step asked (the SM's own enum)
    uint32_t node = 0;   // subnet node index
    uint16_t port = 0;   // port number, or a block number
    uint32_t extra = 0;
  };
  struct Failed {
    Context context;
    Mad request;
  };

  Transactions(MadPort& port, const Clock& clock, Duration timeout, uint32_t retries, size_t window);

  // Sends `request` (its TID field is overwritten) now if the window allows, else when a slot
  // frees up.
  void submit(const Mad& request, Context context);

  // A producer of requests, asked for more whenever the window has room and nothing waits:
  // it submits one or more requests and returns true, or returns false when it has none left
  // (it is then dropped). Sources run one after another in the order added. A pass over
  // a million LFT blocks so holds a cursor, not a million queued MADs.
  using Source = std::function<bool()>;
  void add_source(Source source);
  // Drops every source and every request not yet on the wire (a sweep abandoned).
  void cancel_pending();
  // Forgets the requests (on the wire or waiting) whose context matches: a late response is
  // then ignored, and no timeout or retry follows. Returns how many were dropped.
  size_t cancel_if(const std::function<bool(const Context&)>& match);
  // The response with this TID arrived: its context, or nullopt for a TID we do not wait for
  // (a duplicate, or a response after the last retry timed out).
  std::optional<Context> complete(uint64_t tid);
  // Resends requests whose timeout passed; returns those that ran out of retries.
  std::vector<Failed> expire(TimePoint now);

  size_t outstanding() const { return in_flight_; }
  size_t queued() const { return waiting_.size(); }
  bool idle() const { return in_flight_ == 0 && waiting_.empty() && sources_.empty(); }
  // The earliest pending timeout. Drops answered entries from the front as it goes, so it
  // costs O(1) amortised.
  std::optional<TimePoint> next_deadline();
  uint64_t sent() const { return sent_; }          // including retries
  uint64_t retried() const { return retried_; }
  uint64_t timed_out() const { return timed_out_; }

 private:
  struct Slot {
    uint64_t tid = 0;  // 0: free
    Mad request;
    Context context;
    TimePoint deadline;
    uint32_t retries_left = 0;
  };
  struct Waiting {
    Mad request;
    Context context;
  };
  void launch(Mad request, Context context);
  void transmit(Slot& slot);
  void fill_window();
  void prune();
  Slot* find(uint64_t tid);

  MadPort& port_;
  const Clock& clock_;
  Duration timeout_;
  uint32_t retries_;
  size_t window_;
  uint64_t session_;
  uint32_t counter_ = 0;
  std::vector<Slot> slots_;  // power-of-two size, several times the window
  size_t in_flight_ = 0;
  RingQueue<Waiting> waiting_;
  std::deque<Source> sources_;
  bool in_source_ = false;  // a source is running (its submits must not re-enter it)
  RingQueue<std::pair<TimePoint, uint64_t>> deadlines_;  // transmissions in time order
  uint64_t sent_ = 0, retried_ = 0, timed_out_ = 0;
};

}  // namespace softib::sm
