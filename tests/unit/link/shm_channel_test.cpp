// ShmChannel and ShmInbox: records in order and intact across wrap-around, pads, flow
// control, claims and reclaims, malformed peers' memory refused, and a producer in another
// thread and in another process.
#include <gtest/gtest.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include "base/membarrier.hpp"
#include "link/doorbell.hpp"
#include "link/shm_channel.hpp"
#include "link/shm_inbox.hpp"
#include "support/random.hpp"

namespace softib::link {
namespace {

struct Ring {
  explicit Ring(size_t capacity) : region(*ShmRegion::create("test-ring", channel_footprint(capacity))), mem(region.data(), capacity) {}
  ShmRegion region;
  ChannelMemory mem;
};

// A record's body: its sequence number then bytes derived from it.
void fill(wire::MutByteSpan body, uint64_t seq) {
  for (size_t i = 0; i < body.size(); ++i) body[i] = static_cast<uint8_t>(seq * 131 + i);
}
bool intact(wire::ByteSpan body, uint64_t seq) {
  for (size_t i = 0; i < body.size(); ++i)
    if (body[i] != static_cast<uint8_t>(seq * 131 + i)) return false;
  return true;
}

TEST(ShmChannel, RecordsArriveInOrderAcrossWrapAround) {
  testing::TestRng rng;
  Ring ring(8192);
  ChannelWriter w(ring.mem, 0);
  ChannelReader r(ring.mem, 0);
  uint64_t sent = 0, got = 0;
  for (int round = 0; round < 2000; ++round) {
    // Write a few, read a few: positions wrap the 8 KiB ring hundreds of times.
    const int burst = static_cast<int>(rng.between(1, 6));
    for (int i = 0; i < burst; ++i) {
      const size_t len = rng.between(0, 1500);
      auto room = w.reserve(len);
      if (!room) break;
      ASSERT_EQ(room->size(), len);
      fill(*room, sent);
      w.commit(len, 7, static_cast<uint16_t>(sent));
      ++sent;
    }
    const int take = static_cast<int>(rng.between(0, 6));
    for (int i = 0; i < take; ++i) {
      auto rec = r.peek();
      if (!rec) break;
      EXPECT_EQ(rec->kind, 7);
      EXPECT_EQ(rec->aux, static_cast<uint16_t>(got));
      ASSERT_TRUE(intact(rec->body, got)) << "record " << got;
      r.release();
      ++got;
    }
  }
  while (auto rec = r.peek()) {
    ASSERT_TRUE(intact(rec->body, got));
    r.release();
    ++got;
  }
  EXPECT_EQ(got, sent);
  EXPECT_GT(w.position(), 100u * 8192) << "the test must wrap the ring many times";
}

TEST(ShmChannel, AFullRingRefusesUntilTheConsumerPublishes) {
  Ring ring(4096);
  ChannelWriter w(ring.mem, 0);
  ChannelReader r(ring.mem, 0);
  int written = 0;
  while (w.reserve(100)) {
    w.commit(100, 1);
    ++written;
  }
  EXPECT_EQ(written, 4096 / 128) << "128-byte records (16 header + 100, 64-aligned)";
  // Consuming alone does not free space until the head is published.
  ASSERT_TRUE(r.peek());
  r.release();
  EXPECT_FALSE(w.reserve(100));
  r.publish();
  EXPECT_TRUE(w.reserve(100));
}

TEST(ShmChannel, TheConsumersDistanceIsTheMajorityOfAWindowOfHeadTransfers) {
  Ring ring(4096);
  ChannelWriter w(ring.mem, 0);
  EXPECT_FALSE(w.consumer_near()) << "far until measured: streaming copies are the safe default";
  const uint64_t near = ChannelWriter::kNearNs - 1, far = ChannelWriter::kFarNs;
  const uint64_t middle = (ChannelWriter::kNearNs + ChannelWriter::kFarNs) / 2;
  const auto window = [&w](auto ns_of) {
    for (uint32_t i = 0; i < ChannelWriter::kDistanceWindow; ++i) w.note_head_transfer(ns_of(i));
  };
  for (uint32_t i = 0; i + 1 < ChannelWriter::kDistanceWindow; ++i) w.note_head_transfer(near);
  EXPECT_FALSE(w.consumer_near()) << "judged once a whole window is in";
  w.note_head_transfer(near);
  EXPECT_TRUE(w.consumer_near());
  // No majority either side keeps the judgment: half near and half far, or the middle band.
  window([&](uint32_t i) { return i % 2 == 0 ? near : far; });
  EXPECT_TRUE(w.consumer_near());
  window([&](uint32_t) { return middle; });
  EXPECT_TRUE(w.consumer_near()) << "the middle state does not flip the judgment";
  window([&](uint32_t i) { return i % 2 == 0 ? middle : far; });
  EXPECT_TRUE(w.consumer_near());
  window([&](uint32_t i) { return i < 9 ? far : near; });
  EXPECT_FALSE(w.consumer_near()) << "a majority at kFarNs or more: far";
  window([&](uint32_t) { return middle; });
  EXPECT_FALSE(w.consumer_near()) << "nor back";
  // A few slow loads (an interrupt, a preempted vCPU) do not outvote the rest.
  window([&](uint32_t i) { return i < 3 ? 50'000 : near; });
  EXPECT_TRUE(w.consumer_near());
  EXPECT_EQ(w.windows_near(), 5u) << "the windows judged, for the link's diagnostics";
  EXPECT_EQ(w.windows_far(), 2u);
  // A first window in the middle band says far (the safe default) and is judged.
  ChannelWriter fresh(ring.mem, 0);
  for (uint32_t i = 0; i < ChannelWriter::kDistanceWindow; ++i) fresh.note_head_transfer(middle);
  EXPECT_FALSE(fresh.consumer_near());
  EXPECT_EQ(fresh.windows_far(), 1u);
}

TEST(ShmChannel, AnUncommittedReservationIsReservedAgain) {
  Ring ring(4096);
  ChannelWriter w(ring.mem, 0);
  ChannelReader r(ring.mem, 0);
  auto a = w.reserve(10);
  std::memset(a->data(), 0xAA, a->size());
  EXPECT_FALSE(r.peek()) << "nothing is visible before commit";
  auto b = w.reserve(20);
  EXPECT_EQ(a->data(), b->data());
  fill(*b, 3);
  w.commit(20, 2);
  auto rec = r.peek();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->body.size(), 20u);
  EXPECT_TRUE(intact(rec->body, 3));
}

TEST(ShmChannel, ACorruptLengthIsSkippedNotFollowed) {
  Ring ring(4096);
  ChannelWriter w(ring.mem, 0);
  ChannelReader r(ring.mem, 0);
  w.reserve(10);
  w.commit(10, 1);
  // A misbehaving producer claims a record that runs past the end of the ring.
  ring.mem.header_at(0).length = 1u << 30;
  EXPECT_FALSE(r.peek()) << "the reader skips to the end of the ring and finds nothing there";
}

TEST(ShmChannel, AProducerThreadAndAConsumerThread) {
  Ring ring(64 * 1024);
  constexpr uint64_t kRecords = 200000;
  std::thread producer([&] {
    ChannelWriter w(ring.mem, 0);
    for (uint64_t seq = 0; seq < kRecords;) {
      const size_t len = (seq * 37) % 2000;
      auto room = w.reserve(len);
      if (!room) {
        std::this_thread::yield();
        continue;
      }
      fill(*room, seq);
      w.commit(len, 1);
      ++seq;
    }
  });
  ChannelReader r(ring.mem, 0);
  uint64_t got = 0;
  bool ok = true;
  while (got < kRecords && ok) {
    auto rec = r.peek();
    if (!rec) {
      r.publish();
      std::this_thread::yield();
      continue;
    }
    ok = rec->body.size() == (got * 37) % 2000 && intact(rec->body, got);
    r.release();
    ++got;
  }
  if (!ok) {
    // Let the producer finish so that the thread can be joined.
    while (got++ < kRecords * 4 && r.peek()) r.release();
  }
  producer.join();
  EXPECT_TRUE(ok) << "record " << got - 1 << " arrived damaged";
}

TEST(ShmChannel, AProducerInAnotherProcess) {
  Ring ring(16 * 1024);
  constexpr uint64_t kRecords = 5000;
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child shares the mapping (MAP_SHARED survives fork) and writes.
    ChannelWriter w(ring.mem, 0);
    for (uint64_t seq = 0; seq < kRecords;) {
      auto room = w.reserve(seq % 700);
      if (!room) continue;
      fill(*room, seq);
      w.commit(seq % 700, 1);
      ++seq;
    }
    ::_exit(0);
  }
  ChannelReader r(ring.mem, 0);
  uint64_t got = 0;
  bool ok = true;
  while (got < kRecords && ok) {
    auto rec = r.peek();
    if (!rec) {
      r.publish();
      continue;
    }
    ok = rec->body.size() == got % 700 && intact(rec->body, got);
    r.release();
    ++got;
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_TRUE(ok) << "record " << got - 1 << " arrived damaged";
  EXPECT_EQ(got, kRecords);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

TEST(ShmInbox, SendersClaimChannelsAndTheOwnerReclaimsThem) {
  auto inbox = ShmInbox::create(7, 1234, 3, 4096);
  ASSERT_TRUE(inbox.ok()) << inbox.error().to_string();
  EXPECT_EQ(inbox->endpoint(), 7u);
  EXPECT_EQ(inbox->pid(), 1234u);
  EXPECT_EQ(inbox->claim(11), 0u);
  EXPECT_EQ(inbox->claim(12), 1u);
  EXPECT_EQ(inbox->claim(13), 2u);
  EXPECT_FALSE(inbox->claim(14)) << "three channels, three senders";
  EXPECT_EQ(inbox->active_mask(0), 0b111u);

  // Sender 12 writes and dies; the owner drains channel 1 and frees it for sender 14.
  ChannelWriter w(inbox->channel(1), inbox->start_position(1));
  w.reserve(50);
  w.commit(50, 1);
  ChannelReader r(inbox->channel(1), 0);
  ASSERT_TRUE(r.peek());
  r.release();
  inbox->reclaim(1, r.position());
  EXPECT_EQ(inbox->active_mask(0), 0b101u);
  EXPECT_EQ(inbox->claim(14), 1u);
  EXPECT_EQ(inbox->start_position(1), r.position()) << "the new sender starts where the owner read to";
  ChannelWriter w2(inbox->channel(1), inbox->start_position(1));
  ChannelReader r2(inbox->channel(1), inbox->start_position(1));
  EXPECT_FALSE(r2.peek()) << "nothing of the dead sender is seen again";
  w2.reserve(5);
  w2.commit(5, 9);
  auto rec = r2.peek();
  ASSERT_TRUE(rec);
  EXPECT_EQ(rec->kind, 9);
}

TEST(ShmInbox, APeersMalformedInboxIsRefused) {
  // A fresh inbox per case, altered as a misbehaving peer could, then attached from a new fd.
  auto attach_altered = [](auto&& alter) {
    auto inbox = ShmInbox::create(1, 1, 2, 4096);
    EXPECT_TRUE(inbox.ok());
    alter(inbox->header());
    auto region = ShmRegion::map(*inbox->region().dup_fd(), 0);
    EXPECT_TRUE(region.ok());
    return ShmInbox::attach(std::move(*region));
  };
  EXPECT_TRUE(attach_altered([](InboxHeader&) {}).ok());
  EXPECT_FALSE(attach_altered([](InboxHeader& h) { h.magic = 0; }).ok());
  EXPECT_FALSE(attach_altered([](InboxHeader& h) { h.version = 99; }).ok());
  EXPECT_FALSE(attach_altered([](InboxHeader& h) { h.channels = 1000; }).ok());
  EXPECT_FALSE(attach_altered([](InboxHeader& h) { h.channels = 0; }).ok());
  EXPECT_FALSE(attach_altered([](InboxHeader& h) { h.capacity = 5000; }).ok()) << "not a power of two";
  EXPECT_FALSE(attach_altered([](InboxHeader& h) { h.capacity = 1u << 20; }).ok()) << "more than the region holds";
}

TEST(ShmInbox, TheDoorbellRingsOnlyForASleeperWithoutAPoller) {
  auto inbox = ShmInbox::create(1, 1, 1, 4096);
  ASSERT_TRUE(inbox.ok());
  EXPECT_FALSE(inbox->needs_doorbell()) << "awake";
  inbox->sleep_begin();
  inbox->take_lease(monotonic_ns(), kLeaseMinNs);
  EXPECT_FALSE(inbox->needs_doorbell()) << "asleep, but an application thread polls";
  inbox->drop_lease();
  EXPECT_TRUE(inbox->needs_doorbell()) << "asleep, nobody polls";
  EXPECT_FALSE(inbox->needs_doorbell()) << "already rung during this sleep";
  inbox->sleep_end();
  EXPECT_FALSE(inbox->needs_doorbell());
  inbox->sleep_begin();
  EXPECT_TRUE(inbox->needs_doorbell()) << "a new sleep, a new ring";
}

// The wake-up protocol under stress, across processes: a sender in a child process sends one
// record at a time, at random moments, while the owner keeps going to sleep; every record must
// be found at once or wake the owner through the doorbell. A lost wake-up shows as a sleep that
// only its 2 s limit ends. Run as the engines run it: where membarrier(2) is available the
// sender publishes without a full fence while the owner's barrier stands in for it, and the
// owner turns that on and off between sleeps.
TEST(ShmInbox, NoRecordIsLeftUnheardWhileTheOwnerSleeps) {
  auto inbox = ShmInbox::create(1, static_cast<uint32_t>(::getpid()), 1, 4096);
  ASSERT_TRUE(inbox.ok());
  auto bell = Doorbell::create();
  ASSERT_TRUE(bell.ok());
  constexpr uint64_t kRecords = 5000;
  testing::TestRng rng;  // prints its seed on failure
  // The owner acknowledges each record in the channel's `reference` word (unused here), so
  // the sender knows when to send the next.
  const uint64_t child_seed = rng.next();  // the child draws its own numbers
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::mt19937_64 child_rng(child_seed);
    auto region = ShmRegion::map(::dup(inbox->region().fd()), kInboxHeaderBytes);
    if (!region) ::_exit(2);
    auto peer = ShmInbox::attach(std::move(*region));
    if (!peer) ::_exit(3);
    // This forked child registers anew, in the background as an engine does: its first
    // records go with full fences, the rest (once it ends) under the owner's barrier.
    std::thread(register_membarriers).detach();
    const auto ch = peer->claim(42);
    if (!ch) ::_exit(5);
    ChannelWriter w(peer->channel(*ch), peer->start_position(*ch));
    auto& acked = peer->channel(*ch).control().reference;
    for (uint64_t seq = 0; seq < kRecords; ++seq) {
      // Wait a random while (0-40 us): the owner is still looking, going to sleep, or asleep.
      const auto until = std::chrono::steady_clock::now() + std::chrono::nanoseconds(child_rng() % 40'000);
      while (std::chrono::steady_clock::now() < until) {
      }
      auto room = w.reserve(8);
      if (!room) ::_exit(6);
      std::memcpy(room->data(), &seq, 8);
      w.commit(8, 1);
      if (peer->needs_doorbell()) bell->ring();
      while (acked.load(std::memory_order_acquire) != seq + 1) {
      }
    }
    wait_for_membarrier_registration();
    if (peer->sender_registered() != global_membarrier_available()) ::_exit(4);
    ::_exit(0);
  }
  ChannelReader r(inbox->channel(0), 0);
  uint64_t got = 0, sleeps = 0, unheard = 0;
  while (got < kRecords && unheard == 0) {
    if (auto rec = r.peek()) {
      uint64_t seq = 0;
      std::memcpy(&seq, rec->body.data(), 8);
      ASSERT_EQ(seq, got);
      r.release();
      r.publish();
      ++got;
      inbox->channel(0).control().reference.store(got, std::memory_order_release);
      continue;
    }
    // Nothing: go to sleep as the engine does (sleeping, then one last look). Now and then
    // the owner switches between sleeping after a membarrier and letting senders fence, as an
    // engine does when it sleeps often (Engine::pace_sleeper_barrier).
    if (rng.between(0, 3) == 0) inbox->set_sleeper_barrier(rng.between(0, 1) == 1);
    inbox->sleep_begin();
    if (!r.ready()) {
      ++sleeps;
      pollfd p{bell->fd(), POLLIN, 0};
      if (::poll(&p, 1, 2000) == 0) ++unheard;
      bell->drain();
    }
    inbox->sleep_end();
  }
  if (got < kRecords) ::kill(child, SIGKILL);  // it waits for an acknowledgement that will not come
  int status = 0;
  ::waitpid(child, &status, 0);
  EXPECT_EQ(unheard, 0u) << "a record was left with the owner asleep (record " << got << ")";
  EXPECT_EQ(got, kRecords);
  EXPECT_GT(sleeps, kRecords / 10) << "the owner should have slept often";
  if (got == kRecords) {
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
  }
}

TEST(ShmInbox, TheLeaseGrowsWithAnUnbrokenStretchOfPolling) {
  EXPECT_EQ(lease_length(0), kLeaseMinNs);
  EXPECT_EQ(lease_length(kLeaseMinNs + 1), kLeaseMinNs + 1);
  EXPECT_EQ(lease_length(uint64_t{1} << 40), kLeaseMaxNs);

  auto inbox = ShmInbox::create(1, 1, 1, 4096);
  ASSERT_TRUE(inbox.ok());
  std::atomic<uint64_t> since{0};
  const uint64_t t0 = 1'000'000'000;
  inbox->hold_lease(t0, since);
  EXPECT_EQ(inbox->lease_until(), t0 + kLeaseMinNs) << "a new stretch: the shortest lease";
  // Polls every 10 us for twice kLeaseMaxNs: the lease stretches to kLeaseMaxNs and never
  // lapses.
  uint64_t t = t0;
  for (; t < t0 + 2 * kLeaseMaxNs; t += 10'000) {
    inbox->hold_lease(t, since);
    ASSERT_GT(inbox->lease_until(), t) << "at +" << (t - t0) << " ns";
  }
  EXPECT_EQ(since.load(), t0);
  EXPECT_GE(inbox->lease_until() - t, kLeaseMaxNs * 3 / 4);
  EXPECT_LE(inbox->lease_until() - t, kLeaseMaxNs);
  // A pause longer than the lease: the next poll starts a new, short stretch.
  t = inbox->lease_until() + 1;
  inbox->hold_lease(t, since);
  EXPECT_EQ(since.load(), t);
  EXPECT_EQ(inbox->lease_until(), t + kLeaseMinNs);
  // So does a lease given up (the application went to block in get_cq_event).
  const uint64_t t1 = t;
  for (; t < t1 + 1'000'000; t += 10'000) inbox->hold_lease(t, since);
  EXPECT_GT(inbox->lease_until() - t, kLeaseMinNs) << "1 ms of polling: a longer lease";
  inbox->drop_lease();
  inbox->hold_lease(t, since);
  EXPECT_EQ(since.load(), t);
  EXPECT_EQ(inbox->lease_until(), t + kLeaseMinNs);
}

}  // namespace
}  // namespace softib::link
