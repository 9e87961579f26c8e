#include "ipc/client.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "ipc/paths.hpp"

namespace softib::ipc {

Status decode_error(const Message& m) {
  Reader r(m.payload, "Error");
  uint32_t code = 0;
  std::string text;
  if (r.u32(code, "code") || r.str(text, "message")) return Status(Code::kInternal, "malformed error from softibd");
  if (code == 0 || code > static_cast<uint32_t>(Code::kInternal)) code = static_cast<uint32_t>(Code::kInternal);
  return Status(static_cast<Code>(code), text);
}

Result<Connection> Connection::open(std::string_view fabric, std::string_view client, std::string socket) {
  if (socket.empty()) {
    auto name = fabric_name(fabric);
    if (!name) return Err{name.error()};
    socket = socket_path(*name);
  }
  auto s = Socket::connect(socket);
  if (!s) {
    if (s.error().code() == Code::kUnavailable)
      return Status(Code::kUnavailable, fmt::format("{} (is softibd running? start it with: softib up)", s.error().message()));
    return Err{s.error()};
  }
  Connection c(std::move(*s));
  Writer w;
  w.u16(kProtocolVersion);
  w.u16(kProtocolVersion);
  w.str(client);
  auto reply = c.request(MsgType::kHello, w.data(), {MsgType::kHelloReply});
  if (!reply) return Err{reply.error()};
  Reader r(reply->payload, "HelloReply");
  HelloInfo& h = c.hello_;
  if (auto e = r.u16(h.version, "version"); e) return Status(Code::kParseError, e->to_string());
  if (auto e = r.str(h.fabric, "fabric"); e) return Status(Code::kParseError, e->to_string());
  if (auto e = r.u32(h.nodes, "nodes"); e) return Status(Code::kParseError, e->to_string());
  if (auto e = r.u8(h.sm_state, "sm_state"); e) return Status(Code::kParseError, e->to_string());
  if (auto e = r.str(h.source, "source"); e) return Status(Code::kParseError, e->to_string());
  return c;
}

Result<std::optional<Message>> Connection::receive(std::optional<Duration> timeout) {
  auto m = recv_message(socket_, assembler_, timeout);
  if (!m) return Err{m.error()};
  if (!*m) return std::optional<Message>{};
  Message& msg = **m;
  if (msg.type == MsgType::kRecvMads) {
    auto batch = decode_mad_batch(msg.payload);
    if (!batch) return Status(Code::kParseError, batch.error().to_string());
    for (auto& mad : *batch) mads_.push_back(std::move(mad));
    return std::optional<Message>{};
  }
  if (msg.type == MsgType::kRecvMad) {
    auto mad = decode_mad(msg.payload);
    if (!mad) return Status(Code::kParseError, mad.error().to_string());
    mads_.push_back(std::move(*mad));
    return std::optional<Message>{};
  }
  if (msg.type == MsgType::kPortEvent) {
    auto ev = decode_port_state(msg.payload);
    if (!ev) return Status(Code::kParseError, ev.error().to_string());
    events_.push_back(std::move(*ev));
    return std::optional<Message>{};
  }
  return m;
}

Result<Message> Connection::request(MsgType type, wire::ByteSpan payload, std::initializer_list<MsgType> accept,
                                    std::span<const int> fds) {
  const uint32_t seq = next_seq_++;
  SOFTIB_TRY(send_message(socket_, type, seq, payload, fds));
  for (;;) {
    auto m = receive(std::nullopt);
    if (!m) return Err{m.error()};
    if (!*m) continue;  // a MAD or event: kept
    Message& msg = **m;
    if (msg.seq != seq) continue;  // a stray reply (to a send_mad that failed late): dropped
    if (msg.type == MsgType::kError) return decode_error(msg);
    for (MsgType t : accept)
      if (msg.type == t) return std::move(msg);
    return Status(Code::kParseError, fmt::format("softibd answered {} with {}", to_string(type), to_string(msg.type)));
  }
}

Result<Connection::Attached> Connection::attach_hca(uint32_t node, int inbox_fd, int doorbell_fd) {
  Writer w;
  encode(w, AttachHcaMsg{node, static_cast<uint32_t>(::getpid())});
  const int fds[2] = {inbox_fd, doorbell_fd};
  auto m = request(MsgType::kAttachHca, w.data(), {MsgType::kHcaAttached}, fds);
  if (!m) return Err{m.error()};
  auto info = decode_hca_attached(m->payload);
  if (!info) return Status(Code::kParseError, info.error().to_string());
  if (m->fds.size() != 1) return Status(Code::kParseError, "HcaAttached came without the directory");
  return Attached{std::move(*info), std::move(m->fds[0])};
}

Result<Connection::Endpoint> Connection::get_endpoint(uint32_t endpoint) {
  Writer w;
  w.u32(endpoint);
  auto m = request(MsgType::kGetEndpoint, w.data(), {MsgType::kEndpoint});
  if (!m) return Err{m.error()};
  auto info = decode_endpoint(m->payload);
  if (!info) return Status(Code::kParseError, info.error().to_string());
  if (m->fds.size() != 2) return Status(Code::kParseError, "Endpoint came without its inbox and doorbell");
  return Endpoint{*info, std::move(m->fds[0]), std::move(m->fds[1])};
}

Result<std::vector<NodeEntry>> Connection::list_nodes(NodeFilter filter) {
  const uint32_t seq = next_seq_++;
  const uint8_t f = static_cast<uint8_t>(filter);
  SOFTIB_TRY(send_message(socket_, MsgType::kListNodes, seq, wire::ByteSpan(&f, 1)));
  std::vector<NodeEntry> out;
  for (;;) {
    auto m = receive(std::nullopt);
    if (!m) return Err{m.error()};
    if (!*m || (*m)->seq != seq) continue;
    Message& msg = **m;
    if (msg.type == MsgType::kListEnd) return out;
    if (msg.type == MsgType::kError) return decode_error(msg);
    if (msg.type != MsgType::kNodeEntry) return Status(Code::kParseError, "unexpected reply to ListNodes");
    auto e = decode_node_entry(msg.payload);
    if (!e) return Status(Code::kParseError, e.error().to_string());
    out.push_back(std::move(*e));
  }
}

namespace {

std::vector<uint8_t> node_port(uint32_t node, uint8_t port) {
  Writer w;
  w.u32(node);
  w.u8(port);
  return std::move(w.data());
}

}  // namespace

Result<PortStateMsg> Connection::query_port(uint32_t node, uint8_t port) {
  auto m = request(MsgType::kQueryPort, node_port(node, port), {MsgType::kPortState});
  if (!m) return Err{m.error()};
  auto p = decode_port_state(m->payload);
  if (!p) return Status(Code::kParseError, p.error().to_string());
  return *p;
}

Result<FabricInfoMsg> Connection::fabric_info() {
  auto m = request(MsgType::kFabricInfo, {}, {MsgType::kFabricInfoReply});
  if (!m) return Err{m.error()};
  auto f = decode_fabric_info(m->payload);
  if (!f) return Status(Code::kParseError, f.error().to_string());
  return *f;
}

Result<void> Connection::link_set(uint32_t node, uint8_t port, LinkOp op) {
  auto p = node_port(node, port);
  p.push_back(static_cast<uint8_t>(op));
  auto m = request(MsgType::kLinkSet, p, {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

Result<void> Connection::port_errors(uint32_t node, uint8_t port, uint8_t counter, uint64_t amount) {
  Writer w;
  w.u32(node);
  w.u8(port);
  w.u8(counter);
  w.u64(amount);
  auto m = request(MsgType::kPortErrors, w.data(), {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

Result<void> Connection::impair(uint32_t node, uint8_t port, double loss, double corruption) {
  Writer w;
  w.u32(node);
  w.u8(port);
  w.f64(loss);
  w.f64(corruption);
  auto m = request(MsgType::kImpair, w.data(), {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

Result<void> Connection::shutdown() {
  auto m = request(MsgType::kShutdown, {}, {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

Result<void> Connection::subscribe() {
  auto m = request(MsgType::kSubscribe, {}, {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

namespace {

// A wait's end: none (wait for ever) or a steady-clock time.
class Deadline {
 public:
  explicit Deadline(std::optional<Duration> timeout)
      : forever_(!timeout), at_(std::chrono::steady_clock::now() + timeout.value_or(Duration::zero())) {}
  std::optional<Duration> left() const {
    if (forever_) return std::nullopt;
    return std::max(Duration::zero(), std::chrono::duration_cast<Duration>(at_ - std::chrono::steady_clock::now()));
  }
  bool passed() const { return !forever_ && std::chrono::steady_clock::now() >= at_; }

 private:
  bool forever_;
  std::chrono::steady_clock::time_point at_;
};

}  // namespace

Result<std::optional<PortStateMsg>> Connection::next_event(std::optional<Duration> timeout) {
  const Deadline deadline(timeout);
  while (events_.empty()) {
    auto m = receive(deadline.left());  // one look even when the time is up
    if (!m) return Err{m.error()};
    if (events_.empty() && deadline.passed()) return std::optional<PortStateMsg>{};
  }
  std::optional<PortStateMsg> e = std::move(events_.front());
  events_.pop_front();
  return e;
}

Result<void> Connection::open_port(uint32_t node, uint8_t port) {
  auto m = request(MsgType::kOpenPort, node_port(node, port), {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

Result<uint32_t> Connection::register_agent(const RegisterMsg& r) {
  Writer w;
  encode(w, r);
  auto m = request(MsgType::kRegister, w.data(), {MsgType::kRegistered});
  if (!m) return Err{m.error()};
  Reader rd(m->payload, "Registered");
  uint32_t id = 0;
  if (auto e = rd.u32(id, "agent")) return Status(Code::kParseError, e->to_string());
  return id;
}

Result<void> Connection::unregister_agent(uint32_t agent) {
  Writer w;
  w.u32(agent);
  auto m = request(MsgType::kUnregister, w.data(), {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

Result<void> Connection::set_is_sm(bool on) {
  const uint8_t v = on ? 1 : 0;
  auto m = request(MsgType::kSetIsSm, wire::ByteSpan(&v, 1), {MsgType::kOk});
  if (!m) return Err{m.error()};
  return {};
}

Result<void> Connection::send_mad(const MadMsg& mad) {
  Writer w;
  encode(w, mad);
  return send_message(socket_, MsgType::kSendMad, next_seq_++, w.data());
}

Result<void> Connection::send_mads(std::span<const MadMsg> mads) {
  for (size_t at = 0; at < mads.size(); at += kMaxBatch) {
    Writer w;
    encode_batch(w, mads.subspan(at, std::min(kMaxBatch, mads.size() - at)));
    SOFTIB_TRY(send_message(socket_, MsgType::kSendMads, next_seq_++, w.data()));
  }
  return {};
}

Result<std::optional<MadMsg>> Connection::recv_mad(std::optional<Duration> timeout) {
  const Deadline deadline(timeout);
  while (mads_.empty()) {
    auto m = receive(deadline.left());  // one look even when the time is up
    if (!m) return Err{m.error()};
    if (*m && (*m)->type == MsgType::kError) return decode_error(**m);  // a send_mad refused
    if (mads_.empty() && deadline.passed()) return std::optional<MadMsg>{};
  }
  std::optional<MadMsg> out = std::move(mads_.front());
  mads_.pop_front();
  return out;
}

}  // namespace softib::ipc
