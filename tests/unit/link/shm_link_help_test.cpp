// ShmLink's shared copies (rc::CopyHelp): the receiver of a large burst by reference offers
// half of the copy back to the sending process, which writes it in when it polls. Offers taken,
// withdrawn, failed, and malformed ones from another process. The fixture's two endpoints, as
// in shm_link_test.cpp.
#include <gtest/gtest.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <initializer_list>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/log.hpp"
#include "unit/link/shm_link_fixture.hpp"

namespace softib::link {
namespace {

// Shared copies (rc::CopyHelp): the receiver of a large burst by reference offers its second
// half to the sending process and pulls the first; a sender that polls meanwhile writes its
// half in, else the receiver withdraws the offer and pulls that half too (here after a long
// patience, so that every offer is taken). Each side runs on a thread of its own (a posts and
// polls; b only polls), as two processes' engines would:
// WRITEs (a's bytes, b offers, a's polls write) and READs (b's bytes, a offers, b's thread
// writes). Every byte lands, and every offer is written by the sender.
TEST_F(ShmLinkTest, ACopyByReferenceIsSharedWithASenderThatPolls) {
  for_each_one_sided(1 << 20, 16 * 1024, [&](WrOpcode op, Side& sender, Side& receiver) {
    const bool write = op == WrOpcode::kRdmaWrite;
    sender.link.set_references(ShmLink::References::kAlways);
    sender.link.set_max_reference_burst_bytes(128 * 1024);  // halves of 64 KiB: over kHelpMinBytes
    // Each offer waits for the sender's thread (which may not be running when it is made) up
    // to a minute, far beyond any test's run: every offer is taken.
    receiver.link.set_help_patience(std::chrono::minutes(1));
    post(*a, op, 0, 64, b->addr(0));  // the receiver meets the sender, and says it may read it
    ASSERT_EQ(wait(*a).status, WcStatus::kSuccess);

    std::atomic<bool> stop{false};
    std::thread other([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        b->link.poll(b->device);
        b->device.progress();
      }
    });
    constexpr uint32_t kLen = 900001;
    for (size_t round = 0; round < 8; ++round) {
      for (size_t i = 0; i < kLen; ++i) sender.buffer[i] = static_cast<uint8_t>(i * (round + 3) + round);
      std::memset(receiver.buffer.data() + 100000, 0, kLen);
      post(*a, op, write ? 0 : 100000, kLen, b->addr(write ? 100000 : 0));
      WorkCompletion wc{};
      size_t steps = 0;
      for (; steps < 50'000'000 && a->cq->poll({&wc, 1}) == 0; ++steps) {
        a->link.poll(a->device);
        a->device.progress();
      }
      ASSERT_LT(steps, 50'000'000u) << "no completion";
      ASSERT_EQ(wc.status, WcStatus::kSuccess) << round;
      ASSERT_EQ(std::memcmp(sender.buffer.data(), receiver.buffer.data() + 100000, kLen), 0) << round;
    }
    stop.store(true);
    other.join();
    const ShmLinkCounters& r = receiver.link.counters();
    const ShmLinkCounters& s = sender.link.counters();
    EXPECT_GE(s.ref_frames_sent, 8u * 6) << "bursts of 128 KiB by reference";
    EXPECT_EQ(receiver.device.counters().ref_pulls, s.ref_frames_sent);
    EXPECT_EQ(r.helps_offered, s.ref_frames_sent) << "each burst's second half offered";
    EXPECT_EQ(r.helps_taken, r.helps_offered) << "a sender polling all along takes every offer";
    EXPECT_EQ(r.helps_withdrawn, 0u);
    EXPECT_EQ(s.helps_given, r.helps_taken);
    EXPECT_EQ(r.helps_failed, 0u);
    EXPECT_EQ(receiver.device.counters().bursts_taken_apart, 0u);
  });
}

// A sender that does not poll takes nothing: each offer is withdrawn and its half pulled by the
// receiver (the fixture steps one side at a time). Offers below twice kHelpMinBytes are not made.
TEST_F(ShmLinkTest, AnOfferNobodyTakesIsWithdrawnAndTheReceiverCopiesItAll) {
  build(1 << 20, 16 * 1024);
  a->link.set_references(ShmLink::References::kAlways);
  a->link.set_max_reference_burst_bytes(128 * 1024);
  post(*a, WrOpcode::kRdmaWrite, 0, 64, b->addr(0));
  ASSERT_EQ(wait(*a).status, WcStatus::kSuccess);
  for (size_t i = 0; i < 700000; ++i) a->buffer[i] = static_cast<uint8_t>(i * 29 + 7);
  post(*a, WrOpcode::kRdmaWrite, 0, 700000, b->addr(200000));
  ASSERT_EQ(wait(*a).status, WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(a->buffer.data(), b->buffer.data() + 200000, 700000), 0);
  const ShmLinkCounters& c = b->link.counters();
  EXPECT_GE(c.helps_offered, 4u);
  EXPECT_EQ(c.helps_withdrawn, c.helps_offered);
  EXPECT_EQ(c.helps_taken, 0u);
  EXPECT_EQ(a->link.counters().helps_given, 0u);

  const uint64_t offered = c.helps_offered;
  b->link.set_help_min_bytes(128 * 1024);  // halves of 64 KiB are now too small
  post(*a, WrOpcode::kRdmaWrite, 0, 700000, b->addr(0));
  ASSERT_EQ(wait(*a).status, WcStatus::kSuccess);
  EXPECT_EQ(std::memcmp(a->buffer.data(), b->buffer.data(), 700000), 0);
  EXPECT_EQ(c.helps_offered, offered);
}

// A sender that takes an offer and cannot write it (process_vm_writev refused: ptrace rules
// may let the receiver read the sender and not the sender write the receiver) fails it: the
// receiver pulls that half itself, offers that sender nothing more, and says so in the
// channel (kReferenceHelped cleared: bursts by reference go back to the size one copy suits).
// b answers READs; a thread stands in for b's polls and fails whatever it takes.
TEST_F(ShmLinkTest, ASenderThatCannotWriteAnOfferFailsItAndIsOfferedNoMore) {
  build(1 << 20, 16 * 1024);
  b->link.set_references(ShmLink::References::kAlways);
  b->link.set_max_reference_burst_bytes(128 * 1024);
  a->link.set_help_patience(std::chrono::minutes(1));  // the thread takes the offer, whenever it runs
  post(*a, WrOpcode::kRdmaRead, 0, 64, b->addr(0));
  ASSERT_EQ(wait(*a).status, WcStatus::kSuccess);
  ChannelControl* from_a = nullptr;  // a's channel in b's inbox, where a offers
  for (uint32_t i = 0; i < b->link.inbox().channels(); ++i)
    if (b->link.inbox().channel(i).control().owner.load() != 0) from_a = &b->link.inbox().channel(i).control();
  ASSERT_NE(from_a, nullptr);
  std::atomic<uint64_t>* to_a = nullptr;  // b's channel in a's inbox: its reference word
  for (uint32_t i = 0; i < a->link.inbox().channels(); ++i)
    if (a->link.inbox().channel(i).control().owner.load() != 0) to_a = &a->link.inbox().channel(i).control().reference;
  ASSERT_NE(to_a, nullptr);
  EXPECT_NE(to_a->load() & kReferenceHelped, 0u) << "a offers help";

  std::atomic<bool> stop{false};
  std::atomic<int> failed{0};
  std::thread fake([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      uint32_t s = kHelpOffered;
      if (from_a->help.state.compare_exchange_strong(s, kHelpTaken)) {
        from_a->help.state.store(kHelpFailed, std::memory_order_release);
        failed.fetch_add(1);
      }
    }
  });
  for (size_t round = 0; round < 2; ++round) {
    for (size_t i = 0; i < 700000; ++i) b->buffer[i] = static_cast<uint8_t>(i * 19 + round);
    post(*a, WrOpcode::kRdmaRead, 100000, 700000, b->addr(0));  // a and b stepped in turn: b never sees an offer
    ASSERT_EQ(wait(*a).status, WcStatus::kSuccess) << round;
    ASSERT_EQ(std::memcmp(a->buffer.data() + 100000, b->buffer.data(), 700000), 0) << round;
  }
  stop.store(true);
  fake.join();
  const ShmLinkCounters& c = a->link.counters();
  EXPECT_EQ(failed.load(), 1);
  EXPECT_EQ(c.helps_offered, 1u) << "none after the failure";
  EXPECT_EQ(c.helps_failed, 1u);
  EXPECT_EQ(c.helps_taken, 0u);
  EXPECT_GE(b->link.counters().ref_frames_sent, 2u * 5);
  EXPECT_EQ(to_a->load() & kReferenceHelped, 0u);
  EXPECT_NE(to_a->load() & kReferenceAllowed, 0u) << "references still go";
}

// The sender's side of a shared copy reads an offer another process wrote: counts, lengths and
// addresses are checked or fail the copy (EFAULT), and a failed copy says so in the slot. Here
// offers are written into a's slot by hand, as b would, and a's poll serves them; ready() says
// an offer waits, so a sleeping engine steps for it.
TEST_F(ShmLinkTest, AnOfferedCopyIsCheckedAndAMalformedOneFails) {
  build(1 << 20, 16 * 1024);
  post(*b, WrOpcode::kRdmaWrite, 0, 64, a->addr(0));  // b's channel in a's inbox, and a's reader of it
  ASSERT_EQ(wait(*b).status, WcStatus::kSuccess);
  ChannelControl::HelpSlot* slot = nullptr;
  for (uint32_t i = 0; i < a->link.inbox().channels(); ++i)
    if (a->link.inbox().channel(i).control().owner.load() != 0) slot = &a->link.inbox().channel(i).control().help;
  ASSERT_NE(slot, nullptr);
  using Seg = ChannelControl::HelpSlot::Segment;
  const auto serve = [&](std::initializer_list<Seg> into, std::initializer_list<Seg> from) {
    slot->into_count = static_cast<uint16_t>(into.size());
    slot->from_count = static_cast<uint16_t>(from.size());
    std::copy(into.begin(), into.end(), slot->into);
    std::copy(from.begin(), from.end(), slot->from);
    slot->state.store(kHelpOffered, std::memory_order_release);
    EXPECT_TRUE(a->link.ready()) << "an offer waits";
    a->link.poll(a->device);
    const uint32_t state = slot->state.load();
    slot->state.store(kHelpIdle);
    return state;
  };
  for (size_t i = 0; i < 300000; ++i) a->buffer[i] = static_cast<uint8_t>(i * 3 + 11);
  // Good: two pieces of a's buffer into one of b's.
  EXPECT_EQ(serve({{b->addr(500000), 300000}}, {{a->addr(0), 100000}, {a->addr(100000), 200000}}), kHelpDone);
  EXPECT_EQ(std::memcmp(a->buffer.data(), b->buffer.data() + 500000, 300000), 0);
  EXPECT_EQ(a->link.counters().helps_given, 1u);
  EXPECT_FALSE(a->link.ready());
  // Malformed: no segments, too many, lengths that differ, a length past 1 GiB, an address
  // that is not mapped (either side).
  EXPECT_EQ(serve({}, {{a->addr(0), 10}}), kHelpFailed);
  EXPECT_EQ(serve({{b->addr(0), 10}}, {}), kHelpFailed);
  slot->into_count = 17;
  slot->from_count = 1;
  slot->state.store(kHelpOffered, std::memory_order_release);
  a->link.poll(a->device);
  EXPECT_EQ(slot->state.load(), kHelpFailed) << "17 segments";
  slot->state.store(kHelpIdle);
  EXPECT_EQ(serve({{b->addr(0), 10}}, {{a->addr(0), 11}}), kHelpFailed);
  EXPECT_EQ(serve({{b->addr(0), uint64_t{1} << 31}}, {{a->addr(0), uint64_t{1} << 31}}), kHelpFailed);
  EXPECT_EQ(serve({{b->addr(0), 4096}}, {{4096, 4096}}), kHelpFailed) << "page 1 of a's memory is never mapped";
  EXPECT_EQ(serve({{8192, 4096}}, {{a->addr(0), 4096}}), kHelpFailed);
  EXPECT_EQ(a->link.counters().helps_given, 1u);
  // Nothing was taken apart or lost meanwhile: the QPs still work.
  post(*b, WrOpcode::kRdmaWrite, 0, 64, a->addr(0));
  EXPECT_EQ(wait(*b).status, WcStatus::kSuccess);
}

// A sender that takes an offer and then stops (SIGSTOP, a debugger) before it has written it
// holds the receiver for the wait bound only: the burst ends later, and the receiver's device
// goes on with everything else. Here a third endpoint's WRITEs into the receiver complete
// meanwhile, the receiver's ready() does not report the waiting channel (its engine may
// sleep), and settle_copies() (what deregistration waits for) waits for the copy. Once the
// sender has written its part, or failed it, the same burst is delivered again and the
// transfer completes with every byte in place. A thread stands in for the sender's polls: it
// takes the first offer and holds it until told, then makes the copies as serve_help would.
// The warnings logged (from any thread; `lines` read once the writer has been joined), and
// a handshake on them: wait_for() returns once a warning holding `text` came.
class WarningSink : public LogSink {
 public:
  void write(LogLevel level, std::string_view, std::string_view message) override {
    std::lock_guard lock(mu_);
    if (level == LogLevel::kWarn) lines.emplace_back(message);
    came_.notify_all();
  }
  bool wait_for(const std::string& text, std::chrono::seconds limit) {
    std::unique_lock lock(mu_);
    return came_.wait_for(lock, limit, [&] {
      return std::any_of(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(text) != std::string::npos; });
    });
  }
  std::vector<std::string> lines;

 private:
  std::mutex mu_;
  std::condition_variable came_;
};

class ShmLinkStoppedSender : public ShmLinkTest {
 protected:
  // kWrite: the sender writes its part late; kFail: it fails it; kQpError: the READ's QP is
  // moved to Error while the copy is held (READs only: a WRITE's receiver has no WR there).
  enum class Mode { kWrite, kFail, kQpError };
  void run(Mode mode) {
    const bool fail = mode == Mode::kFail;
    for_each_one_sided(1 << 20, 16 * 1024, [&](WrOpcode op, Side& sender, Side& receiver) {
      const bool write = op == WrOpcode::kRdmaWrite;
      if (mode == Mode::kQpError && write) return;
      sender.link.set_references(ShmLink::References::kAlways);
      sender.link.set_max_reference_burst_bytes(128 * 1024);
      receiver.link.set_help_patience(std::chrono::minutes(1));  // every offer waits for the stand-in
      receiver.link.set_help_wait_bound(std::chrono::milliseconds(1));
      post(*a, op, 0, 64, b->addr(0));
      ASSERT_EQ(wait(*a).status, WcStatus::kSuccess);
      ChannelControl::HelpSlot* slot = nullptr;  // the receiver's channel in the sender's inbox
      for (uint32_t i = 0; i < sender.link.inbox().channels(); ++i)
        if (sender.link.inbox().channel(i).control().owner.load() != 0) slot = &sender.link.inbox().channel(i).control().help;
      ASSERT_NE(slot, nullptr);
      ChannelControl* back = nullptr;  // the sender's channel in the receiver's inbox
      for (uint32_t i = 0; i < receiver.link.inbox().channels(); ++i)
        if (receiver.link.inbox().channel(i).control().owner.load() != 0) back = &receiver.link.inbox().channel(i).control();
      ASSERT_NE(back, nullptr);

      std::atomic<bool> stop{false}, held{false}, release{false}, first_done{false};
      std::atomic<bool> found_waiting{false};  // the first copy's end found the slot waiting
      std::thread stand_in([&] {
        for (bool first = true; !stop.load(std::memory_order_relaxed);) {
          uint32_t s = kHelpOffered;
          if (!slot->state.compare_exchange_strong(s, kHelpTaken, std::memory_order_acquire)) continue;
          if (first) {
            held.store(true);
            while (!release.load()) std::this_thread::yield();
          }
          std::array<iovec, ChannelControl::HelpSlot::kSegments> into, from;
          for (size_t k = 0; k < slot->into_count; ++k) into[k] = {reinterpret_cast<void*>(slot->into[k].addr), slot->into[k].len};
          for (size_t k = 0; k < slot->from_count; ++k) from[k] = {reinterpret_cast<void*>(slot->from[k].addr), slot->from[k].len};
          const bool failing = first && fail;
          if (!failing) ::process_vm_writev(::getpid(), from.data(), slot->from_count, into.data(), slot->into_count, 0);
          // As the sender's link ends it (ShmLink::serve_help; the doorbell is this test's steps).
          const bool was_waiting = end_taken_copy(*slot, !failing, back);
          if (first) {
            found_waiting.store(was_waiting);
            first_done.store(true);
          }
          first = false;
        }
      });
      const auto step = [&] {
        for (Side* s : {a.get(), b.get(), third.get()}) {
          if (s == nullptr) continue;
          s->link.poll(s->device);
          s->device.progress();
        }
      };

      constexpr uint32_t kLen = 700000;
      for (size_t i = 0; i < kLen; ++i) sender.buffer[i] = static_cast<uint8_t>(i * 13 + 5);
      std::memset(receiver.buffer.data() + 100000, 0, kLen);
      post(*a, op, write ? 0 : 100000, kLen, b->addr(write ? 100000 : 0));
      const ShmLinkCounters& r = receiver.link.counters();
      for (size_t i = 0; i < 100000 && r.helps_later == 0; ++i) step();
      ASSERT_EQ(r.helps_later, 1u) << "the copy the stand-in holds ends later";
      ASSERT_TRUE(held.load());
      for (size_t i = 0; i < 100; ++i) step();
      WorkCompletion wc{};
      EXPECT_EQ(a->cq->poll({&wc, 1}), 0u) << "the transfer waits";
      EXPECT_FALSE(receiver.link.ready()) << "its engine may sleep: the sender rings when it has written";
      EXPECT_EQ(r.helps_later, 1u) << "one burst waits, and its channel with it";
      if (!write) {
        // The READ's requester is the copy's receiver. Its ACK timer runs out again and again,
        // far past timeout x retry_cnt (virtual time), and spends no retry: the response came,
        // and the stopped sender may still write it into the READ's buffer, which a
        // retry-exceeded completion would hand back.
        const rc::DeviceCounters& d = receiver.device.counters();
        const uint64_t timeouts = d.timeouts;
        for (int k = 0; k < 200; ++k) {
          clock.advance(std::chrono::milliseconds(10));
          step();
        }
        EXPECT_EQ(a->cq->poll({&wc, 1}), 0u) << "no completion (RETRY_EXC_ERR) while the copy may still land";
        EXPECT_GE(d.timeouts_copy_later, 200u / 5) << "its timer ran out and ran again";
        EXPECT_EQ(d.timeouts, timeouts) << "no retry spent";
      }
      if (mode == Mode::kQpError) {
        // The application moves the READ's QP to Error: its WR is flushed only once the
        // stopped sender's bytes can no longer land in its buffer.
        QpAttr to_error;
        to_error.qp_state = QpState::kError;
        ASSERT_TRUE(receiver.device.modify_qp(receiver.qp, to_error, verbs::attr::kState).ok());
        const uint64_t checks = r.sender_checks;
        constexpr int kSteps = 100;
        for (int k = 0; k < kSteps; ++k) {
          clock.advance(std::chrono::milliseconds(10));
          step();
        }
        EXPECT_EQ(a->cq->poll({&wc, 1}), 0u) << "no flush while the copy may still land";
        // Each step asks whether the held flush may go; whether its sender lives (a system
        // call) is asked once in ShmLink::kAliveCheckTicks of real time.
        EXPECT_LT(r.sender_checks - checks, uint64_t{kSteps}) << "a kill(pid, 0) a step";
        release.store(true);
        while (!first_done.load()) std::this_thread::yield();
        EXPECT_TRUE(found_waiting.load());
        size_t i = 0;
        for (; i < 100000 && a->cq->poll({&wc, 1}) == 0; ++i) step();
        ASSERT_LT(i, 100000u) << "the READ is flushed once the copy ended";
        EXPECT_EQ(wc.status, WcStatus::kWrFlushErr);
        stop.store(true);
        stand_in.join();
        return;
      }

      // Another endpoint's QP into the receiver is served all along.
      ASSERT_NE(add_third(receiver), nullptr);
      Side& c = *third;
      for (uint32_t round = 0; round < 3; ++round) {
        for (size_t i = 0; i < 4096; ++i) c.buffer[i] = static_cast<uint8_t>(i + round);
        Sge sge{c.addr(0), 4096, c.mr->lkey};
        SendWr wr;
        wr.opcode = WrOpcode::kRdmaWrite;
        wr.send_flags = send_flag::kSignaled;
        wr.sg_list = {&sge, 1};
        wr.rdma.remote_addr = receiver.addr(950000);
        wr.rdma.rkey = receiver.mr->rkey;
        size_t bad;
        ASSERT_TRUE(c.device.post_send(c.qp, {&wr, 1}, &bad).ok());
        size_t i = 0;
        for (; i < 100000 && c.cq->poll({&wc, 1}) == 0; ++i) step();
        ASSERT_LT(i, 100000u) << "the third endpoint's WRITE " << round;
        ASSERT_EQ(wc.status, WcStatus::kSuccess);
        EXPECT_EQ(std::memcmp(c.buffer.data(), receiver.buffer.data() + 950000, 4096), 0);
      }
      EXPECT_EQ(a->cq->poll({&wc, 1}), 0u) << "the transfer still waits";

      // Memory handed back waits for the copy (in another thread: nothing else runs meanwhile),
      // and says for whom once it has waited a while.
      std::atomic<bool> settled{false};
      WarningSink warnings;
      receiver.link.set_settle_warn_after(std::chrono::milliseconds(5));
      set_log_sink(&warnings);
      std::thread settle([&] {
        receiver.link.settle_copies();
        settled.store(true);
      });
      // Its warning is the handshake: settle_copies is waiting, past its 5 ms, for the sender.
      const std::string named = "waiting for endpoint " + std::to_string(sender.ep.id) + " (pid ";
      EXPECT_TRUE(warnings.wait_for(named, std::chrono::seconds(20))) << "no warning naming the sender";
      EXPECT_FALSE(settled.load()) << "settle_copies returned while the sender could still write";
      release.store(true);
      settle.join();
      set_log_sink(nullptr);
      EXPECT_EQ(std::count_if(warnings.lines.begin(), warnings.lines.end(),
                              [&](const std::string& l) { return l.find(named) != std::string::npos; }),
                1)
          << "one warning, naming the sender";
      while (!first_done.load()) std::this_thread::yield();
      EXPECT_TRUE(found_waiting.load()) << "the receiver had stopped waiting, and says so";
      EXPECT_TRUE(receiver.link.ready()) << "a spinning engine sees at once that the burst can come again";

      wc = wait(*a);
      EXPECT_EQ(wc.status, WcStatus::kSuccess);
      EXPECT_EQ(std::memcmp(sender.buffer.data(), receiver.buffer.data() + 100000, kLen), 0);
      stop.store(true);
      stand_in.join();
      const ShmLinkCounters& s = sender.link.counters();
      EXPECT_EQ(r.helps_later, 1u);
      EXPECT_EQ(receiver.device.counters().ref_pulls, s.ref_frames_sent) << "each burst taken once";
      EXPECT_EQ(receiver.device.counters().bursts_taken_apart, 0u);
      EXPECT_EQ(r.helps_failed, fail ? 1u : 0u);
      if (!fail) {
        EXPECT_EQ(r.helps_taken, r.helps_offered) << "the first offer, too, counted once written";
      }
      // The other QP still works.
      post(*a, op, 0, 64, b->addr(0));
      EXPECT_EQ(wait(*a).status, WcStatus::kSuccess);
    });
  }
};

TEST_F(ShmLinkStoppedSender, WritesItsPartLaterAndTheBurstComesAgain) { run(Mode::kWrite); }
TEST_F(ShmLinkStoppedSender, FailsItsPartLaterAndTheReceiverCopiesItAll) { run(Mode::kFail); }
TEST_F(ShmLinkStoppedSender, AQpMovedToErrorMeanwhileIsFlushedOnceTheCopyEnded) { run(Mode::kQpError); }

}  // namespace
}  // namespace softib::link
