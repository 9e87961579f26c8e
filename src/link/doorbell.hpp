// Doorbell: the eventfd an engine sleeps on and that peers (in this process or another one,
// which received the fd through softibd) ring to wake it. Non-blocking and not in semaphore
// mode: one drain() clears any number of rings.
//
// Thread: ring() from any thread or process; drain() by the sleeping engine.
#pragma once

#include "base/result.hpp"
#include "base/unique_fd.hpp"

namespace softib::link {

class Doorbell {
 public:
  static Result<Doorbell> create();
  // Takes ownership of an eventfd received from a peer.
  static Doorbell adopt(int fd) { return Doorbell(UniqueFd(fd)); }
  Doorbell() = default;

  int fd() const { return fd_.get(); }
  bool valid() const { return fd_.valid(); }
  void ring() const;
  void drain() const;

 private:
  explicit Doorbell(UniqueFd fd) : fd_(std::move(fd)) {}
  UniqueFd fd_;
};

}  // namespace softib::link
