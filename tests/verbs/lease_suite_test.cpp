// The engine and the inbox lease, over every link of the verbs suite (its Rc fixture:
// rc_suite.hpp; its instantiation: verbs_suite_test.cpp): one-sided operations complete while
// the target makes no call; a target that holds the lease but stopped reading, or left with
// its completion, is still served; the engine keeps off the polling application's CPU while
// the lease holds, and off the CPUs where its peers poll; arming a CQ hands over at once.
#include <pthread.h>
#include <sched.h>
#include <sys/epoll.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstring>
#include <thread>

#include "verbs/rc_suite.hpp"

namespace softib::testing {
namespace {

TEST_P(Rc, OneSidedOperationsCompleteWhileTheTargetDoesNothing) {
  // B's application makes no call at all from here on: only its engine may act.
  fill_pattern(a.buffer, 0, 300000, 21);
  fill_pattern(b.buffer, 1 << 20, 300000, 22);
  const Sge w = a.sge(0, 300000);
  const Sge r = a.sge(1 << 21, 300000);
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, w, b.addr(0), b.mr->rkey, 1)).ok());
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaRead, r, b.addr(1 << 20), b.mr->rkey, 2)).ok());
  // A waits without polling either, so both engines carry it.
  ASSERT_TRUE(wait_queued(a.scq, 2));
  auto wc = reap(a, a.scq, 2);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[1].status, WcStatus::kSuccess);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 300000, b.buffer.begin()));
  EXPECT_TRUE(std::equal(b.buffer.begin() + (1 << 20), b.buffer.begin() + (1 << 20) + 300000,
                         a.buffer.begin() + (1 << 21)));
}

// B's application polled a moment ago (it holds its inbox's lease, so B's engine sleeps and
// senders do not ring) and then stopped reading, as one that spins on memory for an RDMA
// WRITE does (perftest's ib_write_lat). A, polling for the WRITE's completion, finds its frame
// unread and rings B's engine (ShmLink::wake_stalled): the WRITE is served long before B's
// lease runs out. Before, B's engine slept the lease out (ib_write_lat: 0.7 ms typical).
TEST_P(Rc, AWriteIsServedWhileItsTargetHoldsTheLeaseButStoppedReading) {
  const link::ShmLink* shm = hold_lease_then_stop(b.rcq);
  if (HasFailure()) return;
  const uint64_t lease_end = shm != nullptr ? shm->inbox().lease_until() : 0;
  std::array<WorkCompletion, 4> wc;
  fill_pattern(a.buffer, 0, 4096, 23);
  const Sge s = a.sge(0, 4096);
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, s, b.addr(8192), b.mr->rkey, 1)).ok());
  size_t got = 0;
  while (got == 0) got = a.ctx->poll_cq(a.scq, wc);  // A polls; B makes no call
  const uint64_t done = link::monotonic_ns();
  ASSERT_EQ(got, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 4096, b.buffer.begin() + 8192));
  if (shm != nullptr) {
    EXPECT_LT(done, lease_end) << "served before B's lease ran out";
    EXPECT_GE(a.ctx->shm_link()->counters().stall_rings, 1u);
    // B's last poll found nothing: it polls on as far as A can tell, so A waited for the
    // longer look, not the one for an application that left with its completions.
    EXPECT_FALSE(shm->inbox().away());
    EXPECT_EQ(a.ctx->shm_link()->counters().away_rings, 0u);
  }
}

// A ping-pong's polls: each poll's step that has its answer and took nothing but the
// fast-path SEND holds that SEND's ACK without walking the active QPs (rc::Device::
// hold_acks_without_progress, on the path from a request to its answer). Every message and
// every signaled send's completion still arrives, once, in order. The engines are stopped and
// one thread plays both sides in turn, so every step is an application's and the count is
// exact: on shared memory a poll stops at its answer, ahead of the ACK behind it, and every
// request skips the walk. The loopback link hands a step every frame queued for it, the ACK with the request,
// so there only the traffic is checked.
TEST_P(Rc, APingPongsPollsHoldTheirAcksWithoutWalkingTheQps) {
  constexpr uint32_t kRounds = 200;
  constexpr uint32_t kSignalEvery = 16;  // every 16th SEND signaled and awaited (bench_verbs lat)
  a.ctx->engine().stop();
  b.ctx->engine().stop();
  prepost_pingpong();
  {
    std::lock_guard lock(b.ctx->device().lock());
    b.ctx->device().progress();  // the walk that the connection's modifies owe
  }
  const uint64_t skipped_before = b.ctx->device().counters().walks_skipped;
  // Signaled every kSignalEvery-th round. take_one's `other` polls its empty send CQ while
  // the caller waits: its idle steps send an ACK its last step held (its engine is stopped).
  auto signaled = [](uint32_t round) { return round % kSignalEvery == kSignalEvery - 1; };
  for (uint32_t r = 0; r < kRounds && !HasFailure(); ++r) {
    send_value(a, qa, r, 2 * r, signaled(r));
    EXPECT_EQ(receive_value(b, qb), 2 * r) << "round " << r;
    send_value(b, qb, r, 2 * r + 1, signaled(r));
    EXPECT_EQ(receive_value(a, qa), 2 * r + 1) << "round " << r;
    if (signaled(r)) {
      EXPECT_EQ(take_one(a, a.scq, WcOpcode::kSend).wr_id, r);
      EXPECT_EQ(take_one(b, b.scq, WcOpcode::kSend, &a).wr_id, r);
    }
  }
  const uint64_t skipped = b.ctx->device().counters().walks_skipped - skipped_before;
  if (b.ctx->shm_link() != nullptr) {
    // One per request, and one per poll of B's send CQ that took its signaled SEND's ACK: an
    // ACK that lets no work out owes no walk either (rc::Device::receive_ack).
    EXPECT_EQ(skipped, kRounds + kRounds / kSignalEvery) << "B's polls walked the QPs for a request";
  }
  a.ctx->engine().start();
  b.ctx->engine().start();
}

// perftest's ib_write_lat: each side's last poll finds its completion, and then it spins on
// memory for the peer's WRITE, holding the lease and reading nothing. Its peer, polling for
// its own completion, rings it as away (after ~5 us rather than ~100 us): for an ACK its last
// poll's step held back for a next step that never comes (rc::Device::AckPolicy), which the
// ~100 us look would never ring for (nothing is left unread), and for a request it left
// unread.
TEST_P(Rc, ATargetThatLeftWithItsCompletionIsRungAsAwayForItsHeldAckAndItsRequests) {
  const link::ShmLink* shm = hold_lease_then_stop(b.rcq);  // B's engine sleeps under B's lease
  if (HasFailure()) return;
  std::array<WorkCompletion, 4> wc;
  ASSERT_TRUE(post_recv(b, qb, 7, {b.sge(0, 64)}).ok());
  SendWr wr;
  wr.wr_id = 1;
  wr.send_flags = send_flag::kSignaled;
  const Sge s8 = a.sge(0, 8);
  wr.sg_list = {&s8, 1};
  ASSERT_TRUE(post_send(a, qa, wr).ok());
  // B's poll takes the SEND (its engine sleeps) and holds the ACK (the QP's timeout is 14);
  // B then makes no call.
  size_t got = 0;
  while (got == 0) got = b.ctx->poll_cq(b.rcq, wc);
  ASSERT_EQ(got, 1u);
  uint64_t lease_end = 0;
  uint64_t sleeps = 0;
  if (shm != nullptr) {
    shm->inbox().take_lease(link::monotonic_ns(), kTestLeaseNs);
    lease_end = shm->inbox().lease_until();
    EXPECT_TRUE(shm->inbox().away()) << "B's last poll found a completion";
    sleeps = b.ctx->engine().counters().sleeps.load();
  }
  got = 0;
  while (got == 0) got = a.ctx->poll_cq(a.scq, wc);  // A polls; B makes no call
  ASSERT_EQ(got, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].wr_id, 1u);
  if (shm != nullptr) {
    EXPECT_LT(link::monotonic_ns(), lease_end) << "the held ACK came before B's lease ran out";
    EXPECT_EQ(a.ctx->shm_link()->counters().away_rings, 1u);
    // B's rung engine stepped (sending the ACK) and sleeps again under the lease: it takes
    // nothing more unless rung.
    while (b.ctx->engine().counters().sleeps.load() <= sleeps) std::this_thread::yield();
  }

  fill_pattern(a.buffer, 0, 4096, 29);
  const Sge s = a.sge(0, 4096);
  ASSERT_TRUE(post_send(a, qa, one_sided(WrOpcode::kRdmaWrite, s, b.addr(8192), b.mr->rkey, 2)).ok());
  got = 0;
  while (got == 0) got = a.ctx->poll_cq(a.scq, wc);
  ASSERT_EQ(got, 1u);
  EXPECT_EQ(wc[0].status, WcStatus::kSuccess);
  EXPECT_EQ(wc[0].wr_id, 2u);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 4096, b.buffer.begin() + 8192));
  if (shm != nullptr) {
    EXPECT_LT(link::monotonic_ns(), lease_end) << "served before B's lease ran out";
    EXPECT_TRUE(shm->inbox().away());
    EXPECT_GE(a.ctx->shm_link()->counters().away_rings, 2u) << "the WRITE left unread: rung as away again";
  }
}

// An engine about to sleep under its application's lease keeps off the CPU where that
// application last polled: rung while the application spins there (ib_write_lat), it would
// queue behind it for up to a scheduler slice; elsewhere the poller that rang it yields.
// Once no lease is in force, it may run anywhere again.
TEST_P(Rc, AnEngineSleepingUnderTheLeaseKeepsOffTheApplicationsCpuAndNoLongerOnceItEnds) {
  const std::optional<cpu_set_t> allowed = cpus_to_place_an_engine_on();
  if (!allowed) GTEST_SKIP() << "no lease without the shared-memory link, or one CPU: nowhere else to go";
  // B polls until its engine, asleep under the lease, has left one CPU B polled on.
  expect_engine_to_leave_a_polled_cpu(b, b.ctx->engine(), *allowed, [] {});
  if (HasFatalFailure()) return;
  // And it still works: a WRITE that B's engine serves while B makes no call.
  expect_a_write_served_without_b(31, 3);
  // B stops polling (as before blocking for an event): with no lease in force, the engine is
  // the one doing the work, on any CPU again.
  b.ctx->engine().release_lease();
  expect_engine_back_on_every_cpu(b.ctx->engine(), *allowed, [] { std::this_thread::yield(); });
}

// An engine with no lease of its own (its application makes no call) keeps off, before it
// sleeps, the CPU where a peer it sends to polls steadily (a lease that ends
// link::kSteadyPollingNs ahead or more, reached after that long polling): rung by that poller (a WRITE
// stream's client), the woken engine was put on the poller's busy vCPU while the other idled
// (these kernels take an idle vCPU for a pre-empted one) and queued there 1-4 ms at a time
// (perftest ib_write_bw through the drop-in, perf sched trace). Once no peer polls, it may
// run anywhere again.
TEST_P(Rc, AnEngineWithoutALeaseKeepsOffTheCpuWhereAPeerItSendsToPolls) {
  const std::optional<cpu_set_t> allowed = cpus_to_place_an_engine_on();
  if (!allowed) GTEST_SKIP() << "no lease without the shared-memory link, or one CPU: nowhere else to go";
  b.ctx->engine().release_lease();  // B's application makes no call from here on
  // A polls; B's engine, kicked again each time it has gone back to sleep (it sets its
  // affinity before it sleeps, then counts the sleep), looks again at every sleep.
  engine::Engine& e = b.ctx->engine();
  uint64_t slept = e.counters().sleeps.load();
  const auto kick_once_it_slept = [&] {
    if (e.counters().sleeps.load() == slept) return;
    slept = e.counters().sleeps.load();
    e.kick();
  };
  e.kick();
  expect_engine_to_leave_a_polled_cpu(a, e, *allowed, kick_once_it_slept);
  if (HasFatalFailure()) return;
  // And B's engine, so placed, still serves A's WRITE while B makes no call.
  expect_a_write_served_without_b(33, 4);
  // A stops polling: once its lease is over, B's engine may run on every CPU again.
  a.ctx->engine().release_lease();
  expect_engine_back_on_every_cpu(e, *allowed, [&] {
    kick_once_it_slept();
    std::this_thread::yield();
  });
}

// A program that polled for a while and then waits for its CQ's event on the channel's fd
// (epoll, as event loops do, rather than blocking in get_cq_event): arming the CQ hands the
// device over to the engine at once. Before, the engine slept on until the lease that the
// polls took ran out, and the event came 4-5 ms after the send (shm, RoCE).
TEST_P(Rc, AnArmedCqsEventDoesNotWaitForTheLease) {
  Channelled c;
  channelled(c);
  if (HasFatalFailure()) return;
  auto& [ch, cq, q, p] = c;
  ASSERT_TRUE(post_recv(b, p, 1, {b.sge(0, 64)}).ok());
  const link::ShmLink* shm = hold_lease_then_stop(cq);
  if (HasFailure()) return;
  std::array<WorkCompletion, 4> wc;
  ASSERT_TRUE(b.ctx->req_notify_cq(cq, false).ok());
  if (shm != nullptr) {
    EXPECT_LE(shm->inbox().lease_until(), link::monotonic_ns()) << "arming the CQ hands over to the engine";
  }
  const int ep = epoll_on(ch->fd());
  ASSERT_GE(ep, 0) << "a real fd, as libibverbs' channels are";
  epoll_event ev{};
  ASSERT_TRUE(send_8_bytes(c).ok());
  EXPECT_EQ(::epoll_wait(ep, &ev, 1, 20000), 1) << "the engine delivers the completion and its event";
  ::close(ep);
  auto got = b.ctx->get_cq_event(ch);
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, cq);
  EXPECT_EQ(b.ctx->poll_cq(cq, wc), 1u);
}

// The lowest free channel of an inbox is the one the next new sender claims; an idle engine
// whose application made a QP maps its ring ahead of that sender (engine::Engine::
// expect_traffic, link::ShmLink::warm_spare_channel), so a connection's first frame finds the
// pages there. A context that made no QP (a program that only queries the device) maps none.
TEST_P(Rc, AnIdleEngineMapsTheRingItsNextSenderClaimsOnceItsApplicationMadeAQp) {
  if (a.ctx->shm_link() == nullptr) GTEST_SKIP() << "shared memory only";
  // Handshakes with the engine threads: each blocks until the engine has done it (a test
  // that never sees it fails by ctest's timeout).
  auto next_claim = [](const link::ShmLink& shm) {
    const auto i = shm.inbox().next_claim();
    EXPECT_TRUE(i.has_value()) << "a free channel";
    return i.value_or(0);
  };
  // Both sides made and connected a QP (the peer claimed a channel of each inbox).
  for (Side* s : {&a, &b}) {
    const link::ShmLink& shm = *s->ctx->shm_link();
    shm.wait_channel_warmed(next_claim(shm));
    EXPECT_GE(shm.channels_warmed(), 1u) << "endpoint " << shm.endpoint();
  }
  // Another context on A's device, with no QP: its engine sleeps without mapping anything
  // (the warming comes before the sleep in the same idle pass).
  auto devs = provider::list_devices(options);
  ASSERT_TRUE(devs.ok());
  auto idle = provider::Context::open((*devs)[0], options);
  ASSERT_TRUE(idle.ok()) << idle.error().to_string();
  const link::ShmLink& shm = *(*idle)->shm_link();
  (*idle)->engine().counters().sleeps.wait(0);
  EXPECT_EQ(shm.channels_warmed(), 0u);
  EXPECT_FALSE(shm.channel_warmed(next_claim(shm)));
  // Its first QP: now it does.
  verbs::Pd* pd = (*idle)->alloc_pd();
  verbs::Cq* cq = *(*idle)->create_cq(16, nullptr, nullptr);
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.cap = {16, 16, 1, 1, 0};
  ASSERT_TRUE((*idle)->create_qp(pd, cq, cq, nullptr, init, nullptr).ok());
  shm.wait_channel_warmed(next_claim(shm));
  EXPECT_EQ(shm.channels_warmed(), 1u);
}

// Once a sender has taken the spare, the next one is mapped as soon as the engine is idle
// with no application thread polling (ShmLink::warm_spare_chunk, a piece a pass), not at
// housekeeping, which this context's engine never reaches here: a second new peer soon after
// the first finds its ring's pages there too. The engine does it when next woken (by the
// connection's setup, or else by the sender's first SEND: nobody polls), and the SEND is
// delivered.
TEST_P(Rc, AnEngineWithNoPollerMapsTheNextSpareOnceASenderTookIt) {
  if (a.ctx->shm_link() == nullptr) GTEST_SKIP() << "shared memory only";
  provider::Options slow = options;
  slow.engine.housekeeping = std::chrono::hours(1);
  auto devs = provider::list_devices(slow);
  ASSERT_TRUE(devs.ok());
  auto opened = provider::Context::open((*devs)[0], slow);
  ASSERT_TRUE(opened.ok()) << opened.error().to_string();
  Side c;
  c.ctx = std::move(*opened);
  equip(c);
  if (HasFatalFailure()) return;
  const link::ShmLink& shm = *c.ctx->shm_link();
  rc::Qp* qc = create_qp(c, QpType::kRc);
  ASSERT_NE(qc, nullptr);
  const auto first = shm.inbox().next_claim();
  ASSERT_TRUE(first.has_value());
  shm.wait_channel_warmed(*first);  // the first spare, at once
  // A's new QP connects to it: A's endpoint claims the spare (connect_one's RTR names C).
  rc::Qp* qa2 = create_qp(a, QpType::kRc);
  ASSERT_NE(qa2, nullptr);
  connect_one(a, qa2, c, qc);
  connect_one(c, qc, a, qa2);
  EXPECT_NE(shm.inbox().channel(*first).control().owner.load(), 0u) << "A took the spare";
  const auto next = shm.inbox().next_claim();
  ASSERT_TRUE(next.has_value());
  ASSERT_TRUE(post_recv(c, qc, 7, {c.sge(0, 64)}).ok());
  fill_pattern(a.buffer, 0, 64, 24);
  SendWr wr;
  wr.opcode = WrOpcode::kSend;
  const Sge sge = a.sge(0, 64);
  wr.sg_list = {&sge, 1};
  wr.send_flags = send_flag::kSignaled;
  ASSERT_TRUE(post_send(a, qa2, wr).ok());
  // C's application makes no call until its engine has mapped the next spare (within the
  // suite's 20 s safety limit, as wait_queued; housekeeping would be an hour away).
  const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!shm.channel_warmed(*next) && std::chrono::steady_clock::now() < limit) std::this_thread::yield();
  ASSERT_TRUE(shm.channel_warmed(*next)) << "the next spare, without housekeeping";
  EXPECT_EQ(shm.channels_warmed(), 2u);
  const auto got = reap(c, c.rcq, 1);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].status, WcStatus::kSuccess);
  EXPECT_EQ(got[0].wr_id, 7u);
  EXPECT_TRUE(std::equal(a.buffer.begin(), a.buffer.begin() + 64, c.buffer.begin()));
  EXPECT_EQ(reap(a, a.scq, 1).at(0).status, WcStatus::kSuccess);
}

// Two application threads ping-pong with both pinned to one CPU (a one-CPU CI runner, two
// processes on a busy machine): a thread whose polls find nothing gives the CPU up
// (engine::IdleYield), and the other, which has the message to answer, runs at once. Spinning
// on, each kept the CPU for the scheduler's whole slice: ~4 ms a half round trip, where these
// yields make it ~5 us (`bench/datapath.py --only onecpu` times both, and UCX's). Here: every round
// completes, and each side's yields let another thread run (over loopback the engines'
// threads take the frames, and their spins' yields count too).
TEST_P(Rc, TwoPollersSharingOneCpuHandItToEachOtherWhenIdle) {
  cpu_set_t allowed;
  ASSERT_EQ(::sched_getaffinity(0, sizeof allowed, &allowed), 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(static_cast<size_t>(cpu), &allowed)) {
      CPU_SET(static_cast<size_t>(cpu), &one);
      break;
    }
  }
  prepost_pingpong();
  const engine::EngineCounters& ea = a.ctx->engine().counters();
  const engine::EngineCounters& eb = b.ctx->engine().counters();
  const uint64_t a_before = ea.idle_yields_ran_other.load(), b_before = eb.idle_yields_ran_other.load();
  constexpr uint32_t kRounds = 100;
  std::thread responder([&] {
    ASSERT_EQ(::pthread_setaffinity_np(::pthread_self(), sizeof one, &one), 0);
    for (uint32_t r = 0; r < kRounds && !HasFailure(); ++r) {
      EXPECT_EQ(receive_value(b, qb), 2 * r) << "round " << r;
      send_value(b, qb, r, 2 * r + 1, false);
    }
  });
  ASSERT_EQ(::pthread_setaffinity_np(::pthread_self(), sizeof one, &one), 0);
  for (uint32_t r = 0; r < kRounds && !HasFailure(); ++r) {
    send_value(a, qa, r, 2 * r, false);
    EXPECT_EQ(receive_value(a, qa), 2 * r + 1) << "round " << r;
  }
  responder.join();
  ASSERT_EQ(::pthread_setaffinity_np(::pthread_self(), sizeof allowed, &allowed), 0);
  EXPECT_GT(ea.idle_yields_ran_other.load(), a_before) << "A's idle polls never handed the CPU over";
  EXPECT_GT(eb.idle_yields_ran_other.load(), b_before) << "B's idle polls never handed the CPU over";
}

// A poll that waits on a shared-memory ping-pong takes its peer's request by the express step
// (engine::Engine::express_step, link::ShmLink::take_express): the one ordinary frame at the
// head of the channel the last frame came from, without the step's walk over the inbox. Here:
// two application threads ping-pong 200 rounds, every value arrives in order, and most of the
// answering side's requests came that way (the rest: taken by a post's step or the engine's,
// when this thread was not polling). An ACK at that head (one in 32 requests asks for one) is
// taken the same way; it does not answer the poll, and the usual step goes on after it.
TEST_P(Rc, APollerTakesTheRequestItWaitsForByTheExpressStep) {
  if (b.ctx->shm_link() == nullptr) GTEST_SKIP() << "the express step is the shared-memory link's";
  if (roce()) GTEST_SKIP() << "RoCE's frames carry GRH fields: the usual step takes them";
  prepost_pingpong();
  const uint64_t express_before = b.ctx->shm_link()->counters().express_frames;
  constexpr uint32_t kRounds = 200;
  std::thread responder([&] {
    for (uint32_t r = 0; r < kRounds && !HasFailure(); ++r) {
      EXPECT_EQ(receive_value(b, qb), 2 * r) << "round " << r;
      send_value(b, qb, r, 2 * r + 1, false);
    }
  });
  for (uint32_t r = 0; r < kRounds && !HasFailure(); ++r) {
    send_value(a, qa, r, 2 * r, false);
    EXPECT_EQ(receive_value(a, qa), 2 * r + 1) << "round " << r;
  }
  responder.join();
  const uint64_t express = b.ctx->shm_link()->counters().express_frames - express_before;
  EXPECT_GE(express, kRounds / 4) << "B's polls took " << express << " of " << kRounds << " requests by the express step";
  EXPECT_LE(express, b.ctx->shm_link()->counters().frames_received);
}

}  // namespace
}  // namespace softib::testing
