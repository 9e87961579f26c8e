#include "provider/context.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>

#include <fmt/format.h>

#include "base/assert.hpp"
#include "base/log.hpp"
#include "ipc/client.hpp"
#include "link/shm_inbox.hpp"
#include "provider/local_fabric.hpp"
#include "verbs/caps.hpp"

namespace softib::provider {

namespace {

constexpr uint32_t kInboxChannels = 64;
constexpr uint8_t kPortActive = 4;

// Bytes per channel of this endpoint's inbox: SOFTIB_SHM_RING, else 1 MiB (a path-MTU window
// of 128 packets of 4 KiB fits twice).
uint32_t ring_bytes() {
  if (const char* v = std::getenv("SOFTIB_SHM_RING")) {
    const unsigned long n = std::strtoul(v, nullptr, 0);
    if (n >= 4096 && n <= (1ul << 26) && (n & (n - 1)) == 0) return static_cast<uint32_t>(n);
    log(LogLevel::kWarn, "verbs", "SOFTIB_SHM_RING={} is not a power of two between 4 KiB and 64 MiB; using 1 MiB", v);
  }
  return 1u << 20;
}

// Payload bytes per burst (rc/frame.hpp) on the shared-memory link: SOFTIB_SHM_BURST (0 turns
// bursts off), else 64 KiB; at most a quarter of a ring, so a burst always fits.
size_t burst_bytes(uint32_t ring) {
  size_t n = 64 * 1024;
  if (const char* v = std::getenv("SOFTIB_SHM_BURST")) n = std::strtoul(v, nullptr, 0);
  return std::min<size_t>(n, ring / 4);
}

// Whether this process runs under valgrind, which preloads its vgpreload_*.so (no valgrind
// header needed).
bool under_valgrind() {
  const char* preload = std::getenv("LD_PRELOAD");
  return preload != nullptr && std::strstr(preload, "vgpreload") != nullptr;
}

// SOFTIB_ENGINE_SPIN (engine::apply_spin_setting): how long an idle engine may poll before
// it sleeps, for a machine shared by many processes, and to compare.
// SOFTIB_IDLE_YIELD=0: idle pollers never give their CPU up (engine::IdleYield), to compare;
// =1: they do, under valgrind too. Unset: they do, except under valgrind. Its default
// scheduler (--fair-sched=no) runs one thread of a process at a time and handed the CPU back
// to the thread that yielded, and a ping-pong's other threads starved: bench_verbs lat
// --perftest under memcheck retried out (IBV_WC_RETRY_EXC_ERR) in 4 runs of 12, and in 0 of
// 12 without the yields, 0 of 10 with them and --fair-sched=yes (2026-12-07).
engine::EngineOptions engine_options(engine::EngineOptions o) {
  const char* v = std::getenv("SOFTIB_ENGINE_SPIN");
  if (!engine::apply_spin_setting(o, v))
    log(LogLevel::kWarn, "verbs", "SOFTIB_ENGINE_SPIN={} is not a number of microseconds up to 100000; using {}", v,
        std::chrono::duration_cast<std::chrono::microseconds>(o.max_spin).count());
  const char* y = std::getenv("SOFTIB_IDLE_YIELD");
  if (y == nullptr) {
    o.idle_yield = !under_valgrind();
  } else if (std::strcmp(y, "0") == 0) {
    o.idle_yield = false;
  } else if (std::strcmp(y, "1") != 0) {
    log(LogLevel::kWarn, "verbs", "SOFTIB_IDLE_YIELD={} is not 0 or 1; idle pollers yield", y);
  }
  return o;
}

// SOFTIB_SHM_COPY: how large payloads are copied into a peer's ring (base/copy.hpp PeerCopy).
PeerCopy peer_copy() {
  const char* v = std::getenv("SOFTIB_SHM_COPY");
  if (v == nullptr || std::strcmp(v, "auto") == 0) return PeerCopy::kAuto;
  if (std::strcmp(v, "stream") == 0) return PeerCopy::kStreaming;
  if (std::strcmp(v, "cached") == 0) return PeerCopy::kCached;
  log(LogLevel::kWarn, "verbs", "SOFTIB_SHM_COPY={} is not auto, stream or cached; using auto", v);
  return PeerCopy::kAuto;
}

verbs::Mtu mtu_of(uint8_t code, verbs::Mtu fallback) {
  return verbs::mtu_valid(code) ? static_cast<verbs::Mtu>(code) : fallback;
}

rc::PortAttr port_attr_of(const link::PortSnapshot& s) {
  rc::PortAttr p;
  p.active = s.state == kPortActive;
  p.lid = Lid(s.lid);
  p.lmc = s.lmc;
  p.max_mtu = mtu_of(s.max_mtu, verbs::Mtu::k4096);
  // A port that is not up has no neighbour MTU yet: its own capability stands in.
  p.active_mtu = mtu_of(s.active_mtu, p.max_mtu);
  p.pkeys.clear();
  for (uint32_t i = 0; i < std::min<uint32_t>(s.num_pkeys, link::kMaxPkeys); ++i) p.pkeys.push_back(PKey(s.pkeys[i]));
  if (p.pkeys.empty()) p.pkeys.push_back(PKey(0));
  p.gids.clear();
  for (uint32_t i = 0; i < link::gid_table_len(s); ++i) p.gids.push_back(*link::port_gid(s, i));
  p.roce = s.link_layer == link::kLinkLayerEthernet;
  return p;
}

verbs::DeviceCaps caps_for(const DeviceInfo& d, uint32_t qpn_first, uint32_t qpn_last) {
  verbs::DeviceCaps c = verbs::ca_caps(d.num_ports);
  SOFTIB_ASSERT(qpn_last - qpn_first + 1 >= c.max_qp);  // every QPN block holds max_qp QPs
  return c;
}

AsyncEvent to_event(const rc::AsyncEvent& e) {
  AsyncEvent out{e.type, nullptr, e.port_num};
  if (e.cq != nullptr) out.object = e.cq->context();
  if (e.qp != nullptr) out.object = e.qp->context();
  if (e.srq != nullptr) out.object = e.srq->context();
  return out;
}

}  // namespace

Context::Context(DeviceInfo info, verbs::EventFd async_fd) : info_(std::move(info)), async_(std::move(async_fd)) {}

Context::~Context() {
  if (engine_) {
    engine_->stop();
    {
      std::lock_guard lock(device_->lock());
      settle_copies();  // the application's memory goes back to it
    }
    const engine::EngineCounters& e = engine_->counters();
    log(LogLevel::kDebug, "verbs",
        "{}: engine: {} device steps did something (the engine's and application threads'), {} were run by "
        "application threads (busy or not); the engine slept {} times ({} of them ended by its doorbell) and rang "
        "others {} times; it polled up to {} us before a sleep (engine/spin.hpp); its thread used {:.1f} ms of CPU; "
        "idle polls and spins gave the CPU up {} times, {} of them to another thread (engine/spin.hpp IdleYield)",
        info_.name, e.steps.load(), e.inline_steps.load(), e.sleeps.load(), e.rung_wakes.load(), e.wakeups.load(),
        e.spin_peak_ns.load() / 1000, static_cast<double>(e.cpu_ns.load()) / 1e6, e.idle_yields.load(),
        e.idle_yields_ran_other.load());
  }
  if (device_) {
    const rc::DeviceCounters& d = device_->counters();
    log(LogLevel::kDebug, "verbs",
        "{}: transport: {} packets received ({} by the responder's fast path), {} sent ({} by the requester's), {} "
        "retransmitted",
        info_.name, d.rx_packets, d.fast_received, d.tx_packets, d.fast_sent, d.retransmits);
  }
  if (shm_) {
    // What the link did, for a user asking why a transfer ran as it did (SOFTIB_LOG=debug).
    const link::ShmLinkCounters& c = shm_->counters();
    const auto [near, far] = shm_->distance_windows();
    const auto [windows, switches] = shm_->copy_choices();
    const auto [ref_windows, ref_switches] = shm_->reference_choices();
    log(LogLevel::kDebug, "verbs",
        "{}: shared-memory link: {} frames sent ({} of them in {} packed records, {} bursts by reference), {} "
        "received, {} refused (ring full); large copies {} cached, {} streamed (base/copy.hpp PeerCopy); consumer "
        "distance judged near {} times, far {} (link/shm_channel.hpp consumer_near); copy throughput measured over "
        "{} windows, the way changed {} times (link/copy_chooser.hpp); by reference or through the ring measured "
        "over {} windows, changed {} times (SOFTIB_SHM_CMA=auto); copies by reference shared with their sender: {} "
        "offered, {} written by it, {} withdrawn, {} failed, {} written later (a sender slow to write it), and {} "
        "written into peers that offered them "
        "(SOFTIB_SHM_HELP); {} doorbells, {} of them to peers that left "
        "frames unread ({} of those while their application was away); {} rings of its inbox mapped ahead of their "
        "senders (link/shm_link.hpp warm_spare_channel)",
        info_.name, c.frames_sent, c.frames_packed, c.packs_sent, c.ref_frames_sent, c.frames_received, c.refused,
        c.copies_cached, c.copies_streamed, near, far, windows, switches, ref_windows, ref_switches, c.helps_offered,
        c.helps_taken, c.helps_withdrawn, c.helps_failed, c.helps_later, c.helps_given, c.doorbells + c.stall_rings, c.stall_rings,
        c.away_rings, shm_->channels_warmed());
  }
  if (local_ != nullptr) local_->hub().detach(local_route_);
}

Result<std::unique_ptr<Context>> Context::open(const DeviceInfo& device, const Options& options) {
  auto conn = ipc::Connection::open(options.fabric, "softib verbs", options.socket);
  if (!conn) return Err{conn.error()};
  auto inbox = link::ShmInbox::create(0, static_cast<uint32_t>(::getpid()), kInboxChannels, ring_bytes());
  if (!inbox) return Err{inbox.error()};
  auto bell = link::Doorbell::create();
  if (!bell) return Err{bell.error()};
  auto attached = conn->attach_hca(device.node, inbox->region().fd(), bell->fd());
  if (!attached) return Err{attached.error()};
  const ipc::HcaAttachedMsg& at = attached->info;
  inbox->header().endpoint = at.endpoint;
  auto region = link::ShmRegion::map(attached->directory.release(), 0);
  if (!region) return Err{region.error()};
  auto dir = link::ShmDirectory::attach(std::move(*region));
  if (!dir) return Err{dir.error()};
  auto async_fd = verbs::EventFd::create();
  if (!async_fd) return Err{async_fd.error()};

  std::unique_ptr<Context> c(new Context(device, std::move(*async_fd)));
  Context* self = c.get();
  c->conn_ = std::make_unique<ipc::Connection>(std::move(*conn));
  c->dir_ = std::make_unique<link::ShmDirectory>(std::move(*dir));
  c->port_slots_.assign(device.num_ports, 0);
  for (const auto& p : at.ports)
    if (p.port >= 1 && p.port <= device.num_ports) c->port_slots_[p.port - 1u] = p.slot;
  if (c->port_slots_.empty()) return Status(Code::kInvalidArgument, fmt::format("{} has no ports", device.name));
  c->generation_ = c->dir_->generation();
  for (uint32_t slot : c->port_slots_) c->ports_.push_back(c->dir_->read_port(slot));

  auto resolver = [self](uint32_t endpoint) -> Result<link::ShmLink::PeerFds> {
    std::lock_guard lock(self->conn_mu_);
    auto e = self->conn_->get_endpoint(endpoint);
    if (!e) return Err{e.error()};
    return link::ShmLink::PeerFds{e->inbox.release(), e->doorbell.release()};
  };
  // The data path uses port 1 (multi-port CAs answer queries for every port; their QPs
  // all send from port 1's LID for now).
  c->shm_ = std::make_unique<link::ShmLink>(*c->dir_, at.endpoint, c->port_slots_[0], std::move(*inbox), resolver);
  c->shm_->set_max_burst_bytes(burst_bytes(ring_bytes()));
  // Single copy between processes where the receiver measures it faster (SOFTIB_SHM_CMA=auto,
  // the default), always (=1) or never (=0): src/link/shm_link.hpp max_reference_bytes.
  const char* cma = std::getenv("SOFTIB_SHM_CMA");
  const bool always = cma != nullptr && std::strcmp(cma, "1") == 0;
  const bool never = cma != nullptr && std::strcmp(cma, "0") == 0;
  if (cma != nullptr && !always && !never && std::strcmp(cma, "auto") != 0)
    log(LogLevel::kWarn, "verbs", "SOFTIB_SHM_CMA={} is not auto, 1 or 0; using auto", cma);
  using References = link::ShmLink::References;
  c->shm_->set_references(never ? References::kNever : always ? References::kAlways : References::kMeasured);
  // SOFTIB_SHM_REF_BURST: payload bytes per burst by reference (default 256 KiB), to compare.
  if (const char* rb = std::getenv("SOFTIB_SHM_REF_BURST")) c->shm_->set_max_reference_burst_bytes(std::strtoul(rb, nullptr, 0));
  // SOFTIB_SHM_HELP: the smallest part of a copy by reference offered to its sender (default
  // 32 KiB; 0: never), to compare.
  if (const char* h = std::getenv("SOFTIB_SHM_HELP")) c->shm_->set_help_min_bytes(std::strtoul(h, nullptr, 0));
  c->shm_->set_peer_copy(peer_copy());
  // SOFTIB_SHM_PACK=0: every frame a ring record of its own (ShmLink::begin_batch), to compare.
  if (const char* v = std::getenv("SOFTIB_SHM_PACK"); v != nullptr && std::strcmp(v, "0") == 0) c->shm_->set_packing(false);
  c->caps_ = caps_for(device, at.qpn_first, at.qpn_last);
  c->device_ = std::make_unique<rc::Device>(c->caps_, port_attr_of(c->ports_[0]), *c->shm_, SteadyClock::instance());
  c->device_->set_qpn_range(at.qpn_first, at.qpn_last);
  c->engine_ = engine::Engine::create(*c->device_, engine_options(options.engine), c->shm_.get(), std::move(*bell));
  // on_step has work only when the directory moved or the device raised async events.
  c->engine_->set_step_hook([self] { self->on_step(); }, &c->dir_->generation_word());
  c->engine_->set_signal_hook([self] { self->signal_owed_channels(); });
  c->engine_->start();
  log(LogLevel::kInfo, "verbs", "{} ({}): endpoint {}, QPNs {:#x}-{:#x}", device.name, device.node_id, at.endpoint,
      at.qpn_first, at.qpn_last);
  return c;
}

Result<std::unique_ptr<Context>> Context::open_local(LocalFabric& fabric, uint32_t hca) {
  if (hca >= fabric.hcas()) return Status(Code::kNotFound, fmt::format("the local fabric has no CA {}", hca));
  auto async_fd = verbs::EventFd::create();
  if (!async_fd) return Err{async_fd.error()};
  std::unique_ptr<Context> c(new Context(fabric.device(hca), std::move(*async_fd)));
  Context* self = c.get();
  const auto [first, last] = fabric.take_qpn_block(hca);
  c->local_ = &fabric;
  c->ports_ = {fabric.port(hca)};
  c->caps_ = caps_for(c->info_, first, last);
  c->device_ = std::make_unique<rc::Device>(c->caps_, port_attr_of(c->ports_[0]), fabric.hub().new_sink(),
                                            SteadyClock::instance());
  c->device_->set_qpn_range(first, last);
  auto engine = engine::Engine::create(*c->device_);
  if (!engine) return Err{engine.error()};
  c->engine_ = std::move(*engine);
  c->engine_->set_step_hook([self] { self->on_step(); });
  c->engine_->set_signal_hook([self] { self->signal_owed_channels(); });
  engine::Engine* e = c->engine_.get();
  c->local_route_ = fabric.hub().attach(Lid(c->ports_[0].lid), 0,
                                        [e](const rc::FrameAddr& from, wire::ByteSpan b) { e->deliver(from, b); }, first,
                                        last);
  c->engine_->start();
  return c;
}

// ---- ports ----

void Context::on_step() {
  if (dir_ && dir_->generation() != generation_) sync_ports();
  if (device_->has_async_events())
    for (const rc::AsyncEvent& e : device_->take_async_events()) async_.push(to_event(e));
}

// The directory changed: ports whose state, LID, SM or P_Keys moved raise the events
// libibverbs programs wait for (IBA 11.6.3: port active / port error / LID, P_Key, SM change)
// and the transport sees the new addresses.
void Context::sync_ports() {
  generation_ = dir_->generation();
  for (size_t i = 0; i < port_slots_.size(); ++i) {
    const link::PortSnapshot now = dir_->read_port(port_slots_[i]);
    const link::PortSnapshot before = ports_[i];
    if (now == before) continue;
    ports_[i] = now;
    const uint8_t port = static_cast<uint8_t>(i + 1);
    const bool was = before.state == kPortActive, is = now.state == kPortActive;
    auto event = [&](verbs::AsyncEventType t) { async_.push(AsyncEvent{t, nullptr, port}); };
    if (!was && is) event(verbs::AsyncEventType::kPortActive);
    if (was && !is) event(verbs::AsyncEventType::kPortErr);
    if (was && is && before.lid != now.lid) event(verbs::AsyncEventType::kLidChange);
    if (before.pkeys != now.pkeys || before.num_pkeys != now.num_pkeys) event(verbs::AsyncEventType::kPkeyChange);
    if (is && before.sm_lid != now.sm_lid) event(verbs::AsyncEventType::kSmChange);
    if (i == 0) device_->port() = port_attr_of(now);
  }
}

Result<PortAttributes> Context::query_port(uint8_t port) {
  if (port < 1 || port > info_.num_ports)
    return Status(Code::kInvalidArgument, fmt::format("{} has no port {}", info_.name, port));
  PortAttributes a;
  if (dir_) {
    a.port = dir_->read_port(port_slots_[port - 1u]);
  } else {
    a.port = ports_[port - 1u];
  }
  a.gid_table_len = static_cast<uint16_t>(link::gid_table_len(a.port));
  a.pkey_table_len = caps_.max_pkeys;
  if (a.port.link_layer == link::kLinkLayerEthernet) {
    // The LID is the shared-memory link's internal address; on Ethernet there is none to
    // show, and no SM.
    a.port.lid = 0;
    a.port.sm_lid = 0;
    a.port.lmc = 0;
  }
  return a;
}

Result<Gid> Context::query_gid(uint8_t port, uint32_t index) {
  auto a = query_port(port);
  if (!a) return Err{a.error()};
  if (index >= a->gid_table_len)
    return Status(Code::kInvalidArgument, fmt::format("GID index {} is beyond the table ({})", index, a->gid_table_len));
  return *link::port_gid(a->port, index);
}

Result<GidType> Context::query_gid_type(uint8_t port, uint32_t index) {
  auto a = query_port(port);
  if (!a) return Err{a.error()};
  if (index >= a->gid_table_len)
    return Status(Code::kInvalidArgument, fmt::format("GID index {} is beyond the table ({})", index, a->gid_table_len));
  return a->port.link_layer == link::kLinkLayerEthernet ? GidType::kRoceV2 : GidType::kIb;
}

Result<PKey> Context::query_pkey(uint8_t port, uint32_t index) {
  auto a = query_port(port);
  if (!a) return Err{a.error()};
  if (index >= a->pkey_table_len)
    return Status(Code::kInvalidArgument, fmt::format("P_Key index {} is beyond the table ({})", index, a->pkey_table_len));
  return PKey(index < a->port.num_pkeys ? a->port.pkeys[index] : 0);
}

// ---- objects ----

verbs::Pd* Context::alloc_pd() {
  std::lock_guard lock(device_->lock());
  return device_->alloc_pd();
}

Status Context::dealloc_pd(verbs::Pd* pd) {
  std::lock_guard lock(device_->lock());
  return device_->dealloc_pd(pd);
}

Result<const verbs::Mr*> Context::reg_mr(verbs::Pd* pd, void* addr, uint64_t length, uint64_t iova, uint32_t access) {
  std::lock_guard lock(device_->lock());
  return device_->mrs().reg(pd, addr, length, iova, access);
}

Result<const verbs::Mr*> Context::rereg_mr(const verbs::Mr* mr, verbs::Pd* pd, void* addr, uint64_t length,
                                           uint64_t iova, uint32_t access) {
  std::lock_guard lock(device_->lock());
  settle_copies();
  return device_->mrs().rereg(mr->lkey, pd, addr, length, iova, access);
}

Status Context::dereg_mr(const verbs::Mr* mr) {
  std::lock_guard lock(device_->lock());
  settle_copies();
  return device_->mrs().dereg(mr->lkey);
}

Result<CompChannel*> Context::create_comp_channel() {
  auto fd = verbs::EventFd::create();
  if (!fd) return Err{fd.error()};
  std::lock_guard lock(channels_mu_);
  return channels_.emplace_back(std::make_unique<CompChannel>(std::move(*fd))).get();
}

Status Context::destroy_comp_channel(CompChannel* channel) {
  std::lock_guard lock(channels_mu_);
  auto it = std::find_if(channels_.begin(), channels_.end(), [&](const auto& c) { return c.get() == channel; });
  if (it == channels_.end()) return Status(Code::kInvalidArgument, "destroy_comp_channel: no such channel");
  if (channel->users_ != 0) return Status(Code::kBusy, "destroy_comp_channel: a CQ uses the channel");
  // A step's signal still owed to it (its CQ destroyed since) goes with it.
  std::erase(owed_channels_, channel);
  channels_.erase(it);
  return Status();
}

void Context::notify(CompChannel& channel, verbs::Cq& cq) {
  // REQUIRES: the device lock (a completion is being pushed).
  if (!engine_->signals_deferred()) {
    channel.queue_.push(&cq);
    return;
  }
  if (channel.queue_.push_quiet(&cq)) {
    std::lock_guard lock(channels_mu_);
    owed_channels_.push_back(&channel);
  }
  engine_->owe_signal();
}

void Context::signal_owed_channels() {
  std::lock_guard lock(channels_mu_);
  for (CompChannel* c : owed_channels_) c->queue_.signal_owed();
  owed_channels_.clear();
}

Result<verbs::Cq*> Context::create_cq(uint32_t cqe, void* user_context, CompChannel* channel) {
  std::lock_guard lock(device_->lock());
  auto cq = device_->create_cq(cqe, user_context);
  if (!cq) return cq;
  if (channel != nullptr) {
    ++channel->users_;
    (*cq)->on_notify([this, channel](verbs::Cq& c) { notify(*channel, c); });
    cq_channels_.emplace(*cq, channel);
  }
  return cq;
}

Status Context::resize_cq(verbs::Cq* cq, uint32_t cqe) {
  if (cqe == 0 || cqe > caps_.max_cqe)
    return Status(Code::kInvalidArgument, fmt::format("resize_cq: cqe {} (max_cqe {})", cqe, caps_.max_cqe));
  std::lock_guard lock(device_->lock());
  return cq->resize(cqe);
}

Status Context::destroy_cq(verbs::Cq* cq) {
  std::lock_guard lock(device_->lock());
  Status s = device_->destroy_cq(cq);
  if (!s.ok()) return s;
  if (auto it = cq_channels_.find(cq); it != cq_channels_.end()) {
    it->second->queue_.replace(cq, nullptr);  // events not yet read die with the CQ
    --it->second->users_;
    cq_channels_.erase(it);
  }
  return s;
}

Status Context::req_notify_cq(verbs::Cq* cq, bool solicited_only) {
  cq->arm(solicited_only);
  // The caller is about to wait for the event, maybe on the channel's fd (epoll, poll) and
  // not in get_cq_event: the engine must deliver it now, not once the lease this thread's
  // earlier polls took has run out (up to link::kLeaseMaxNs: found by the suite's
  // AnArmedCqsEventDoesNotWaitForTheLease, 4-5 ms after 20 ms of polling).
  engine_->release_lease();
  return Status();
}

Result<verbs::Cq*> Context::get_cq_event(CompChannel* channel) {
  // The caller is about to wait rather than poll: the engine must not wait for its lease.
  engine_->release_lease();
  for (;;) {
    auto cq = channel->queue_.pop();
    // EAGAIN (a non-blocking fd) or EINTR (a signal: programs such as qperf end a test with
    // SIGALRM and expect ibv_get_cq_event to fail with EINTR, as read(2) on the fd does).
    if (!cq) return Status::from_errno(errno, "get_cq_event");
    if (*cq != nullptr) return *cq;  // else: the event of a CQ destroyed since
  }
}

size_t Context::poll_cq(verbs::Cq* cq, std::span<verbs::WorkCompletion> out) {
  size_t n = cq->poll(out);
  if (n != 0) {
    engine_->touch_sometimes();
    engine_->mark_away(true);
    return n;
  }
  if (out.empty()) return n;
  // A program that armed the CQ waits for its event: the engine delivers completions (and
  // the event) as a device does. Stepping the transport here would hand this poll a completion
  // that has also raised the armed event, so the program's next event would find the CQ empty
  // (ibv_rc_pingpong -e -t reads at least one completion per event and fails without).
  if (cq->armed()) return n;
  // The step may hand its first completion straight to out[0] (verbs::Cq::offer_direct); any
  // more went to the ring behind it.
  const size_t direct = engine_->poll_inline(cq, out.size(), out.data());
  n = direct + cq->poll(out.subspan(direct));
  engine_->mark_away(n != 0);
  return n;
}

Result<verbs::Srq*> Context::create_srq(verbs::Pd* pd, uint32_t max_wr, uint32_t max_sge, uint32_t limit,
                                        void* user_context) {
  std::lock_guard lock(device_->lock());
  return device_->create_srq(pd, max_wr, max_sge, limit, user_context);
}

Status Context::modify_srq(verbs::Srq* srq, std::optional<uint32_t> max_wr, std::optional<uint32_t> limit) {
  if (max_wr) return Status(Code::kInvalidArgument, "modify_srq: resizing an SRQ is not supported (no SRQ_RESIZE)");
  if (limit) {
    std::lock_guard lock(device_->lock());
    if (*limit > srq->rq().max_wr())
      return Status(Code::kInvalidArgument, fmt::format("modify_srq: limit {} above max_wr {}", *limit, srq->rq().max_wr()));
    srq->set_limit(*limit);
  }
  return Status();
}

Status Context::destroy_srq(verbs::Srq* srq) {
  std::lock_guard lock(device_->lock());
  return device_->destroy_srq(srq);
}

Status Context::post_srq_recv(verbs::Srq* srq, std::span<const verbs::RecvWr> wrs, size_t* bad) {
  return device_->post_srq_recv(srq, wrs, bad);
}

Result<rc::Qp*> Context::create_qp(verbs::Pd* pd, verbs::Cq* send_cq, verbs::Cq* recv_cq, verbs::Srq* srq,
                                   const verbs::QpInitAttr& init, void* user_context) {
  Result<rc::Qp*> qp = [&] {
    std::lock_guard lock(device_->lock());
    return device_->create_qp(pd, send_cq, recv_cq, srq, init, user_context);
  }();
  if (qp) engine_->expect_traffic();
  return qp;
}

Status Context::resolve(verbs::AhAttr& ah, const char* what) const {
  if (!dir_ || ah.port_num < 1 || ah.port_num > info_.num_ports) return Status();
  if (dir_->read_port(port_slots_[ah.port_num - 1u]).link_layer != link::kLinkLayerEthernet) return Status();
  // RoCE: addresses are GIDs (the kernel's rdma_check_ah_attr: no GRH is EINVAL). A GID no
  // attached port has resolves to no port: its frames are lost, as to an absent host.
  if (!ah.is_global) return Status(Code::kInvalidArgument, fmt::format("{}: a RoCE address needs a GRH", what));
  ah.dlid = dir_->lid_of_gid(ah.grh.dgid).value_or(Lid());
  ah.src_path_bits = 0;
  return Status();
}

Status Context::modify_qp(rc::Qp* qp, const verbs::QpAttr& attr, uint32_t mask) {
  Status s;
  verbs::QpAttr resolved = attr;
  if (mask & verbs::attr::kAv) s = resolve(resolved.ah_attr, "modify_qp");
  if (s.ok() && (mask & verbs::attr::kAltPath)) s = resolve(resolved.alt_ah_attr, "modify_qp");
  if (!s.ok()) return s;
  {
    std::lock_guard lock(device_->lock());
    s = device_->modify_qp(qp, resolved, mask);
  }
  // A move to Error has WRs to flush; a move to RTS may have WRs to send.
  if (s.ok()) engine_->kick();
  return s;
}

Status Context::query_qp(rc::Qp* qp, verbs::QpAttr* attr, verbs::QpInitAttr* init) {
  std::lock_guard lock(device_->lock());
  *attr = qp->attr();
  attr->qp_state = qp->state();
  attr->cur_qp_state = qp->state();
  attr->sq_draining = qp->req_draining() ? 1 : 0;
  attr->cap = qp->init_attr().cap;
  *init = qp->init_attr();
  if (device_->port().roce) {
    attr->ah_attr.dlid = Lid();  // the internal address stays inside (resolve())
    attr->alt_ah_attr.dlid = Lid();
  }
  return Status();
}

Status Context::destroy_qp(rc::Qp* qp) {
  std::lock_guard lock(device_->lock());
  settle_copies();  // its READs' buffers are the application's again
  return device_->destroy_qp(qp);
}

Status Context::post_send(rc::Qp* qp, std::span<const verbs::SendWr> wrs, size_t* bad) {
  // Posted and stepped under one hold of the device lock (a single WR perhaps sent before its
  // WQE is written: rc::Device::post_send_now), or, when another thread holds it, as below.
  if (std::optional<Status> s = engine_->post(*qp, wrs, bad)) return *std::move(s);
  Status s = device_->post_send(qp, wrs, bad, rc::Device::PostNotice::kCallerActivates);
  if (*bad != 0 || s.ok()) engine_->post_inline(*qp);  // activates the QP (or queues it), steps
  return s;
}

Status Context::post_send_whole(rc::Qp* qp, std::span<const verbs::SendWr> wrs, size_t* bad) {
  if (Status s = device_->check_send(*qp, wrs, bad); !s.ok()) return s;
  return post_send(qp, wrs, bad);
}

Status Context::post_recv(rc::Qp* qp, std::span<const verbs::RecvWr> wrs, size_t* bad) {
  Status s = device_->post_recv(qp, wrs, bad);
  if (qp->state() == verbs::QpState::kError) engine_->kick();  // flushed at once (IBA 10.3.1)
  return s;
}

Result<verbs::Ah*> Context::create_ah(verbs::Pd* pd, const verbs::AhAttr& attr) {
  verbs::AhAttr resolved = attr;
  if (Status s = resolve(resolved, "create_ah"); !s.ok()) return s;
  std::lock_guard lock(device_->lock());
  return device_->create_ah(pd, resolved);
}

Status Context::destroy_ah(verbs::Ah* ah) {
  std::lock_guard lock(device_->lock());
  return device_->destroy_ah(ah);
}

Result<AsyncEvent> Context::get_async_event() {
  auto e = async_.pop();
  if (!e) return Status::from_errno(errno, "get_async_event");  // EAGAIN or EINTR
  return *e;
}

}  // namespace softib::provider
