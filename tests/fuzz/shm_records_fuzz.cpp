// Fuzzes the shared-memory link's reading of its inbox: ring records from a hostile or broken
// sender process (every kind, ordinary frames with their ShmFrameHeader, frames with GRH
// fields, packed records of sub-frames) read by ShmLink::poll and handed to an rc::Device.
// Whatever the records say, the link must read within each record, count what it cannot
// decode, never crash, assert, leak or hang, and leave the channel readable: after the input
// it drains to empty.
//
// The receiver, fresh for every input: one endpoint of a directory with one Active port at
// LID 1; its device has one RC QP, QPN 0x11, in RTS towards QPN 0x99 at LID 2 (rq_psn 0,
// path MTU 256, remote write) with 64 receive WQEs of 256 bytes posted, so SENDs to it
// complete and a poll that waits for completions can stop in the middle of a packed record.
//
// The input is a sequence of records, each
//   byte 0     bits 0-1  kind: 0 ordinary frame, 1 frame with GRH fields, 2 packed, 3 the
//                        next two bytes (little-endian) are the kind, as any sender may write
//              bit 2     poll once this record is written
//              bits 3-7  that poll's limit: 0 none; else stop at that many more completions
//                        (until = the CQ) and at a budget of the same number of frames
//   bytes 1-2  body length, little-endian (cut to what is left of the input and to a record's
//              largest body)
//   then       the body, as the sender would have written it
// tests/fuzz/make_shm_records_corpus.py writes seeds in this format.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "base/assert.hpp"
#include "base/clock.hpp"
#include "fuzz_target.hpp"
#include "link/shm_link.hpp"
#include "support/rc_connect.hpp"
#include "verbs/caps.hpp"

using namespace softib;
using namespace softib::verbs;
using namespace softib::link;

namespace {

constexpr uint32_t kCapacity = 16 * 1024;
constexpr uint32_t kRecvLen = 256;
constexpr uint32_t kRecvs = 64;

PortSnapshot active_port(uint16_t lid) {
  PortSnapshot s;
  s.state = 4;
  s.phys_state = 5;
  s.lid = lid;
  s.num_pkeys = 1;
  s.pkeys[0] = 0xFFFF;
  return s;
}

struct Receiver {
  Receiver()
      : hca(*dir.hca_slot(0, 0x1000)),
        port(*dir.port_slot(hca, 1)),
        ep(add_endpoint()),
        link(dir, ep.id, port, *ShmInbox::create(ep.id, static_cast<uint32_t>(::getpid()), 2, kCapacity),
             [](uint32_t) -> Result<ShmLink::PeerFds> { return Status(Code::kNotFound, "no peers here"); }),
        device(default_caps(), test::port_with_lid(Lid(1)), link, clock),
        buffer(kRecvLen * kRecvs) {
    device.set_qpn_range(kFirstQpn, kQpnBlock - 1);
    Pd* pd = device.alloc_pd();
    cq = *device.create_cq(1024, nullptr);
    mr = *device.mrs().reg(pd, buffer.data(), buffer.size(), reinterpret_cast<uint64_t>(buffer.data()),
                           access::kLocalWrite | access::kRemoteWrite);
    QpInitAttr init;
    init.cap = {16, kRecvs, 1, 1, 0};
    qp = *device.create_qp(pd, cq, cq, nullptr, init, nullptr);
    test::RcPath path{Qpn(0x99), Lid(2)};
    path.mtu = Mtu::k256;
    path.access = access::kRemoteWrite;
    path.rd_atomic = 1;
    path.retry_cnt = 1;
    path.rnr_retry = 1;
    SOFTIB_ASSERT(test::connect_rc(device, qp, path).ok());
    for (uint32_t i = 0; i < kRecvs; ++i) {
      Sge g{reinterpret_cast<uint64_t>(buffer.data()) + i * kRecvLen, kRecvLen, mr->lkey};
      RecvWr rw{i, {&g, 1}};
      size_t bad;
      SOFTIB_ASSERT(device.post_recv(qp, {&rw, 1}, &bad).ok());
    }
  }
  ShmDirectory::NewEndpoint add_endpoint() {
    dir.write_port(port, active_port(1));
    return *dir.add_endpoint(hca, static_cast<uint32_t>(::getpid()));
  }

  ManualClock clock;
  ShmDirectory dir = *ShmDirectory::create({2, 2, 2});
  uint32_t hca, port;
  ShmDirectory::NewEndpoint ep;
  ShmLink link;
  rc::Device device;
  std::vector<uint8_t> buffer;
  Cq* cq;
  const Mr* mr;
  rc::Qp* qp;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Receiver r;
  // The broken sender: a channel of r's inbox, written as any process attached to it could.
  auto region = ShmRegion::map(::fcntl(r.link.inbox().region().fd(), F_DUPFD_CLOEXEC, 0), kInboxHeaderBytes);
  SOFTIB_ASSERT(region.ok());
  auto inbox = ShmInbox::attach(std::move(*region));
  SOFTIB_ASSERT(inbox.ok());
  const auto ch = inbox->claim(0x5EED);
  SOFTIB_ASSERT(ch.has_value());
  ChannelWriter w(inbox->channel(*ch), inbox->start_position(*ch));

  auto poll = [&](uint32_t limit) {
    r.link.poll(r.device, limit == 0 ? ShmLink::kPollBudget : limit, limit == 0 ? nullptr : r.cq,
                r.cq->queued() + limit);
    r.device.progress();
    WorkCompletion wc[16];
    while (r.cq->poll(wc) != 0) {
    }
  };
  size_t at = 0;
  while (at + 3 <= size) {
    const uint8_t flags = data[at];
    uint16_t kind = static_cast<uint16_t>(flags & 3) + 1;  // kRecordFrame, kRecordFrameGlobal, kRecordPacked
    size_t len = data[at + 1] | size_t{data[at + 2]} << 8;
    at += 3;
    if ((flags & 3) == 3) {
      if (at + 2 > size) break;
      kind = static_cast<uint16_t>(data[at] | data[at + 1] << 8);
      at += 2;
    }
    len = std::min({len, size - at, w.max_body()});
    std::optional<wire::MutByteSpan> room = w.reserve(len);
    for (int i = 0; !room && i < 64; ++i) {  // a full ring: the receiver reads, and there is room
      poll(0);
      room = w.reserve(len);
    }
    SOFTIB_ASSERT_MSG(room.has_value(), "a drained ring refused a record");
    std::memcpy(room->data(), data + at, len);
    w.commit(len, kind);
    at += len;
    if ((flags & 4) != 0) poll(flags >> 3);
  }
  // Everything written is read: the channel is left empty, whatever was in it.
  for (int i = 0; i < 4096 && r.link.ready(); ++i) poll(0);
  SOFTIB_ASSERT_MSG(!r.link.ready(), "records left unread");
  return 0;
}
