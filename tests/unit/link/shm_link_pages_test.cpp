// ShmLink and the pages of its rings: a ring is mapped whole when its channel is first used
// (by the sender that claims it and by the owner's first read), a connected QP's peer is
// attached at the connection, and the owner maps the ring its next sender claims ahead of it.
#include <gtest/gtest.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <optional>
#include <utility>
#include <vector>

#include "unit/link/shm_link_fixture.hpp"

namespace softib::link {
namespace {

size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

// The channel of `inbox` a sender has claimed (the tests' one), if any.
std::optional<ChannelMemory> claimed_channel(const ShmInbox& inbox) {
  for (uint32_t i = 0; i < inbox.channels(); ++i) {
    if (inbox.channel(i).control().owner.load() != 0) return inbox.channel(i);
  }
  return std::nullopt;
}

// Pages of [p, p + bytes) that exist in the file behind the mapping (mincore), and those this
// process's page tables map (/proc/self/pagemap's "present" bit, readable unprivileged).
std::pair<size_t, size_t> resident_and_mapped(const uint8_t* p, size_t bytes) {
  const size_t page = page_size();
  const uintptr_t start = reinterpret_cast<uintptr_t>(p) / page * page;
  const size_t pages = (reinterpret_cast<uintptr_t>(p) + bytes - start + page - 1) / page;
  std::vector<unsigned char> in_core(pages);
  EXPECT_EQ(::mincore(reinterpret_cast<void*>(start), pages * page, in_core.data()), 0);
  size_t resident = 0;
  for (unsigned char c : in_core) resident += c & 1;
  size_t mapped = 0;
  const int fd = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  EXPECT_GE(fd, 0);
  std::vector<uint64_t> entries(pages);
  const ssize_t want = static_cast<ssize_t>(pages * sizeof(uint64_t));
  EXPECT_EQ(::pread(fd, entries.data(), pages * sizeof(uint64_t), static_cast<off_t>(start / page * sizeof(uint64_t))), want);
  ::close(fd);
  for (uint64_t e : entries) mapped += (e >> 63) & 1;
  return {resident, mapped};
}

// A ring's pages are mapped whole when a sender claims its channel and when the owner first
// reads it, not one by one as the positions reach them: the writer and the reader of a page
// faulting it at the same moment made one wait ~10 us for the other (perftest's ib_send_lat
// took such a stall every ~30 iterations of a ring's first lap).
TEST_F(ShmLinkTest, ARingsPagesAreMappedWhenItsChannelIsFirstUsed) {
  build();
  post_recv(*b, 1, 0, 64);
  post(*a, WrOpcode::kSend, 0, 16, 0);
  a->device.progress();  // a claims a channel of b's inbox and writes one record
  const std::optional<ChannelMemory> mem = claimed_channel(b->link.inbox());
  ASSERT_TRUE(mem.has_value());
  const size_t page = page_size();
  const size_t pages = mem->capacity() / page;
  ASSERT_GE(pages, 8u) << "a ring of several pages";
  const auto before = resident_and_mapped(mem->data(), mem->capacity());
  EXPECT_GE(before.first, pages) << "the sender allocated every page of the ring, not the one it wrote";
  EXPECT_EQ(b->link.poll(b->device), 1u);
  const auto after = resident_and_mapped(mem->data(), mem->capacity());
  EXPECT_GE(after.second, pages) << "the owner's first read mapped the whole ring";
  EXPECT_EQ(wait(*a).status, WcStatus::kSuccess);
}

// A connected QP's link sets up its way to the peer when the QP is connected (modify_qp to
// RTR/RTS names the destination): the peer's inbox attached, a channel claimed and its ring's
// pages allocated, before any frame. perftest times from its first post, and that first
// frame used to pay for softibd's answer, the mapping, the ring's pages and the membarrier
// registration (an RCU grace period, ~7 ms in D state).
TEST_F(ShmLinkTest, AConnectedQpsPeerIsAttachedWhenTheQpIsConnectedNotAtItsFirstFrame) {
  build();
  const size_t page = page_size();
  for (Side* receiver : {b.get(), a.get()}) {
    const std::optional<ChannelMemory> mem = claimed_channel(receiver->link.inbox());
    ASSERT_TRUE(mem.has_value()) << "the peer claimed a channel of endpoint " << receiver->ep.id << " at connection";
    EXPECT_GE(resident_and_mapped(mem->data(), mem->capacity()).first, mem->capacity() / page)
        << "and allocated its ring's pages";
  }
  EXPECT_EQ(a->link.counters().frames_sent, 0u);
  EXPECT_EQ(b->link.counters().frames_sent, 0u);
  // The way is the one frames take.
  post_recv(*b, 1, 0, 64);
  post(*a, WrOpcode::kSend, 0, 16, 0);
  EXPECT_EQ(wait(*a).status, WcStatus::kSuccess);
  EXPECT_EQ(wait(*b).status, WcStatus::kSuccess);
}

// The owner maps the ring of the channel its next sender will claim ahead of that sender
// (ShmLink::warm_spare_channel, on its engine thread when idle): the sender's first frame
// then maps pages that are there (~0.1 ms) instead of allocating them (~0.7 ms), and the
// owner's first read maps nothing. One spare at a time: the next once a sender took it.
TEST_F(ShmLinkTest, TheOwnerMapsTheRingItsNextSenderClaimsAheadOfIt) {
  build();
  auto resolver = [](uint32_t) -> Result<ShmLink::PeerFds> { return Status(Code::kNotFound, "none"); };
  Side c(dir, resolver, 2, 3, clock, 64 * 1024);
  const ShmInbox& inbox = c.link.inbox();
  const size_t page = page_size();
  // The pages a ring spans (its start shares a page with its channel's control lines, which
  // the inbox's creation wrote).
  const auto data = reinterpret_cast<uintptr_t>(inbox.channel(0).data());
  const size_t pages = (data + inbox.channel(0).capacity() - data / page * page + page - 1) / page;
  EXPECT_LE(resident_and_mapped(inbox.channel(0).data(), inbox.channel(0).capacity()).first, 1u);
  EXPECT_FALSE(c.link.channel_warmed(0));

  EXPECT_TRUE(c.link.warm_spare_channel());
  auto ring = resident_and_mapped(inbox.channel(0).data(), inbox.channel(0).capacity());
  EXPECT_EQ(ring.first, pages) << "allocated";
  EXPECT_EQ(ring.second, pages) << "and mapped in the owner";
  EXPECT_TRUE(c.link.channel_warmed(0));
  EXPECT_LE(resident_and_mapped(inbox.channel(1).data(), inbox.channel(1).capacity()).first, 1u)
      << "one spare, not every channel";
  EXPECT_FALSE(c.link.warm_spare_channel()) << "the spare is ready";
  EXPECT_EQ(c.link.channels_warmed(), 1u);

  // A sender (another mapping of the inbox, as a peer process has) claims the spare.
  auto region = ShmRegion::map(dup_fd(inbox.region().fd()), kInboxHeaderBytes);
  ASSERT_TRUE(region.ok());
  auto peer_view = ShmInbox::attach(std::move(*region));
  ASSERT_TRUE(peer_view.ok());
  EXPECT_EQ(peer_view->claim(0x77), 0u) << "the next sender takes the warmed channel";
  EXPECT_TRUE(c.link.warm_spare_channel());
  EXPECT_TRUE(c.link.channel_warmed(1));
  EXPECT_EQ(resident_and_mapped(inbox.channel(1).data(), inbox.channel(1).capacity()).first, pages);
  EXPECT_FALSE(c.link.warm_spare_channel());
  EXPECT_EQ(c.link.channels_warmed(), 2u);
}

// The same a piece at a time (ShmLink::warm_spare_chunk, the engine's way for the spares
// after the first): each call maps the next kWarmChunk bytes of the spare's ring, the channel
// counts as warmed only once the whole ring is mapped, and a spare claimed halfway is left to
// its sender while the next free channel is begun from its start.
TEST_F(ShmLinkTest, TheOwnerMapsTheNextSparesRingAPieceAtATime) {
  build();
  auto resolver = [](uint32_t) -> Result<ShmLink::PeerFds> { return Status(Code::kNotFound, "none"); };
  Side c(dir, resolver, 2, 3, clock, 256 * 1024);
  const ShmInbox& inbox = c.link.inbox();
  const size_t page = page_size();
  const size_t pieces = inbox.channel(0).capacity() / ShmLink::kWarmChunk;
  ASSERT_EQ(pieces, 4u) << "a 256 KiB ring";
  auto mapped = [&](uint32_t i) { return resident_and_mapped(inbox.channel(i).data(), inbox.channel(i).capacity()).second; };
  for (size_t k = 1; k <= pieces; ++k) {
    SCOPED_TRACE(k);
    EXPECT_FALSE(c.link.channel_warmed(0));
    EXPECT_TRUE(c.link.warm_spare_chunk());
    // The ring's first page shares its page with the channel's control lines (mapped at the
    // inbox's creation), so each piece maps its own pages and perhaps that one.
    EXPECT_GE(mapped(0), k * ShmLink::kWarmChunk / page);
    EXPECT_LE(mapped(0), k * ShmLink::kWarmChunk / page + 1);
  }
  EXPECT_TRUE(c.link.channel_warmed(0));
  EXPECT_EQ(c.link.channels_warmed(), 1u);
  EXPECT_FALSE(c.link.warm_spare_chunk()) << "the spare is ready";
  EXPECT_LE(mapped(1), 1u) << "one spare, not every channel";

  // A sender takes it: the next piece begins channel 1; a sender takes that one too, halfway.
  auto region = ShmRegion::map(dup_fd(inbox.region().fd()), kInboxHeaderBytes);
  ASSERT_TRUE(region.ok());
  auto peer_view = ShmInbox::attach(std::move(*region));
  ASSERT_TRUE(peer_view.ok());
  EXPECT_EQ(peer_view->claim(0x77), 0u);
  EXPECT_TRUE(c.link.warm_spare_chunk());
  EXPECT_TRUE(c.link.warm_spare_chunk());
  EXPECT_GE(mapped(1), 2 * ShmLink::kWarmChunk / page);
  EXPECT_EQ(peer_view->claim(0x78), 1u);
  EXPECT_TRUE(c.link.warm_spare_chunk());
  EXPECT_FALSE(c.link.channel_warmed(1)) << "half warmed, and now its sender's to map";
  EXPECT_GE(mapped(2), ShmLink::kWarmChunk / page);
  EXPECT_LE(mapped(2), ShmLink::kWarmChunk / page + 1) << "channel 2 from its start";
  EXPECT_TRUE(c.link.warm_spare_channel()) << "the rest of channel 2 at once";
  EXPECT_TRUE(c.link.channel_warmed(2));
  EXPECT_EQ(mapped(2), resident_and_mapped(inbox.channel(2).data(), inbox.channel(2).capacity()).first);
  EXPECT_EQ(c.link.channels_warmed(), 2u);
}

// Frames reach a channel whose ring the owner warmed (its first read skips the mapping).
TEST_F(ShmLinkTest, FramesArriveThroughAWarmedChannel) {
  make_sides();
  EXPECT_TRUE(a->link.warm_spare_channel());
  EXPECT_TRUE(b->link.warm_spare_channel());
  connect(*a, *b, 2);
  connect(*b, *a, 1);
  EXPECT_NE(b->link.inbox().channel(0).control().owner.load(), 0u) << "a claimed b's warmed channel";
  for (uint32_t i = 0; i < 3; ++i) {
    post_recv(*b, i, 0, 64);
    post(*a, WrOpcode::kSend, 0, 16, 0);
    EXPECT_EQ(wait(*a).status, WcStatus::kSuccess);
    EXPECT_EQ(wait(*b).status, WcStatus::kSuccess);
  }
}

}  // namespace
}  // namespace softib::link
