#include "engine/engine.hpp"

#include <poll.h>

#include <cerrno>

namespace softib::engine {

Result<std::unique_ptr<Engine>> Engine::create(rc::Device& device, EngineOptions options) {
  auto fd = verbs::EventFd::create();
  if (!fd) return fd.error();
  return std::unique_ptr<Engine>(new Engine(device, options, std::move(*fd)));
}

Engine::Engine(rc::Device& device, EngineOptions options, verbs::EventFd wake)
    : device_(device), options_(options), wake_(std::move(wake)) {}

Engine::~Engine() { stop(); }

void Engine::start() {
  if (thread_.joinable()) return;
  stop_ = false;
  thread_ = std::thread([this] { run(); });
}

void Engine::stop() {
  if (!thread_.joinable()) return;
  stop_ = true;
  wake_.signal();
  thread_.join();
}

void Engine::wake() {
  // Dekker with run(): we publish pending_ then read sleeping_; the engine publishes
  // sleeping_ then reads pending_ (both seq_cst), so one of us sees the other.
  if (sleeping_.load()) {
    counters_.wakeups.fetch_add(1, std::memory_order_relaxed);
    wake_.signal();
  }
}

void Engine::deliver(const rc::FrameAddr& from, wire::ByteSpan transport) {
  {
    std::lock_guard lock(inbox_mu_);
    std::vector<uint8_t> bytes;
    if (!spare_.empty()) {
      bytes = std::move(spare_.back());
      spare_.pop_back();
    }
    bytes.assign(transport.begin(), transport.end());
    inbox_.push_back(Frame{from, std::move(bytes)});
  }
  pending_.store(true);
  wake();
}

void Engine::kick() {
  pending_.store(true);
  wake();
}

bool Engine::step() {
  pending_.store(false);
  {
    std::lock_guard lock(inbox_mu_);
    work_.swap(inbox_);
  }
  bool did = !work_.empty();
  for (Frame& f : work_) device_.receive(f.from, f.bytes);
  if (!work_.empty()) {
    std::lock_guard lock(inbox_mu_);
    for (Frame& f : work_) spare_.push_back(std::move(f.bytes));
  }
  work_.clear();
  did |= device_.progress();
  if (did) counters_.steps.fetch_add(1, std::memory_order_relaxed);
  return did;
}

bool Engine::try_progress() {
  std::unique_lock lock(device_.lock(), std::try_to_lock);
  if (!lock.owns_lock()) return false;
  step();
  return true;
}

void Engine::run() {
  auto idle_since = std::chrono::steady_clock::now();
  while (!stop_.load()) {
    bool did;
    std::optional<TimePoint> deadline;
    {
      std::lock_guard lock(device_.lock());
      did = step();
      deadline = device_.next_deadline();
    }
    const auto now = std::chrono::steady_clock::now();
    if (did || pending_.load()) {
      idle_since = now;
      continue;
    }
    if (now - idle_since < options_.spin) continue;

    // Sleep until kicked or the next timer is due.
    sleeping_.store(true);
    if (pending_.load() || stop_.load()) {
      sleeping_.store(false);
      continue;
    }
    int timeout_ms = -1;
    if (deadline) {
      const Duration left = *deadline - SteadyClock::instance().now();
      timeout_ms = left.count() <= 0 ? 0 : static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
    }
    counters_.sleeps.fetch_add(1, std::memory_order_relaxed);
    pollfd p{wake_.fd(), POLLIN, 0};
    const int n = ::poll(&p, 1, timeout_ms);
    if (n > 0) {
      // Semaphore-mode eventfd: drain every signal so the next sleep starts clean.
      while (::poll(&p, 1, 0) > 0 && wake_.wait()) {
      }
    }
    sleeping_.store(false);
    idle_since = std::chrono::steady_clock::now();
  }
}

}  // namespace softib::engine
