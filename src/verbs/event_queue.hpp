// EventQueue<T>: events handed from the transport to a consumer that may sleep on a file
// descriptor, as libibverbs' completion channels (ibv_get_cq_event) and the async event fd
// (ibv_get_async_event) do. The fd is an eventfd in semaphore mode: it is readable while
// events are queued, poll/epoll/select work on it, and the consumer may make it non-blocking.
//
// Thread: any thread may push; any thread may pop (a mutex guards the queue).
#pragma once

#include <deque>
#include <mutex>
#include <optional>

#include "base/result.hpp"

namespace softib::verbs {

class EventFd {
 public:
  static Result<EventFd> create();
  EventFd(EventFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  EventFd& operator=(EventFd&& o) noexcept;
  EventFd(const EventFd&) = delete;
  EventFd& operator=(const EventFd&) = delete;
  ~EventFd();

  int fd() const { return fd_; }
  void signal() const;      // +1
  // -1; blocks while zero unless the fd is non-blocking. false: would block (EAGAIN) or EINTR.
  bool wait() const;

 private:
  explicit EventFd(int fd) : fd_(fd) {}
  int fd_ = -1;
};

template <class T>
class EventQueue {
 public:
  explicit EventQueue(EventFd fd) : fd_(std::move(fd)) {}
  int fd() const { return fd_.fd(); }

  void push(T event) {
    {
      std::lock_guard lock(mu_);
      events_.push_back(std::move(event));
    }
    fd_.signal();
  }
  // push() whose fd signal waits for signal_owed(): a device step's completion events, whose
  // signals go out once the step has let go of the device lock (provider::Context). true: the
  // first event owed since the last signal_owed().
  bool push_quiet(T event) {
    std::lock_guard lock(mu_);
    events_.push_back(std::move(event));
    return owed_++ == 0;
  }
  void signal_owed() {
    size_t n = 0;
    {
      std::lock_guard lock(mu_);
      n = owed_;
      owed_ = 0;
    }
    for (; n != 0; --n) fd_.signal();
  }
  // Blocks (unless the fd is non-blocking) until an event is queued. nullopt: EAGAIN/EINTR,
  // left in errno.
  std::optional<T> pop() {
    if (!fd_.wait()) return std::nullopt;
    std::lock_guard lock(mu_);
    SOFTIB_ASSERT(!events_.empty());
    T e = std::move(events_.front());
    events_.pop_front();
    return e;
  }
  // Replaces every queued event equal to `from` by `to` (an object going away leaves a
  // placeholder the consumer skips: the fd's count stays equal to the queue's length).
  void replace(const T& from, const T& to) {
    std::lock_guard lock(mu_);
    for (T& e : events_)
      if (e == from) e = to;
  }
  size_t pending() const {
    std::lock_guard lock(mu_);
    return events_.size();
  }

 private:
  EventFd fd_;
  mutable std::mutex mu_;
  std::deque<T> events_;
  size_t owed_ = 0;  // events queued by push_quiet() and not yet signalled
};

}  // namespace softib::verbs
