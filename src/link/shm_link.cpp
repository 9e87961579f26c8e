#include "link/shm_link.hpp"

#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstring>

#include "base/clock.hpp"
#include "base/log.hpp"
#include "link/critical_path.hpp"
#include "packet/opcode.hpp"
#include "wire/bth.hpp"

namespace softib::link {

namespace {

constexpr uint8_t kPortActive = 4;  // IBA PortState Active

// Whether a frame with this BTH opcode is work the receiving engine finishes without its
// application (wake_away): any request but a SEND. An RDMA WRITE lands where the application
// may be spinning on memory for it, and a READ or atomic request is answered by the device;
// a SEND's or a response's completion waits for the application's poll, whatever the engine
// does. A table indexed by the opcode byte: commit() asks for every frame.
constexpr std::array<bool, 256> kEngineWork = [] {
  std::array<bool, 256> t{};
  for (const packet::OpcodeInfo& info : packet::kOpcodeTable) t[info.value()] = info.is_request() && !info.is_send();
  return t;
}();
static_assert(kEngineWork[to_underlying(packet::Opcode::kRcRdmaWriteOnly)] &&
              kEngineWork[to_underlying(packet::Opcode::kRcRdmaReadRequest)] &&
              !kEngineWork[to_underlying(packet::Opcode::kRcSendOnly)] &&
              !kEngineWork[to_underlying(packet::Opcode::kRcAcknowledge)]);
bool engine_work(uint8_t opcode) { return kEngineWork[opcode]; }

// {windows, switches} of CopyChoosers, summed (the debug log's).
void add_choices(std::pair<uint64_t, uint64_t>& c, const CopyChooser& chooser) {
  c.first += chooser.windows();
  c.second += chooser.switches();
}

// critical_path.hpp: the record of a one-packet SEND, which a ping-pong's poll waits for
// (a bare ACK that comes first does not start the path: its poll goes on waiting).
bool awaited_send(const Record& rec) {
  if (rec.kind != kRecordFrame || rec.body.size() <= sizeof(ShmFrameHeader)) return false;
  const auto op = static_cast<packet::Opcode>(rec.body[sizeof(ShmFrameHeader)]);
  return op == packet::Opcode::kRcSendOnly || op == packet::Opcode::kRcSendOnlyWithImmediate;
}

// A burst's fields (rc::Burst), over the header reserve() stored.
void store_burst_fields(uint8_t* at, const rc::Burst& b, uint8_t flags) {
  put_field<decltype(ShmFrameHeader::burst_mtu)>(at, offsetof(ShmFrameHeader, burst_mtu), b.mtu);
  put_field<decltype(ShmFrameHeader::packets)>(at, offsetof(ShmFrameHeader, packets), b.packets);
  put_field<decltype(ShmFrameHeader::last_opcode)>(at, offsetof(ShmFrameHeader, last_opcode), b.last_opcode);
  put_field<decltype(ShmFrameHeader::last_flags)>(at, offsetof(ShmFrameHeader, last_flags), flags);
  put_field<decltype(ShmFrameHeader::last_ext)>(at, offsetof(ShmFrameHeader, last_ext), b.last_ext);
}

// What an ordinary frame (one packet, no burst) hands the device as its burst: nothing to
// carry over (callgrind, 8-byte ping-pong: ~20 instructions fewer on the path from a request
// to its answer than building an rc::Burst). take_ordinary() and take_packed().
constexpr rc::Burst kOrdinaryBurst{};

}  // namespace

ShmLink::ShmLink(const ShmDirectory& directory, uint32_t endpoint, uint32_t port_slot, ShmInbox inbox, Resolver resolver)
    : dir_(directory),
      dir_generation_(directory.generation_word()),
      endpoint_(endpoint),
      port_slot_(port_slot),
      inbox_(std::move(inbox)),
      resolver_(std::move(resolver)),
      token_(uint64_t{static_cast<uint32_t>(::getpid())} << 32 | endpoint) {
  for (uint32_t i = 0; i < inbox_.channels(); ++i) watches_[i].mem = inbox_.channel(i);
}

ShmLink::~ShmLink() = default;

void ShmLink::refresh() {
  const uint64_t g = dir_.generation();
  if (g == generation_) return;
  generation_ = g;
  route_ = Route{};
  std::fill(port_state_.begin(), port_state_.end(), 0);
  // Peers whose process is gone: their inboxes are unmapped, frames to them are lost.
  std::erase_if(peers_, [&](const std::unique_ptr<Peer>& p) {
    // (route_ was reset above: it never points at a peer erased here)
    if (dir_.endpoint_alive(p->endpoint)) return false;
    SOFTIB_LOG(kInfo, "shm", "endpoint {}: peer endpoint {} is gone (directory generation {})", endpoint_, p->endpoint, g);
    if (last_peer_ == p.get()) last_peer_ = nullptr;
    if (pack_.peer == p.get()) {
      // The open pack's frames are lost with their peer (found by ASan: a pack to a peer
      // that exited during a batch was published into its freed inbox at the batch's end).
      counters_.lost_dead_peer += pack_.frames;
      pack_ = Pack{};
    }
    return true;
  });
}

bool ShmLink::port_active(uint32_t slot) {
  if (slot >= port_state_.size()) port_state_.resize(slot + 1, 0);
  if (port_state_[slot] == 0) port_state_[slot] = std::max<uint8_t>(dir_.read_port(slot).state, 1);
  return port_state_[slot] == kPortActive;
}

ShmLink::Peer* ShmLink::peer(uint32_t endpoint) {
  if (Peer* known = known_peer(endpoint)) return last_peer_ = known;
  // First frame to this endpoint: softibd hands over its inbox and doorbell. Once per peer.
  auto fds = resolver_(endpoint);
  if (!fds) {
    SOFTIB_LOG(kWarn, "shm", "endpoint {}: cannot reach endpoint {}: {}", endpoint_, endpoint, fds.error().to_string());
    return nullptr;
  }
  Doorbell bell = Doorbell::adopt(fds->doorbell_fd);
  auto region = ShmRegion::map(fds->inbox_fd, kInboxHeaderBytes);
  if (!region) return nullptr;
  auto inbox = ShmInbox::attach(std::move(*region));
  if (!inbox) {
    SOFTIB_LOG(kWarn, "shm", "endpoint {}: the inbox of endpoint {} is malformed: {}", endpoint_, endpoint,
               inbox.error().to_string());
    return nullptr;
  }
  auto p = std::make_unique<Peer>(Peer{endpoint, std::move(*inbox), std::move(bell), std::nullopt});
  if (auto ch = p->inbox.claim(token_)) {
    const ChannelMemory mem = p->inbox.channel(*ch);
    ShmRegion::prefault(mem.data(), mem.capacity());  // once, before the first frame
    p->writer.emplace(mem, p->inbox.start_position(*ch));
    p->engine_work_end = p->writer->position();
  } else {
    SOFTIB_LOG(kWarn, "shm", "endpoint {}: every channel of endpoint {} is taken", endpoint_, endpoint);
  }
  peers_.push_back(std::move(p));
  return last_peer_ = peers_.back().get();
}

void ShmLink::prepare(const rc::FrameAddr& to, Qpn dest_qp) {
  refresh();
  const auto dest = dir_.find(to.dlid, dest_qp);
  if (!dest || dest->endpoint == 0 || dest->endpoint == endpoint_ || !dir_.endpoint_alive(dest->endpoint)) return;
  peer(dest->endpoint);
}

wire::MutByteSpan ShmLink::discard(size_t len) {
  building_ = nullptr;
  building_packed_ = false;
  if (scratch_.size() < len) scratch_.resize(len);
  return wire::MutByteSpan(scratch_.data(), len);
}

size_t ShmLink::max_reference_bytes(const rc::FrameAddr& to, Qpn dest_qp) {
  if (references_ == References::kNever || max_burst_ == 0) return 0;
  // Only the peer the route already knows (the frame before this one went there): the first
  // frames of a message go inline and find the peer.
  const uint32_t block = dest_qp.value() / kQpnBlock;
  if (route_.peer == nullptr || route_.dlid != to.dlid.value() || route_.block != block || !route_.peer->writer)
    return 0;
  // The receiver's word: whether it may read this process's memory, and (auto) which way it
  // measured faster. A line it writes only when the answer changes: it stays in this cache.
  const uint64_t word = route_.peer->writer->control().reference.load(std::memory_order_relaxed);
  if ((word & kReferenceAllowed) == 0) return 0;
  if (references_ == References::kMeasured && (word & kReferencePreferred) == 0) return 0;
  return (word & kReferenceHelped) != 0 ? max_ref_burst_helped_ : max_ref_burst_;
}

wire::MutByteSpan ShmLink::reserve_frame(const rc::FrameAddr& to, Qpn dest_qp, size_t len, bool may_pack) {
  refresh();
  Peer* p;
  const uint32_t block = dest_qp.value() / kQpnBlock;
  if (route_.peer != nullptr && route_.dlid == to.dlid.value() && route_.block == block) {
    // Cached with both ports Active; a port that changes state changes the directory's
    // generation, which refresh() has just looked at (and then dropped the route).
    p = route_.peer;
  } else {
    if (!port_active(port_slot_)) {
      ++counters_.lost_port_down;
      return discard(len);
    }
    const auto dest = dir_.find(to.dlid, dest_qp);
    if (!dest || dest->endpoint == 0) {
      ++counters_.lost_no_endpoint;
      return discard(len);
    }
    if (!port_active(dest->port_slot)) {
      ++counters_.lost_port_down;
      return discard(len);
    }
    p = peer(dest->endpoint);
    if (p == nullptr || !p->writer) {
      ++counters_.lost_dead_peer;
      return discard(len);
    }
    route_ = Route{to.dlid.value(), block, p};
  }
  if (may_pack && !to.global && len <= kPackFrameMax) {
    if (const wire::MutByteSpan room = reserve_packed(p, to, len); !room.empty()) return room;
  }
  flush_pack();  // a record of its own goes behind the pack (one reservation a ring at a time)
  const size_t header = sizeof(ShmFrameHeader) + (to.global ? sizeof(ShmGrhFields) : 0);
  if (header + len > p->writer->max_body()) {
    // Larger than a channel can carry: the transport never builds such a frame.
    ++counters_.lost_no_endpoint;
    return discard(len);
  }
  const std::optional<wire::MutByteSpan> reserved = p->writer->reserve(header + len);
  if (!reserved) {
    if (!dir_.endpoint_alive(p->endpoint)) {
      ++counters_.lost_dead_peer;
      route_ = Route{};
      return discard(len);
    }
    ++counters_.refused;
    return {};
  }
  return start_record(p, *reserved, to, len);
}

wire::MutByteSpan ShmLink::start_record(Peer* p, wire::MutByteSpan room, const rc::FrameAddr& to, size_t len) {
  if (to.global) {
    uint8_t* g = room.data() + sizeof(ShmFrameHeader);
    std::memcpy(g + offsetof(ShmGrhFields, sgid), to.sgid.raw().data(), 16);
    std::memcpy(g + offsetof(ShmGrhFields, dgid), to.dgid.raw().data(), 16);
    put_field<decltype(ShmGrhFields::flow_label)>(g, offsetof(ShmGrhFields, flow_label), to.flow_label);
    put_field<decltype(ShmGrhFields::traffic_class)>(g, offsetof(ShmGrhFields, traffic_class), to.traffic_class);
    put_field<decltype(ShmGrhFields::hop_limit)>(g, offsetof(ShmGrhFields, hop_limit), to.hop_limit);
    std::memset(g + offsetof(ShmGrhFields, reserved), 0, sizeof(ShmGrhFields::reserved));
  }
  return start_record_at(p, room.data(), room.size() - len, to.global ? kRecordFrameGlobal : kRecordFrame, to, len);
}

wire::MutByteSpan ShmLink::reserve_packed(Peer* p, const rc::FrameAddr& to, size_t len) {
  const size_t need = sub_frame_span(len);
  if (pack_.peer != p || pack_.room - pack_.used < need) {
    flush_pack();
    const std::optional<wire::MutByteSpan> r = p->writer->reserve(kPackBody);
    if (!r) return {};  // no room for a whole pack: the frame goes as a record of its own
    pack_ = Pack{p, r->data(), 0, r->size()};
  }
  uint8_t* at = pack_.body + pack_.used;
  put_field<decltype(ShmSubFrame::slid)>(at, offsetof(ShmSubFrame, slid), to.slid.value());
  put_field<decltype(ShmSubFrame::dlid)>(at, offsetof(ShmSubFrame, dlid), to.dlid.value());
  put_field<decltype(ShmSubFrame::sl)>(at, offsetof(ShmSubFrame, sl), to.sl);
  put_field<decltype(ShmSubFrame::reserved)>(at, offsetof(ShmSubFrame, reserved), 0);
  building_ = p;
  building_at_ = at;
  building_packed_ = true;
  return wire::MutByteSpan(at + sizeof(ShmSubFrame), len);
}

void ShmLink::publish_pack() {
  Peer* p = pack_.peer;
  pack_.peer = nullptr;
  if (pack_.used == 0) return;  // its one frame was dropped uncommitted: the space is reserved again later
  p->writer->commit(pack_.used, kRecordPacked);
  if (pack_.engine_work) p->engine_work_end = p->writer->position();
  ++counters_.packs_sent;
  ring_if_asleep(*p);
}

void ShmLink::ring_if_asleep(Peer& p) {
  if (p.inbox.needs_doorbell()) {
    ++counters_.doorbells;
    p.doorbell.ring();
  }
}

bool ShmLink::wake_stalled() {
  bool rang = false;
  for (auto& up : peers_) {
    Peer& p = *up;
    if (!p.writer) continue;
    // Rung again at each call while the peer reads nothing (at most one a kStallTicks for
    // the engine): a ring that found its engine between sleeps is not the last word.
    if (p.writer->control().head.load(std::memory_order_acquire) == p.writer->position()) continue;
    ring_stalled(p);
    rang = true;
  }
  return rang;
}

void ShmLink::ring_stalled(Peer& p) {
  ++counters_.stall_rings;
  p.doorbell.ring();
}

bool ShmLink::wake_away() {
  bool rang = false;
  for (auto& up : peers_) {
    Peer& p = *up;
    if (!p.writer || !p.inbox.away()) continue;
    const uint64_t head = p.writer->control().head.load(std::memory_order_acquire);
    // Positions are free-running byte counts: they never wrap.
    if (head < p.engine_work_end && ring_away(p, head)) rang = true;
  }
  return rang;
}

bool ShmLink::wake_away_for_acks(const std::function<bool()>& awaiting_acks) {
  bool rang = false;
  std::optional<bool> awaiting;  // asked once, and only if an away peer read everything
  for (auto& up : peers_) {
    Peer& p = *up;
    if (!p.writer || !p.inbox.away()) continue;
    const uint64_t head = p.writer->control().head.load(std::memory_order_acquire);
    if (head != p.writer->position()) continue;  // wake_stalled's: something is unread
    if (!awaiting) awaiting = awaiting_acks();
    if (!*awaiting) return rang;
    if (ring_away(p, head)) rang = true;
  }
  return rang;
}

bool ShmLink::ring_away(Peer& p, uint64_t head) {
  // Once until it reads or this link writes: a peer whose thread was pre-empted between a
  // poll that found its completion and its next poll would otherwise be rung at every look
  // for as long as the pre-emption lasts.
  const uint64_t position = p.writer->position();
  if (head == p.away_rung_head && position == p.away_rung_position) return false;
  p.away_rung_head = head;
  p.away_rung_position = position;
  ++counters_.away_rings;
  ring_stalled(p);
  return true;
}

std::pair<uint64_t, uint64_t> ShmLink::distance_windows() const {
  std::pair<uint64_t, uint64_t> w{0, 0};
  for (const auto& p : peers_) {
    if (!p->writer) continue;
    w.first += p->writer->windows_near();
    w.second += p->writer->windows_far();
  }
  return w;
}

std::pair<uint64_t, uint64_t> ShmLink::copy_choices() const {
  std::pair<uint64_t, uint64_t> c{0, 0};
  for (const auto& p : peers_) add_choices(c, p->copy);
  return c;
}

std::pair<uint64_t, uint64_t> ShmLink::reference_choices() const {
  std::pair<uint64_t, uint64_t> c{0, 0};
  for (const Reader& r : readers_) add_choices(c, r.way);
  return c;
}

void ShmLink::copy_large(void* dst, const void* src, size_t n) {
  bool cached = peer_copy_ == PeerCopy::kCached;
  if (peer_copy_ == PeerCopy::kAuto && building_ != nullptr) {
    const ChannelWriter& w = *building_->writer;
    const bool near = w.consumer_near();
    cached = building_->copy.cached(cycle_ticks(), n, near, w.capacity(), w.times_full());
    if (near) ++counters_.copies_near;
  }
  ++(cached ? counters_.copies_cached : counters_.copies_streamed);
  if (cached)
    std::memcpy(dst, src, n);
  else
    copy_streaming(dst, src, n);
}

void ShmLink::commit_burst(size_t len, const rc::Burst& burst) {
  if (building_ == nullptr) return;  // a lost frame
  if (burst.packets > 1) {
    SOFTIB_ASSERT_MSG(!building_packed_, "a burst is reserved with reserve_burst(), never packed");
    // The burst's fields go into the frame header written at reserve().
    uint8_t flags = static_cast<uint8_t>((burst.last_ack_req ? 1 : 0) | (burst.last_solicited ? 2 : 0));
    if (burst.by_reference) {
      flags |= kFrameByReference;
      ++counters_.ref_frames_sent;
    }
    store_burst_fields(building_at_, burst, flags);
  }
  commit(len);
}

void ShmLink::commit(size_t len) {
  Peer* p = building_;
  building_ = nullptr;
  if (p == nullptr) return;  // a lost frame
  ++counters_.frames_sent;
  if (building_packed_) {
    // Published with its pack (flush_pack).
    put_field<decltype(ShmSubFrame::length)>(building_at_, offsetof(ShmSubFrame, length), static_cast<uint16_t>(len));
    if (len != 0 && engine_work(building_at_[sizeof(ShmSubFrame)])) pack_.engine_work = true;
    pack_.used += sub_frame_span(len);
    ++pack_.frames;
    ++counters_.frames_packed;
    return;
  }
  // The transport's first byte is the BTH's opcode (wake_away).
  const bool work = len != 0 && engine_work(building_at_[building_header_]);
  p->writer->commit(building_header_ + len, building_kind_);
  critical_path::end();
  if (work) p->engine_work_end = p->writer->position();
  ring_if_asleep(*p);
}

size_t ShmLink::poll(rc::Device& device, size_t budget, const verbs::Cq* until, size_t want) {
  size_t n = 0;
  size_t packets = 0;       // packets taken in frames and bursts (not packed records: one each, small)
  size_t packed = 0;        // frames taken from packed records
  bool cut_short = false;   // stopped by the budget or the answer, not by empty channels
  // The caller has its answer: no more frames (checked before each one).
  auto answered = [&] { return until != nullptr && until->queued() >= want; };
  // The budget or the share of packets is spent: the rest waits for the next poll.
  auto spent = [&] { return n >= budget || packets >= kPollPackets; };
  any_active_channel([&](uint32_t i) {
    if (spent()) return true;
    Reader& r = readers_[i];
    // A channel changes hands only through housekeeping() here, which forgets its reader:
    // a reader's token is the channel's owner, and the shared word is read once.
    if (!r.reader) {
      const ChannelMemory fresh = inbox_.channel(i);
      const uint64_t owner = fresh.control().owner.load(std::memory_order_acquire);
      if (owner == 0) return false;
      r.token = owner;
      // A new sender: once, unless warm_spare_channel() mapped the ring already.
      if (!channel_warmed(i)) ShmRegion::prefault(fresh.data(), fresh.capacity());
      // Whether its payloads may come by reference, answered before its second frame can ask
      // (it asks only once this is set): a probe of ~1 us once per sender.
      const auto pid = dir_.endpoint_pid(static_cast<uint32_t>(owner));
      const bool readable = pid && may_read(static_cast<int32_t>(*pid));
      fresh.control().reference.store(
          readable ? (kReferenceAllowed | (help_min_ != 0 ? kReferenceHelped : 0)) : kReferenceRefused,
          std::memory_order_relaxed);
      r.reader.emplace(fresh, fresh.control().head.load(std::memory_order_acquire));
      r.packed_at = 0;
      r.pid = pid ? static_cast<int32_t>(*pid) : 0;
    }
    // A copy this sender offered back for a payload this link sent it by reference: made
    // first, the sender waits on it.
    serve_help(i);
    // The sender still writes the copy of the burst at the head: the channel waits.
    if (r.later && copy_pending(r)) return false;
    for (;;) {
      if (answered() || spent()) {  // the answer first: the usual reason a poll stops
        cut_short = true;
        break;
      }
      const auto rec = r.reader->peek();
      if (!rec) break;
      if (critical_path::kEnabled && until != nullptr && awaited_send(*rec)) critical_path::begin();
      if (rec->kind == kRecordPacked) {
        // The rest of the record waits, in place, when the budget or the answer comes first.
        const size_t before = n;
        const bool whole = take_packed(device, r, rec->body, n, budget, until, want);
        packed += n - before;
        if (!whole) {
          cut_short = true;
          break;
        }
      } else {
        const uint32_t took = take_frame(device, r, *rec);
        if (took == 0) break;  // it stays, for its next delivery
        express_ = i;
        packets += took;
        ++n;
      }
      r.reader->release();
    }
    watch(i, r.later ? Watch::kLater : r.reader->position());  // before publish(): see Watch
    r.reader->publish();
    return false;
  });
  if (spent()) cut_short = true;  // channels not looked at
  drained_stream_ = !cut_short && packed >= kStreamFrames;
  return n;
}

[[gnu::always_inline]] inline bool ShmLink::take_ordinary(rc::Device& device, const Record& rec) {
  if (rec.kind != kRecordFrame || rec.body.size() < sizeof(ShmFrameHeader)) return false;
  ShmFrameHeader fh;
  std::memcpy(&fh, rec.body.data(), sizeof fh);
  if (fh.packets > 1 || (fh.last_flags & kFrameByReference) != 0) return false;
  // Only the three fields an ordinary frame carries are written: its GRH fields stay zero
  // (a new FrameAddr's zeroing of them took a `rep stosb` of 43 bytes in one profile-guided
  // build: callgrind counts that as ~45 instructions of the ping-pong's path).
  rc::FrameAddr& from = ordinary_from_;
  from.slid = Lid(fh.slid);
  from.dlid = Lid(fh.dlid);
  from.sl = fh.sl;
  ++counters_.frames_received;
  device.receive(from, rec.body.subspan(sizeof(ShmFrameHeader)), kOrdinaryBurst);
  return true;
}

bool ShmLink::take_express(rc::Device& device) {
  if (express_ >= readers_.size()) return false;
  Reader& r = readers_[express_];
  // housekeeping() forgot the channel's reader, or its head waits on a copy: poll()'s.
  if (!r.reader || r.later) return false;
  if (r.reader->memory().control().help.state.load(std::memory_order_relaxed) == kHelpOffered) return false;
  const auto rec = r.reader->peek();
  if (!rec) return false;
  if (critical_path::kEnabled && awaited_send(*rec)) critical_path::begin();  // (poll() may begin it again: a no-op)
  if (!take_ordinary(device, *rec)) return false;
  ++counters_.express_frames;
  r.reader->release();
  // ready() looks past it from now on (a Watch left on the record taken made each idle poll
  // after it, and the engine's last look before a sleep, run a step for nothing).
  watch(express_, r.reader->position());
  return true;
}

bool ShmLink::copy_later_into(Qpn qp) {
  if (copies_later_ == 0) return false;
  return any_active_channel([&](uint32_t i) {
    Reader& r = readers_[i];
    return r.later_qpn == qp.value() && live_copy_later(r);
  });
}

uint32_t ShmLink::take_frame(rc::Device& device, Reader& r, const Record& rec) {
  if (take_ordinary(device, rec)) return 1;
  rc::FrameAddr from;
  const size_t header = sizeof(ShmFrameHeader) + (rec.kind == kRecordFrameGlobal ? sizeof(ShmGrhFields) : 0);
  if ((rec.kind != kRecordFrame && rec.kind != kRecordFrameGlobal) || rec.body.size() < header) {
    ++counters_.malformed;
  } else {
    ShmFrameHeader fh;
    std::memcpy(&fh, rec.body.data(), sizeof fh);
    from.slid = Lid(fh.slid);
    from.dlid = Lid(fh.dlid);
    from.sl = fh.sl;
    if (fh.packets > 1) choose_way(r, fh);
    rc::Burst burst;
    burst.packets = fh.packets;
    burst.mtu = fh.burst_mtu;
    burst.last_opcode = fh.last_opcode;
    burst.last_ack_req = (fh.last_flags & 1) != 0;
    burst.last_solicited = (fh.last_flags & 2) != 0;
    burst.last_ext = fh.last_ext;
    bool deliver = true;
    if ((fh.last_flags & kFrameByReference) != 0) {
      // The sender's process as softibd knows it (never the frame's or the token's word).
      burst.by_reference = true;
      burst.ref_pid = static_cast<int32_t>(dir_.endpoint_pid(static_cast<uint32_t>(r.token)).value_or(0));
      if ((r.reader->memory().control().reference.load(std::memory_order_relaxed) & kReferenceAllowed) == 0) {
        ++counters_.ref_refused;  // a sender that did not wait for the answer: lost, as on a wire
        deliver = false;
      } else if (r.later) {
        // Delivered again, its sender's copy written (or failed, or the sender gone).
        help_.arm_again(known_peer(static_cast<uint32_t>(r.token)), &r.reader->memory().control());
        burst.help = &help_;
      } else if (help_min_ != 0 && size_t{fh.packets} * verbs::mtu_bytes(static_cast<verbs::Mtu>(fh.burst_mtu)) >=
                                       2 * help_min_) {
        // The sender may write half in: through this link's channel to it, if it has one (no
        // attaching here: a WRITE's responder attached at RTR, a READ's requester sent it).
        if (Peer* p = known_peer(static_cast<uint32_t>(r.token)); p != nullptr && p->writer && !p->help_failed) {
          help_.arm(p, &r.reader->memory().control());
          burst.help = &help_;
        }
      }
    }
    if (rec.kind == kRecordFrameGlobal) {
      ShmGrhFields g;
      std::memcpy(&g, rec.body.data() + sizeof fh, sizeof g);
      from.global = true;
      std::array<uint8_t, 16> raw;
      std::memcpy(raw.data(), g.sgid, 16);
      from.sgid = Gid(raw);
      std::memcpy(raw.data(), g.dgid, 16);
      from.dgid = Gid(raw);
      from.flow_label = g.flow_label;
      from.traffic_class = g.traffic_class;
      from.hop_limit = g.hop_limit;
    }
    if (deliver) device.receive(from, rec.body.subspan(header), burst);
    if (burst.help != nullptr) {
      const bool later = help_.later();
      help_.disarm();
      if (later != r.later) later ? ++copies_later_ : --copies_later_;
      if (later && !r.later) {
        const auto bth = wire::Bth::decode(rec.body.subspan(header));
        r.later_qpn = bth ? bth->dest_qp.value() : 0;  // a burst the device took has a BTH
        r.alive_at = 0;  // a new copy: its sender is asked again
      }
      r.later = later;
      if (later) return 0;  // not taken yet: counted when it is
    }
    ++counters_.frames_received;
    return std::max<uint32_t>(fh.packets, 1);
  }
  return 1;
}

// Each large burst of the way in use is timed from when it is taken (before its pull or copy
// out) to when the next burst is: the channel's period, bounded by whichever side is slower.
// Bursts that came the other way (a SEND's, always through the ring; the old way's backlog
// after a change) are not counted, nor is the time they took; after a change CopyChooser does
// not count kRefSettleBytes either, a QP's window filling at the new way's pace. The sender
// follows the word only with SOFTIB_SHM_CMA=auto; measuring costs one rdtsc a burst.
void ShmLink::choose_way(Reader& r, const ShmFrameHeader& fh) {
  std::atomic<uint64_t>& word = r.reader->memory().control().reference;
  const uint64_t was = word.load(std::memory_order_relaxed);
  if ((was & kReferenceAllowed) == 0) return;
  const bool by_reference = (fh.last_flags & kFrameByReference) != 0;
  const uint64_t now = cycle_ticks();
  if (by_reference != r.way.way() || !verbs::mtu_valid(fh.burst_mtu)) {  // the MTU: the sender's word
    // The last burst of this way ends here, and the next is timed from its own arrival: not
    // across this one (a SEND's bursts come through the ring between WRITEs by reference;
    // after a change, the old way's backlog, up to a QP's window, had been in the first
    // burst's gap).
    r.way.done(now, kRefSettleBytes);
    return;
  }
  const size_t bytes = size_t{fh.packets} * verbs::mtu_bytes(static_cast<verbs::Mtu>(fh.burst_mtu));
  const bool next = r.way.cached(now, bytes, false, kRefSettleBytes, 0);
  const uint64_t want = next ? (was | kReferencePreferred) : (was & ~kReferencePreferred);
  if (want != was) word.store(want, std::memory_order_relaxed);
}

bool ShmLink::take_packed(rc::Device& device, Reader& r, wire::ByteSpan body, size_t& n, size_t budget,
                          const verbs::Cq* until, size_t want) {
  // Sub-frames are ordinary frames: the same address and burst as take_ordinary()'s (built
  // anew here at each record, the profile-guided build zeroed them with two `rep stos`).
  rc::FrameAddr& from = ordinary_from_;
  size_t at = r.packed_at;
  while (at < body.size()) {
    // poll() checked the limits before the first sub-frame of this call.
    if (at != r.packed_at && (n >= budget || (until != nullptr && until->queued() >= want))) {
      r.packed_at = static_cast<uint32_t>(at);
      return false;
    }
    // The sizes come from the other process: a sub-frame that runs past the record ends it.
    if (body.size() - at < sizeof(ShmSubFrame)) {
      ++counters_.malformed;
      break;
    }
    ShmSubFrame sf;
    std::memcpy(&sf, body.data() + at, sizeof sf);
    if (sf.length > body.size() - at - sizeof sf) {
      ++counters_.malformed;
      break;
    }
    from.slid = Lid(sf.slid);
    from.dlid = Lid(sf.dlid);
    from.sl = sf.sl;
    ++counters_.frames_received;
    ++n;
    device.receive(from, body.subspan(at + sizeof sf, sf.length), kOrdinaryBurst);
    at += sub_frame_span(sf.length);
  }
  r.packed_at = 0;
  return true;
}

// Whether this process may read `pid`'s memory with process_vm_readv (a zero-length read
// still checks the permission: PTRACE_MODE_ATTACH).
ShmLink::Peer* ShmLink::known_peer(uint32_t endpoint) {
  if (last_peer_ != nullptr && last_peer_->endpoint == endpoint) return last_peer_;
  for (auto& p : peers_) {
    if (p->endpoint == endpoint) return p.get();
  }
  return nullptr;
}

bool ShmLink::may_read(int32_t pid) {
  if (pid <= 0) return false;
  uint8_t probe = 0;
  const iovec local{&probe, 1};
  const iovec remote{&probe, 1};  // any address: EFAULT still means the permission was granted
  const ssize_t n = ::process_vm_readv(pid, &local, 1, &remote, 1, 0);
  if (n >= 0 || errno == EFAULT) return true;
  SOFTIB_LOG(kInfo, "shm", "endpoint {}: process {}'s memory is out of reach ({}): its payloads come inline", endpoint_,
             pid, std::strerror(errno));
  return false;
}

bool ShmLink::new_channel_ready(const ChannelMemory& mem) {
  // A channel claimed since the last poll: its first record sits at the published head.
  const uint64_t head = mem.control().head.load(std::memory_order_acquire);
  return mem.header_at(head).tag.load(std::memory_order_acquire) == head + 1;
}

bool ShmLink::warm_spare_channel() {
  bool any = false;
  while (warm_spare_chunk()) any = true;
  return any;
}

bool ShmLink::warm_spare_chunk() {
  // A sender may be claiming this channel meanwhile: both then map the same pages, which is
  // only slower.
  const auto i = inbox_.next_claim();
  if (!i || channel_warmed(*i)) return false;
  if (*i != warming_) {
    warming_ = *i;
    warming_at_ = 0;
  }
  const ChannelMemory mem = inbox_.channel(*i);
  const size_t n = std::min(kWarmChunk, mem.capacity() - warming_at_);
  ShmRegion::prefault(mem.data() + warming_at_, n);
  warming_at_ += n;
  if (warming_at_ == mem.capacity()) {
    std::atomic<uint64_t>& word = warmed_[*i / 64];
    word.fetch_or(uint64_t{1} << (*i % 64), std::memory_order_release);
    word.notify_all();
    warming_ = UINT32_MAX;
  }
  return true;
}

uint64_t ShmLink::channels_warmed() const {
  uint64_t n = 0;
  for (const auto& w : warmed_) n += static_cast<uint64_t>(std::popcount(w.load(std::memory_order_relaxed)));
  return n;
}

void ShmLink::wait_channel_warmed(uint32_t i) const {
  std::atomic<uint64_t>& word = warmed_[i / 64];
  for (uint64_t seen = word.load(std::memory_order_acquire); (seen >> (i % 64) & 1) == 0;
       seen = word.load(std::memory_order_acquire))
    word.wait(seen, std::memory_order_acquire);
}

std::string ShmLink::describe_channels() const {
  std::string out;
  any_active_channel([&](uint32_t i) {
    const ChannelMemory mem = inbox_.channel(i);
    const uint64_t owner = mem.control().owner.load(std::memory_order_acquire);
    const Reader& r = readers_[i];
    const uint64_t at = r.reader ? r.reader->position() : mem.control().head.load(std::memory_order_acquire);
    out += fmt::format("channel {}: owner endpoint {} pid {} ({}), read at {}{}, a record waits: {}, watch {}; ", i,
                       static_cast<uint32_t>(owner), owner >> 32,
                       dir_.endpoint_alive(static_cast<uint32_t>(owner)) ? "alive" : "not alive", at,
                       r.reader ? "" : " (no reader)", mem.header_at(at).tag.load(std::memory_order_acquire) == at + 1,
                       watches_[i].at.load(std::memory_order_relaxed));
    return false;
  });
  for (const auto& p : peers_) {
    if (!p->writer) continue;
    out += fmt::format("peer endpoint {} ({}): written to {}, read by it to {}; ", p->endpoint,
                       dir_.endpoint_alive(p->endpoint) ? "alive" : "not alive", p->writer->position(),
                       p->writer->control().head.load(std::memory_order_acquire));
  }
  out += fmt::format("directory generation {}", dir_.generation());
  return out;
}

void ShmLink::housekeeping() {
  refresh();  // an idle process, too, lets go of the inboxes of peers that are gone
  any_active_channel([&](uint32_t i) {
    const ChannelMemory mem = inbox_.channel(i);
    const uint64_t owner = mem.control().owner.load(std::memory_order_acquire);
    const uint32_t sender = static_cast<uint32_t>(owner);
    if (owner == 0 || dir_.endpoint_alive(sender)) return false;
    // The sender is gone: what it left is dropped and the channel is free for a new one.
    SOFTIB_LOG(kInfo, "shm", "endpoint {}: channel {} reclaimed: its sender, endpoint {} (pid {}), is gone (directory generation {})",
               endpoint_, i, sender, owner >> 32, dir_.generation());
    Reader& r = readers_[i];
    if (!r.reader) r.reader.emplace(mem, mem.control().head.load(std::memory_order_acquire));
    while (r.reader->peek()) r.reader->release();
    watch(i, Watch::kNone);
    if (r.later) --copies_later_;
    inbox_.reclaim(i, r.reader->position());
    r = Reader{};
    ++counters_.reclaimed;
    return false;  // on to the next
  });
}

}  // namespace softib::link
