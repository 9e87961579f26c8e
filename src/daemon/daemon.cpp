#include "daemon/daemon.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <deque>
#include <unordered_map>

#include <fmt/format.h>

#include "base/clock.hpp"
#include "base/file.hpp"
#include "base/format.hpp"
#include "base/log.hpp"
#include "daemon/session.hpp"
#include "fabric/generators.hpp"
#include "fabric/net_reader.hpp"
#include "ipc/paths.hpp"
#include "link/shm_directory.hpp"
#include "mad/codec.hpp"

namespace softib::daemon {

namespace {

constexpr int kMaxEvents = 64;
// One drive() runs at most this long before the loop serves clients again.
constexpr auto kDriveBudget = std::chrono::milliseconds(20);
constexpr auto kEventScanPeriod = std::chrono::milliseconds(10);

Result<fabric::Topology> load(const std::string& source) {
  struct stat st {};
  if (::stat(source.c_str(), &st) == 0) {
    auto net = fabric::read_net_file(source);
    if (!net) return Err{net.error()};
    for (const auto& w : net->warnings) log(LogLevel::kWarn, "softibd", "{}", w);
    return std::move(net->topology);
  }
  auto t = fabric::generate(source);
  if (!t) {
    if (source.find(':') == std::string::npos && source.find('/') != std::string::npos)
      return Status(Code::kNotFound, fmt::format("cannot open net file \"{}\"", source));
    return Err{t.error()};
  }
  return std::move(*t);
}

// What a verbs program sees of a port (ibv_query_port), from the fabric's PortInfo.
link::PortSnapshot snapshot_of(const fabric::Fabric& f, fabric::PortRef p) {
  const mad::PortInfo& pi = f.port_info(p);
  link::PortSnapshot s;
  s.port_num = p.port;
  s.state = static_cast<uint8_t>(pi.port_state);
  s.phys_state = static_cast<uint8_t>(pi.port_physical_state);
  s.lmc = pi.lmc;
  s.lid = pi.lid.value();
  s.sm_lid = pi.master_sm_lid.value();
  s.sm_sl = pi.master_sm_sl;
  s.max_mtu = pi.mtu_cap;
  s.active_mtu = pi.neighbor_mtu;
  s.active_width = pi.link_width_active;
  s.active_speed = pi.link_speed_active;
  s.ext_speed = pi.link_speed_ext_active;
  s.init_type_reply = pi.init_type_reply;
  s.subnet_timeout = pi.subnet_timeout;
  s.cap_mask = pi.capability_mask;
  s.cap_mask2 = pi.capability_mask2;
  s.vl_cap = pi.vl_cap;
  s.qkey_violations = pi.q_key_violations;
  s.pkey_violations = pi.p_key_violations;
  s.port_guid = f.topology().port(p).guid.value();
  s.gid_prefix = pi.gid_prefix;
  s.num_gids = std::max<uint8_t>(pi.guid_cap, 1);
  const auto& keys = f.pkeys(p);
  s.num_pkeys = static_cast<uint8_t>(std::min<size_t>(keys.size(), link::kMaxPkeys));
  for (size_t i = 0; i < s.num_pkeys; ++i) s.pkeys[i] = keys[i].value();
  return s;
}

// The embedded SM's port: the first cabled CA port, or a switch's port 0 (as `softib sim`).
std::optional<fabric::PortRef> first_end_port(const fabric::Topology& t) {
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const fabric::NodeIndex n(i);
    if (t.node(n).type == fabric::NodeType::kSwitch) continue;
    for (uint8_t p = 1; p <= t.node(n).num_ports; ++p)
      if (t.port({n, p}).peer.valid()) return fabric::PortRef{n, p};
  }
  for (uint32_t i = 0; i < t.node_count(); ++i)
    if (t.node(fabric::NodeIndex(i)).type == fabric::NodeType::kSwitch) return fabric::PortRef{fabric::NodeIndex(i), 0};
  return std::nullopt;
}

}  // namespace

struct Daemon::Impl : DaemonContext {
  Options options;
  std::string source;
  SteadyClock clock;
  ipc::Socket listener;
  int epoll_fd = -1, signal_fd = -1;
  std::unordered_map<int, std::unique_ptr<Session>> sessions;
  std::unique_ptr<sm::SimMadPort> sm_port;
  std::unique_ptr<sm::SubnetManager> sm;
  std::optional<fabric::PortRef> sm_at;  // the SM's port
  bool stop = false, ready_sent = false, more_work = false;
  std::vector<std::tuple<uint8_t, uint16_t, uint16_t>> snapshot;  // per end port: state, LID, SM LID
  std::vector<fabric::PortRef> end_ports;
  std::vector<uint32_t> roce_first;  // RoCE mode: per node, its ports' IPv4 ordinal before port 1
  std::chrono::steady_clock::time_point last_scan{};
  std::string pid_file;
  // The data path: the directory of attached endpoints (made at the first attach).
  std::unique_ptr<link::ShmDirectory> directory;
  struct Endpoint {
    uint32_t node;
    uint32_t pid;
    UniqueFd inbox, doorbell;
  };
  std::unordered_map<uint32_t, Endpoint> endpoints;
  struct AttachedPort {
    fabric::PortRef ref;
    uint32_t slot;
    link::PortSnapshot last;
  };
  std::vector<AttachedPort> attached_ports;

  ~Impl() override {
    sessions.clear();
    sm.reset();
    sm_port.reset();
    if (epoll_fd >= 0) ::close(epoll_fd);
    if (signal_fd >= 0) ::close(signal_fd);
    if (listener.valid()) {
      ::unlink(socket.c_str());
      if (!pid_file.empty()) ::unlink(pid_file.c_str());
    }
  }

  // ---- DaemonContext ----
  void request_stop() override { stop = true; }
  ipc::FabricInfoMsg info() const override {
    ipc::FabricInfoMsg f;
    f.name = name;
    f.source = source;
    f.socket = socket;
    f.state_dir = state;
    f.pid = static_cast<uint32_t>(::getpid());
    const auto& t = fabric->topology();
    f.nodes = static_cast<uint32_t>(t.node_count());
    f.cas = static_cast<uint32_t>(t.count(fabric::NodeType::kCa));
    f.switches = static_cast<uint32_t>(t.count(fabric::NodeType::kSwitch));
    f.links = static_cast<uint32_t>(t.link_count());
    if (sm) {
      f.sm_state = static_cast<uint8_t>(sm->state());
      f.sm_lid = sm->lid().value();
    }
    return f;
  }
  uint8_t sm_state() const override { return sm ? static_cast<uint8_t>(sm->state()) : 0; }

  Result<ipc::HcaAttachedMsg> attach_endpoint(uint32_t node, uint32_t pid, UniqueFd inbox, UniqueFd doorbell) override {
    const auto& t = fabric->topology();
    if (node >= t.node_count() || t.node(fabric::NodeIndex(node)).type != fabric::NodeType::kCa)
      return Status(Code::kInvalidArgument, fmt::format("node {} is not a channel adapter", node));
    if (!directory) {
      auto d = link::ShmDirectory::create();
      if (!d) return Err{d.error()};
      directory = std::make_unique<link::ShmDirectory>(std::move(*d));
    }
    const fabric::NodeIndex n(node);
    auto hca = directory->hca_slot(node, fabric->node_info(n).node_guid.value());
    if (!hca) return Err{hca.error()};
    ipc::HcaAttachedMsg out;
    for (uint8_t p = 1; p <= t.node(n).num_ports; ++p) {
      auto slot = directory->port_slot(*hca, p);
      if (!slot) return Err{slot.error()};
      const bool known = std::any_of(attached_ports.begin(), attached_ports.end(),
                                     [&](const AttachedPort& a) { return a.slot == *slot; });
      if (!known) {
        const fabric::PortRef ref{n, p};
        const link::PortSnapshot snap = port_snapshot(ref);
        directory->write_port(*slot, snap);
        attached_ports.push_back({ref, *slot, snap});
      }
      out.ports.push_back({p, *slot});
    }
    auto ep = directory->add_endpoint(*hca, pid);
    if (!ep) return Err{ep.error()};
    out.endpoint = ep->id;
    out.qpn_first = ep->block * link::kQpnBlock + (ep->block == 0 ? link::kFirstQpn : 0);
    out.qpn_last = ep->block * link::kQpnBlock + link::kQpnBlock - 1;
    endpoints[ep->id] = Endpoint{node, pid, std::move(inbox), std::move(doorbell)};
    log(LogLevel::kInfo, "softibd", "endpoint {}: process {} attached to {} (QPNs {:#x}-{:#x})", ep->id, pid,
        t.node(n).id, out.qpn_first, out.qpn_last);
    return out;
  }

  void detach_endpoint(uint32_t id) override {
    if (!directory || endpoints.erase(id) == 0) return;
    directory->remove_endpoint(id);
    log(LogLevel::kInfo, "softibd", "endpoint {}: detached", id);
  }

  std::optional<EndpointFds> endpoint_fds(uint32_t id) const override {
    auto it = endpoints.find(id);
    if (it == endpoints.end()) return std::nullopt;
    return EndpointFds{it->second.pid, it->second.inbox.get(), it->second.doorbell.get()};
  }

  // What a verbs program sees of a port; in RoCE mode an Ethernet port with its address.
  link::PortSnapshot port_snapshot(fabric::PortRef p) const {
    link::PortSnapshot s = snapshot_of(*fabric, p);
    if (options.roce) {
      s.link_layer = link::kLinkLayerEthernet;
      s.ipv4 = options.roce_net + roce_first[p.node.value()] + p.port;
      s.num_gids = 2;
    }
    return s;
  }

  int directory_fd() const override { return directory ? directory->region().fd() : -1; }

  // The SM learns of changes elsewhere from the switches' traps 128, which cannot reach it
  // when its own link is the one that changed; like OpenSM on a local port event, it then
  // sweeps at once (without this, only its next periodic sweep, up to 10 s later, would bring
  // the port back to Active).
  void link_changed(fabric::PortRef p) override {
    if (!sm || !sm_at) return;
    if (p == *sm_at || fabric->topology().port(p).peer == *sm_at) sm->request_sweep(true);
  }

  // Ports of attached HCAs whose state changed (the SM set a LID, a link went down) are written
  // to the directory, and the endpoints on that HCA are woken to notice (async events).
  void refresh_directory() {
    for (AttachedPort& a : attached_ports) {
      const link::PortSnapshot now = port_snapshot(a.ref);
      if (now == a.last) continue;
      a.last = now;
      directory->write_port(a.slot, now);
      const uint64_t one = 1;
      for (const auto& [id, e] : endpoints)
        if (e.node == a.ref.node.value()) (void)!::write(e.doorbell.get(), &one, sizeof one);
    }
  }

  void watch(int fd, uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_MOD, fd, &ev) != 0) ::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev);
  }

  void accept_all() {
    for (;;) {
      auto s = listener.accept();
      if (!s) {
        if (s.error().code() != Code::kWouldBlock) log(LogLevel::kWarn, "softibd", "accept: {}", s.error().to_string());
        return;
      }
      const int fd = s->fd();
      sessions[fd] = std::make_unique<Session>(*this, std::move(*s));
      watch(fd, EPOLLIN);
    }
  }

  void close_session(int fd) {
    ::epoll_ctl(epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
    sessions.erase(fd);
  }

  // Runs the SM and moves MADs until nothing moves or the budget is spent.
  void drive() {
    const auto start = std::chrono::steady_clock::now();
    more_work = false;
    for (;;) {
      if (sm) sm->poll();
      const size_t moved = fabric->pump();
      if (moved == 0) {
        if (sm) sm->poll();
        if (fabric->pump() == 0) return;
      }
      if (std::chrono::steady_clock::now() - start > kDriveBudget) {
        more_work = true;
        return;
      }
    }
  }

  void scan_ports() {
    bool any = false;
    for (const auto& [fd, s] : sessions) any = any || s->subscribed();
    const auto now = std::chrono::steady_clock::now();
    if (!any || now - last_scan < kEventScanPeriod) return;
    last_scan = now;
    for (size_t i = 0; i < end_ports.size(); ++i) {
      const mad::PortInfo& pi = fabric->port_info(end_ports[i]);
      const auto now_state = std::tuple(static_cast<uint8_t>(pi.port_state), pi.lid.value(), pi.master_sm_lid.value());
      if (snapshot[i] == now_state) continue;
      snapshot[i] = now_state;
      const ipc::PortStateMsg msg = port_state(end_ports[i].node.value(), end_ports[i].port);
      for (const auto& [fd, s] : sessions)
        if (s->subscribed()) s->send_event(msg);
    }
  }

  ipc::PortStateMsg port_state(uint32_t node, uint8_t port) const override {
    ipc::PortStateMsg m;
    const fabric::PortRef p{fabric::NodeIndex(node), port};
    m.node = node;
    m.port = port;
    m.port_guid = fabric->topology().port(p).guid.value();
    mad::encode(fabric->port_info(p), wire::MutByteSpan(m.port_info));
    for (PKey k : fabric->pkeys(p)) m.pkeys.push_back(k.value());
    if (options.roce && fabric->topology().node(p.node).type != fabric::NodeType::kSwitch) {
      const link::PortSnapshot s = port_snapshot(p);
      m.link_layer = s.link_layer;
      m.ipv4 = s.ipv4;
    }
    return m;
  }

  void maybe_ready() {
    if (ready_sent || options.ready_fd < 0) return;
    if (sm && !sm->subnet_up() && sm->sweeping()) return;
    const char msg[] = "ready\n";
    (void)!::write(options.ready_fd, msg, sizeof msg - 1);
    ::close(options.ready_fd);
    ready_sent = true;
  }

  int timeout_ms() {
    if (more_work) return 0;
    int ms = -1;
    if (sm) {
      if (auto t = sm->next_deadline()) {
        const auto left = std::chrono::ceil<std::chrono::milliseconds>(*t - clock.now()).count();
        ms = static_cast<int>(std::clamp<int64_t>(left, 0, 60000));
      }
    }
    bool any = false;
    for (const auto& [fd, s] : sessions) any = any || s->subscribed();
    if (any) ms = ms < 0 ? 10 : std::min(ms, 10);
    return ms;
  }
};

Daemon::Daemon() : impl_(std::make_unique<Impl>()) {}
Daemon::~Daemon() = default;

const std::string& Daemon::socket_path() const { return impl_->socket; }

Result<std::unique_ptr<Daemon>> Daemon::create(Options options) {
  std::unique_ptr<Daemon> d(new Daemon());
  Impl& im = *d->impl_;
  auto name = ipc::fabric_name(options.fabric);
  if (!name) return Err{name.error()};
  im.name = *name;
  const std::string run_dir = options.runtime_dir.empty() ? ipc::runtime_dir(im.name) : options.runtime_dir;
  im.state = options.state_dir.empty() ? ipc::state_dir(im.name) : options.state_dir;
  im.socket = run_dir + "/softibd.sock";
  SOFTIB_TRY(ipc::make_dirs(run_dir));
  SOFTIB_TRY(ipc::make_dirs(im.state));

  auto topo = load(options.topology);
  if (!topo) return Err{topo.error()};
  im.source = options.topology;
  const auto sm_at = first_end_port(*topo);
  if (options.roce) {
    // .1 upward in node order; a CA's port p is first + p.
    uint32_t next = 0;
    for (uint32_t i = 0; i < topo->node_count(); ++i) {
      const auto& node = topo->node(fabric::NodeIndex(i));
      im.roce_first.push_back(next);
      if (node.type != fabric::NodeType::kSwitch) next += node.num_ports;
    }
    if (next >= 0xFFFF) return Status(Code::kInvalidArgument, fmt::format("RoCE mode: {} ports do not fit a /16", next));
    options.sm = true;  // assigns the link's internal addresses and brings the ports up
  }
  fabric::FabricOptions fo;
  fo.seed = options.seed;
  im.fabric = std::make_unique<fabric::Fabric>(std::move(*topo), fo);
  const auto& t = im.fabric->topology();
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const fabric::NodeIndex n(i);
    const bool sw = t.node(n).type == fabric::NodeType::kSwitch;
    for (uint8_t p = sw ? 0 : 1; p <= (sw ? 0 : t.node(n).num_ports); ++p) im.end_ports.push_back({n, p});
  }
  im.snapshot.assign(im.end_ports.size(), {});

  auto listener = ipc::Socket::listen(im.socket);
  if (!listener) {
    if (listener.error().code() == Code::kAlreadyExists)
      return Status(Code::kAlreadyExists, fmt::format("fabric \"{}\" already has a softibd ({})", im.name, im.socket));
    return Err{listener.error()};
  }
  im.listener = std::move(*listener);
  SOFTIB_TRY(im.listener.set_nonblocking(true));
  im.pid_file = run_dir + "/softibd.pid";
  SOFTIB_TRY(write_file_atomic(im.pid_file, fmt::format("{}\n", ::getpid())));

  if (options.sm) {
    if (!sm_at) return Status(Code::kInvalidArgument, "the fabric has no port for the SM");
    im.sm_at = *sm_at;
    auto port = sm::SimMadPort::attach(*im.fabric, *sm_at);
    if (!port) return Err{port.error()};
    im.sm_port = std::move(*port);
    options.sm_config.cache_dir = im.state;  // guid2lid survives restarts
    im.sm = std::make_unique<sm::SubnetManager>(*im.sm_port, im.clock, options.sm_config);
  }

  im.epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (im.epoll_fd < 0) return Status::from_errno(errno, "epoll_create1");
  sigset_t mask;
  sigemptyset(&mask);
  sigaddset(&mask, SIGTERM);
  sigaddset(&mask, SIGINT);
  sigaddset(&mask, SIGHUP);
  sigprocmask(SIG_BLOCK, &mask, nullptr);
  signal(SIGPIPE, SIG_IGN);
  im.signal_fd = ::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
  if (im.signal_fd < 0) return Status::from_errno(errno, "signalfd");
  im.watch(im.listener.fd(), EPOLLIN);
  im.watch(im.signal_fd, EPOLLIN);
  im.options = std::move(options);
  log(LogLevel::kInfo, "softibd", "fabric \"{}\": {} nodes from {}, socket {}", im.name, t.node_count(), im.source,
      im.socket);
  return d;
}

Result<void> Daemon::run() {
  Impl& im = *impl_;
  if (im.sm) im.sm->start();
  epoll_event events[kMaxEvents];
  while (!im.stop) {
    im.drive();
    for (auto& [fd, s] : im.sessions) s->flush();
    im.scan_ports();
    im.refresh_directory();
    im.maybe_ready();
    // Sessions with output still queued want EPOLLOUT; closed ones go.
    std::vector<int> dead;
    for (auto& [fd, s] : im.sessions) {
      if (s->closed()) dead.push_back(fd);
      else im.watch(fd, EPOLLIN | (s->wants_output() ? EPOLLOUT : 0u));
    }
    for (int fd : dead) im.close_session(fd);
    const int n = ::epoll_wait(im.epoll_fd, events, kMaxEvents, im.timeout_ms());
    if (n < 0) {
      if (errno == EINTR) continue;
      return Status::from_errno(errno, "epoll_wait");
    }
    for (int i = 0; i < n && !im.stop; ++i) {
      const int fd = events[i].data.fd;
      if (fd == im.listener.fd()) {
        im.accept_all();
      } else if (fd == im.signal_fd) {
        signalfd_siginfo si{};
        while (::read(im.signal_fd, &si, sizeof si) == sizeof si) {
          log(LogLevel::kInfo, "softibd", "signal {}: stopping", si.ssi_signo);
          im.stop = true;
        }
      } else if (auto it = im.sessions.find(fd); it != im.sessions.end()) {
        Session& s = *it->second;
        if (events[i].events & EPOLLOUT) s.flush();
        if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) s.read_all();
      }
    }
  }
  // Say goodbye: what a Shutdown request (or anything else) was answered with goes out.
  for (auto& [fd, s] : im.sessions) s->flush();  // small replies fit the socket buffer
  return {};
}

}  // namespace softib::daemon
