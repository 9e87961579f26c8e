// Engine: the progress thread of one rc::Device in a process (brief §3: "each process runs a
// small engine ... so one-sided operations complete without the target application calling
// into the library").
//
// It takes frames from links (deliver(), any thread), and runs the device's receive and
// progress steps under the device lock. Polling is adaptive, because waking a sleeping thread
// costs tens of microseconds on these machines: after the last useful step the thread spins
// for `spin` (catching the next packet of a conversation at once), then sleeps on an eventfd
// until a frame or a post kicks it or the device's next timer is due. An idle engine makes no
// system calls and uses no CPU.
//
// Callers that post work call kick(); API calls may also run a step inline with
// try_progress() (a poll that finds its CQ empty, a post), which takes the device lock only
// if it is free.
//
// Thread: deliver(), kick(), try_progress() from any thread; the rest from the owner.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "rc/device.hpp"
#include "verbs/event_queue.hpp"

namespace softib::engine {

struct EngineOptions {
  Duration spin = std::chrono::microseconds(50);
};

struct EngineCounters {
  std::atomic<uint64_t> steps{0};     // device steps that did something
  std::atomic<uint64_t> sleeps{0};    // times the thread went to sleep
  std::atomic<uint64_t> wakeups{0};   // eventfd signals sent by kick()/deliver()
};

class Engine {
 public:
  static Result<std::unique_ptr<Engine>> create(rc::Device& device, EngineOptions options = {});
  ~Engine();  // stops the thread
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  void start();
  void stop();

  // A frame for this engine's device (copied; processed on the engine thread).
  void deliver(const rc::FrameAddr& from, wire::ByteSpan transport);
  // Work was posted: make sure a step runs soon.
  void kick();
  // One device step now, if nobody else is running one. Returns whether it ran.
  bool try_progress();

  const EngineCounters& counters() const { return counters_; }
  rc::Device& device() { return device_; }

 private:
  struct Frame {
    rc::FrameAddr from;
    std::vector<uint8_t> bytes;
  };
  Engine(rc::Device& device, EngineOptions options, verbs::EventFd wake);
  void run();
  bool step();  // REQUIRES: device lock held
  void wake();

  rc::Device& device_;
  EngineOptions options_;
  verbs::EventFd wake_;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> sleeping_{false};
  std::atomic<bool> pending_{false};
  std::mutex inbox_mu_;
  std::vector<Frame> inbox_;
  std::vector<Frame> work_;
  std::vector<std::vector<uint8_t>> spare_;
  EngineCounters counters_;
};

}  // namespace softib::engine
