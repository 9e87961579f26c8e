#include "daemon/session.hpp"

#include <fcntl.h>

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "mad/method.hpp"
#include "wire/bytes.hpp"

namespace softib::daemon {

namespace {

constexpr size_t kMaxAgents = 32;           // as the kernel's umad (IB_UMAD_MAX_AGENTS)
constexpr size_t kMaxRememberedTids = 4096;

uint64_t tid_of(wire::ByteSpan mad) { return wire::load_be64(&mad[8]); }

}  // namespace

Session::Session(DaemonContext& d, ipc::Socket socket) : d_(d), socket_(std::move(socket)) {}

Session::~Session() {
  for (uint32_t id : endpoints_) d_.detach_endpoint(id);
  if (fabric_agent_ != 0) {
    if (is_sm_ && port_) (void)d_.fabric->set_is_sm(*port_, false);
    d_.fabric->detach(fabric_agent_);
  }
}

void Session::read_all() {
  std::vector<uint8_t> buf(ipc::kHeaderSize + ipc::kMaxFragment);
  while (!closed_) {
    std::vector<UniqueFd> fds;
    auto n = socket_.recv(buf, &fds);
    if (!n) {
      if (n.error().code() == Code::kWouldBlock) return;
      log(LogLevel::kWarn, "softibd", "session: {}", n.error().to_string());
      closed_ = true;
      return;
    }
    if (*n == 0) {
      closed_ = true;  // the client went away
      return;
    }
    auto m = assembler_.feed(wire::ByteSpan(buf.data(), *n), std::move(fds));
    if (!m) {
      // A malformed message: the session cannot be trusted to stay in step. Drop it.
      log(LogLevel::kWarn, "softibd", "dropping a session: {}", m.error().to_string());
      closed_ = true;
      return;
    }
    if (*m) handle(**m);
  }
}

void Session::close_batch() {
  if (batch_count_ == 0) return;
  auto& b = batch_.data();
  for (size_t i = 0; i < 4; ++i) b[i] = static_cast<uint8_t>(batch_count_ >> (8 * i));
  reply(ipc::MsgType::kRecvMads, 0, b);
  b.clear();
  batch_count_ = 0;
}

void Session::flush() {
  close_batch();
  while (!outbox_.empty()) {
    const Outgoing& o = outbox_.front();
    std::vector<int> fds;
    for (const auto& f : o.fds) fds.push_back(f.get());
    auto r = socket_.send(o.bytes, fds);
    if (!r) {
      if (r.error().code() != Code::kWouldBlock) closed_ = true;
      return;
    }
    outbox_bytes_ -= o.bytes.size();
    outbox_.pop_front();
  }
}

void Session::reply(ipc::MsgType type, uint32_t seq, wire::ByteSpan payload, std::span<const int> fds) {
  for (auto& f : ipc::fragments(type, seq, payload)) {
    outbox_bytes_ += f.size();
    Outgoing o{std::move(f), {}};
    // The first fragment carries the descriptors: copies, so that they stay valid while queued.
    for (int fd : fds) o.fds.emplace_back(::fcntl(fd, F_DUPFD_CLOEXEC, 0));
    fds = {};
    outbox_.push_back(std::move(o));
  }
  if (outbox_bytes_ > 2 * kMaxOutbox) {
    log(LogLevel::kWarn, "softibd", "a client reads too slowly; disconnecting it");
    closed_ = true;
  }
}

void Session::error(uint32_t seq, const Status& s) {
  ipc::Writer w;
  w.u32(static_cast<uint32_t>(s.code()));
  w.str(s.message());
  reply(ipc::MsgType::kError, seq, w.data());
}

void Session::send_event(const ipc::PortStateMsg& m) {
  ipc::Writer w;
  encode(w, m);
  reply(ipc::MsgType::kPortEvent, 0, w.data());
}

std::optional<fabric::PortRef> Session::port_arg(ipc::Reader& r, uint32_t seq, bool external) {
  uint32_t node = 0;
  uint8_t port = 0;
  if (r.u32(node, "node") || r.u8(port, "port")) {
    error(seq, Status(Code::kParseError, "expected a node and a port"));
    return std::nullopt;
  }
  const auto& t = d_.fabric->topology();
  if (node >= t.node_count() || port > t.node(fabric::NodeIndex(node)).num_ports || (external && port == 0)) {
    error(seq, Status(Code::kInvalidArgument, fmt::format("no port {} on node {}", port, node)));
    return std::nullopt;
  }
  return fabric::PortRef{fabric::NodeIndex(node), port};
}

void Session::handle(ipc::Message& m) {
  using ipc::MsgType;
  if (!hello_ && m.type != MsgType::kHello) {
    error(m.seq, Status(Code::kInvalidArgument, "say Hello first"));
    closed_ = true;
    return;
  }
  switch (m.type) {
    case MsgType::kHello: {
      ipc::Reader r(m.payload, "Hello");
      uint16_t lo = 0, hi = 0;
      std::string client;
      if (r.u16(lo, "min_version") || r.u16(hi, "max_version") || r.str(client, "client") ||
          lo > ipc::kProtocolVersion || hi < ipc::kProtocolVersion) {
        error(m.seq, Status(Code::kUnsupported, fmt::format("softibd speaks protocol version {}", ipc::kProtocolVersion)));
        closed_ = true;
        return;
      }
      hello_ = true;
      const ipc::FabricInfoMsg info = d_.info();
      ipc::Writer w;
      w.u16(ipc::kProtocolVersion);
      w.str(info.name);
      w.u32(info.nodes);
      w.u8(info.sm_state);
      w.str(info.source);
      reply(MsgType::kHelloReply, m.seq, w.data());
      return;
    }
    case MsgType::kListNodes:
      list_nodes(m);
      return;
    case MsgType::kQueryPort: {
      ipc::Reader r(m.payload, "QueryPort");
      if (auto p = port_arg(r, m.seq, false)) {
        ipc::Writer w;
        encode(w, d_.port_state(p->node.value(), p->port));
        reply(MsgType::kPortState, m.seq, w.data());
      }
      return;
    }
    case MsgType::kFabricInfo: {
      ipc::Writer w;
      encode(w, d_.info());
      reply(MsgType::kFabricInfoReply, m.seq, w.data());
      return;
    }
    case MsgType::kOpenPort:
      open_port(m);
      return;
    case MsgType::kRegister:
      register_agent(m);
      return;
    case MsgType::kUnregister: {
      ipc::Reader r(m.payload, "Unregister");
      uint32_t id = 0;
      if (r.u32(id, "agent") || id >= agents_.size() || !agents_[id]) {
        error(m.seq, Status(Code::kInvalidArgument, "no such agent"));
        return;
      }
      agents_[id].reset();
      (void)update_classes();
      ok(m.seq);
      return;
    }
    case MsgType::kSendMad:
      send_mad(m);
      return;
    case MsgType::kSendMads: {
      auto batch = ipc::decode_mad_batch(m.payload);
      if (!batch) {
        error(m.seq, Status(Code::kParseError, batch.error().to_string()));
        return;
      }
      for (const auto& mad : *batch) send_one(mad, m.seq);
      return;
    }
    case MsgType::kSetIsSm: {
      if (!port_) {
        error(m.seq, Status(Code::kInvalidArgument, "open a port first"));
        return;
      }
      is_sm_ = !m.payload.empty() && m.payload[0] != 0;
      if (auto r = d_.fabric->set_is_sm(*port_, is_sm_); !r) {
        error(m.seq, r.error());
        return;
      }
      ok(m.seq);
      return;
    }
    case MsgType::kSubscribe:
      subscribed_ = true;
      ok(m.seq);
      return;
    case MsgType::kLinkSet:
    case MsgType::kPortErrors:
    case MsgType::kImpair:
      control(m);
      return;
    case MsgType::kShutdown:
      ok(m.seq);
      d_.request_stop();
      return;
    case MsgType::kAttachHca:
      attach_hca(m);
      return;
    case MsgType::kGetEndpoint:
      get_endpoint(m);
      return;
    default:
      error(m.seq, Status(Code::kUnsupported, fmt::format("softibd does not take {} messages", ipc::to_string(m.type))));
      return;
  }
}

void Session::attach_hca(ipc::Message& m) {
  auto a = ipc::decode_attach_hca(m.payload);
  if (!a) {
    error(m.seq, Status(Code::kParseError, a.error().to_string()));
    return;
  }
  if (m.fds.size() != 2) {
    error(m.seq, Status(Code::kInvalidArgument, "AttachHca needs the inbox and the doorbell (two fds)"));
    return;
  }
  auto r = d_.attach_endpoint(a->node, a->pid, std::move(m.fds[0]), std::move(m.fds[1]));
  if (!r) {
    error(m.seq, r.error());
    return;
  }
  endpoints_.push_back(r->endpoint);
  ipc::Writer w;
  encode(w, *r);
  const int dir = d_.directory_fd();
  reply(ipc::MsgType::kHcaAttached, m.seq, w.data(), std::span<const int>(&dir, 1));
}

void Session::get_endpoint(const ipc::Message& m) {
  ipc::Reader r(m.payload, "GetEndpoint");
  uint32_t id = 0;
  if (r.u32(id, "endpoint") || r.end()) {
    error(m.seq, Status(Code::kParseError, "expected an endpoint id"));
    return;
  }
  auto e = d_.endpoint_fds(id);
  if (!e) {
    error(m.seq, Status(Code::kNotFound, fmt::format("no endpoint {}", id)));
    return;
  }
  ipc::Writer w;
  encode(w, ipc::EndpointMsg{id, e->pid});
  const int fds[2] = {e->inbox, e->doorbell};
  reply(ipc::MsgType::kEndpoint, m.seq, w.data(), fds);
}

void Session::list_nodes(const ipc::Message& m) {
  const uint8_t filter = m.payload.empty() ? 0 : m.payload[0];
  const auto& t = d_.fabric->topology();
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const fabric::NodeIndex n(i);
    const fabric::TopoNode& tn = t.node(n);
    const bool sw = tn.type == fabric::NodeType::kSwitch;
    if ((filter == 1 && sw) || (filter == 2 && !sw)) continue;
    const mad::NodeInfo& ni = d_.fabric->node_info(n);
    ipc::NodeEntry e;
    e.index = i;
    e.type = static_cast<uint8_t>(tn.type);
    e.num_ports = tn.num_ports;
    e.node_guid = ni.node_guid.value();
    e.system_image_guid = ni.system_image_guid.value();
    e.vendor_id = ni.vendor_id;
    e.device_id = ni.device_id;
    e.revision = ni.revision;
    e.id = tn.id;
    e.description = std::string(d_.fabric->node_description(n));
    for (uint8_t p = 1; p <= tn.num_ports; ++p) e.port_guids.push_back(t.port({n, p}).guid.value());
    ipc::Writer w;
    encode(w, e);
    reply(ipc::MsgType::kNodeEntry, m.seq, w.data());
  }
  reply(ipc::MsgType::kListEnd, m.seq, {});
}

void Session::open_port(const ipc::Message& m) {
  ipc::Reader r(m.payload, "OpenPort");
  auto p = port_arg(r, m.seq, false);
  if (!p) return;
  if (port_) {
    error(m.seq, Status(Code::kBusy, "this session already has a port"));
    return;
  }
  auto id = d_.fabric->attach(*p, this, {});
  if (!id) {
    error(m.seq, id.error());
    return;
  }
  port_ = p;
  fabric_agent_ = *id;
  ok(m.seq);
}

Result<void> Session::update_classes() {
  std::vector<uint8_t> classes;
  for (const auto& a : agents_)
    if (a && std::any_of(a->method_mask.begin(), a->method_mask.end(), [](uint8_t b) { return b != 0; }) &&
        std::find(classes.begin(), classes.end(), a->mgmt_class) == classes.end())
      classes.push_back(a->mgmt_class);
  return d_.fabric->set_classes(fabric_agent_, classes);
}

void Session::register_agent(const ipc::Message& m) {
  if (!port_) {
    error(m.seq, Status(Code::kInvalidArgument, "open a port first"));
    return;
  }
  auto reg = ipc::decode_register(m.payload);
  if (!reg) {
    error(m.seq, Status(Code::kParseError, reg.error().to_string()));
    return;
  }
  size_t id = 0;
  while (id < agents_.size() && agents_[id]) ++id;
  if (id == kMaxAgents) {
    error(m.seq, Status(Code::kResourceExhausted, "no more agents on this port (32)"));
    return;
  }
  if (id == agents_.size()) agents_.emplace_back();
  agents_[id] = *reg;
  if (auto r = update_classes(); !r) {
    agents_[id].reset();
    error(m.seq, r.error());
    return;
  }
  ipc::Writer w;
  w.u32(static_cast<uint32_t>(id));
  reply(ipc::MsgType::kRegistered, m.seq, w.data());
}

void Session::send_mad(const ipc::Message& m) {
  auto decoded = ipc::decode_mad(m.payload);
  if (!decoded) {
    error(m.seq, Status(Code::kParseError, decoded.error().to_string()));
    return;
  }
  send_one(*decoded, m.seq);
}

void Session::send_one(const ipc::MadMsg& mad, uint32_t seq) {
  if (!port_ || mad.agent >= agents_.size() || !agents_[mad.agent]) {
    error(seq, Status(Code::kInvalidArgument, "send through a registered agent of an open port"));
    return;
  }
  if (mad.mad.size() != fabric::kMadSize) {
    error(seq, Status(Code::kInvalidArgument, fmt::format("a MAD is {} bytes, not {}", fabric::kMadSize, mad.mad.size())));
    return;
  }
  fabric::Mad out;
  std::copy(mad.mad.begin(), mad.mad.end(), out.bytes.begin());
  out.dlid = Lid(mad.lid);
  out.remote_qp = Qpn(mad.remote_qp & 0xFFFFFF);
  out.qkey = QKey(mad.qkey);
  out.sl = mad.sl;
  out.pkey = PKey(mad.pkey);
  // The agent that sends a request takes its response; the one that sends an RMPP transfer
  // (an SA's GetTableResp too) takes the receiver's ACKs, STOPs and ABORTs, by TID.
  const bool rmpp_data = out.bytes[24] != 0 && out.bytes[25] == 1;
  if (!mad::is_response(static_cast<mad::Method>(out.bytes[3])) || rmpp_data) {
    const uint64_t tid = tid_of(out.bytes);
    if (tid_agent_.size() >= kMaxRememberedTids) {
      tid_agent_.erase(tid_order_.front());
      tid_order_.pop_front();
    }
    if (tid_agent_.emplace(tid, mad.agent).second) tid_order_.push_back(tid);
  }
  d_.fabric->send(fabric_agent_, out);
}

void Session::on_mad(fabric::PortRef, const fabric::Mad& mad) {
  const auto method = static_cast<mad::Method>(mad.bytes[3]);
  std::optional<uint32_t> agent;
  // RMPP ACK/STOP/ABORT from the peer belong to the agent that sent the transfer (by TID).
  const bool rmpp_control = mad.bytes[24] != 0 && mad.bytes[25] >= 2 && mad.bytes[25] <= 4;
  if (mad::is_response(method) || rmpp_control) {
    if (auto it = tid_agent_.find(tid_of(mad.bytes)); it != tid_agent_.end()) agent = it->second;
  } else {
    // An unsolicited request: the agent registered for its class, version and method.
    const auto bits = static_cast<uint8_t>(method);
    for (size_t i = 0; i < agents_.size() && !agent; ++i) {
      const auto& a = agents_[i];
      if (a && a->mgmt_class == mad.mgmt_class() && a->class_version == mad.bytes[2] &&
          ((a->method_mask[bits / 8] >> (bits % 8)) & 1))
        agent = static_cast<uint32_t>(i);
    }
  }
  if (!agent) return;  // nobody here waits for it (as the kernel drops it)
  if (outbox_bytes_ + batch_.data().size() > kMaxOutbox) {
    ++dropped_mads_;  // a full receive queue: the MAD is lost, as on a real port
    return;
  }
  ipc::MadMsg m;
  m.agent = *agent;
  m.lid = mad.slid.value();
  m.remote_qp = mad.remote_qp.value();
  m.qkey = mad.qkey.value();
  m.sl = mad.sl;
  m.pkey = mad.pkey.value();
  m.mad.assign(mad.bytes.begin(), mad.bytes.end());
  if (batch_count_ == 0) batch_.u32(0);  // the count, filled in by close_batch()
  ipc::append_to_batch(batch_, m);
  if (++batch_count_ == ipc::kMaxBatch) close_batch();
}

void Session::control(const ipc::Message& m) {
  ipc::Reader r(m.payload, "Control");
  auto p = port_arg(r, m.seq, true);
  if (!p) return;
  Result<void> done;
  if (m.type == ipc::MsgType::kLinkSet) {
    uint8_t op = 0;
    if (r.u8(op, "op") || op > 3) {
      error(m.seq, Status(Code::kInvalidArgument, "link operation: down, up, disable or enable"));
      return;
    }
    switch (static_cast<ipc::LinkOp>(op)) {
      case ipc::LinkOp::kDown: done = d_.fabric->set_link_up(*p, false); break;
      case ipc::LinkOp::kUp: done = d_.fabric->set_link_up(*p, true); break;
      case ipc::LinkOp::kDisable: done = d_.fabric->set_port_disabled(*p, true); break;
      case ipc::LinkOp::kEnable: done = d_.fabric->set_port_disabled(*p, false); break;
    }
    if (done) d_.link_changed(*p);
  } else if (m.type == ipc::MsgType::kPortErrors) {
    uint8_t counter = 0;
    uint64_t amount = 0;
    if (r.u8(counter, "counter") || r.u64(amount, "amount") ||
        counter >= static_cast<uint8_t>(fabric::ErrorCounter::kCount)) {
      error(m.seq, Status(Code::kInvalidArgument, "no such error counter"));
      return;
    }
    done = d_.fabric->add_errors(*p, static_cast<fabric::ErrorCounter>(counter), amount);
  } else {
    double loss = 0, corruption = 0;
    if (r.f64(loss, "loss") || r.f64(corruption, "corruption") || !(loss >= 0 && loss <= 1) ||
        !(corruption >= 0 && corruption <= 1)) {
      error(m.seq, Status(Code::kInvalidArgument, "loss and corruption are probabilities, 0 to 1"));
      return;
    }
    done = d_.fabric->set_impairment(*p, {loss, corruption});
  }
  if (!done) {
    error(m.seq, done.error());
    return;
  }
  ok(m.seq);
}

}  // namespace softib::daemon
