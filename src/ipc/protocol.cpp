#include "ipc/protocol.hpp"

#include <bit>
#include <cstring>

#include <fmt/format.h>

namespace softib::ipc {

std::string_view to_string(MsgType t) {
  switch (t) {
    case MsgType::kHello: return "Hello";
    case MsgType::kHelloReply: return "HelloReply";
    case MsgType::kError: return "Error";
    case MsgType::kOk: return "Ok";
    case MsgType::kListNodes: return "ListNodes";
    case MsgType::kNodeEntry: return "NodeEntry";
    case MsgType::kListEnd: return "ListEnd";
    case MsgType::kQueryPort: return "QueryPort";
    case MsgType::kPortState: return "PortState";
    case MsgType::kOpenPort: return "OpenPort";
    case MsgType::kRegister: return "Register";
    case MsgType::kRegistered: return "Registered";
    case MsgType::kUnregister: return "Unregister";
    case MsgType::kSendMad: return "SendMad";
    case MsgType::kRecvMad: return "RecvMad";
    case MsgType::kSendMads: return "SendMads";
    case MsgType::kRecvMads: return "RecvMads";
    case MsgType::kSetIsSm: return "SetIsSm";
    case MsgType::kSubscribe: return "Subscribe";
    case MsgType::kPortEvent: return "PortEvent";
    case MsgType::kLinkSet: return "LinkSet";
    case MsgType::kPortErrors: return "PortErrors";
    case MsgType::kImpair: return "Impair";
    case MsgType::kShutdown: return "Shutdown";
    case MsgType::kFabricInfo: return "FabricInfo";
    case MsgType::kFabricInfoReply: return "FabricInfoReply";
    case MsgType::kAttachHca: return "AttachHca";
    case MsgType::kHcaAttached: return "HcaAttached";
    case MsgType::kGetEndpoint: return "GetEndpoint";
    case MsgType::kEndpoint: return "Endpoint";
  }
  return "?";
}

// ---- Writer / Reader ----------------------------------------------------------------------------

void Writer::u16(uint16_t v) {
  u8(static_cast<uint8_t>(v));
  u8(static_cast<uint8_t>(v >> 8));
}
void Writer::u32(uint32_t v) {
  u16(static_cast<uint16_t>(v));
  u16(static_cast<uint16_t>(v >> 16));
}
void Writer::u64(uint64_t v) {
  u32(static_cast<uint32_t>(v));
  u32(static_cast<uint32_t>(v >> 32));
}
void Writer::f64(double v) { u64(std::bit_cast<uint64_t>(v)); }
void Writer::str(std::string_view s) {
  s = s.substr(0, 0xFFFF);
  u16(static_cast<uint16_t>(s.size()));
  out_.insert(out_.end(), s.begin(), s.end());
}

std::optional<wire::ParseError> Reader::need(size_t n, std::string_view field) const {
  if (in_.size() - at_ >= n) return std::nullopt;
  return wire::ParseError{wire::ParseErrorKind::kTruncated, what_, field, static_cast<uint32_t>(at_), 0,
                          in_.size()};
}

std::optional<wire::ParseError> Reader::u8(uint8_t& v, std::string_view field) {
  if (auto e = need(1, field)) return e;
  v = in_[at_++];
  return std::nullopt;
}
std::optional<wire::ParseError> Reader::u16(uint16_t& v, std::string_view field) {
  if (auto e = need(2, field)) return e;
  v = static_cast<uint16_t>(in_[at_] | in_[at_ + 1] << 8);
  at_ += 2;
  return std::nullopt;
}
std::optional<wire::ParseError> Reader::u32(uint32_t& v, std::string_view field) {
  if (auto e = need(4, field)) return e;
  v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | in_[at_ + static_cast<size_t>(i)];
  at_ += 4;
  return std::nullopt;
}
std::optional<wire::ParseError> Reader::u64(uint64_t& v, std::string_view field) {
  if (auto e = need(8, field)) return e;
  v = 0;
  for (int i = 7; i >= 0; --i) v = v << 8 | in_[at_ + static_cast<size_t>(i)];
  at_ += 8;
  return std::nullopt;
}
std::optional<wire::ParseError> Reader::f64(double& v, std::string_view field) {
  uint64_t bits = 0;
  if (auto e = u64(bits, field)) return e;
  v = std::bit_cast<double>(bits);
  return std::nullopt;
}
std::optional<wire::ParseError> Reader::str(std::string& s, std::string_view field) {
  uint16_t n = 0;
  if (auto e = u16(n, field)) return e;
  if (auto e = need(n, field)) return e;
  s.assign(reinterpret_cast<const char*>(in_.data() + at_), n);
  at_ += n;
  return std::nullopt;
}
std::optional<wire::ParseError> Reader::bytes(std::span<uint8_t> out, std::string_view field) {
  if (auto e = need(out.size(), field)) return e;
  std::memcpy(out.data(), in_.data() + at_, out.size());
  at_ += out.size();
  return std::nullopt;
}
std::optional<wire::ParseError> Reader::skip(size_t n, std::string_view field) {
  if (auto e = need(n, field)) return e;
  at_ += n;
  return std::nullopt;
}

std::optional<wire::ParseError> Reader::end() const {
  if (at_ == in_.size()) return std::nullopt;
  return wire::ParseError{wire::ParseErrorKind::kInconsistent, what_, "trailing bytes", static_cast<uint32_t>(at_),
                          in_.size() - at_, 0};
}

// ---- header and fragments -------------------------------------------------------------------------

std::vector<uint8_t> encode_header(const Header& h) {
  Writer w;
  w.u32(kMagic);
  w.u16(static_cast<uint16_t>(h.type));
  w.u16(h.flags);
  w.u32(h.length);
  w.u32(h.seq);
  return std::move(w.data());
}

wire::Parsed<Header> decode_header(wire::ByteSpan in) {
  Reader r(in, "message header");
  uint32_t magic = 0;
  uint16_t type = 0;
  Header h;
  if (auto e = r.u32(magic, "magic")) return *e;
  if (magic != kMagic) return wire::ParseError{wire::ParseErrorKind::kIllegalValue, "message header", "magic", 0, magic, 0};
  if (auto e = r.u16(type, "type")) return *e;
  if (auto e = r.u16(h.flags, "flags")) return *e;
  if (auto e = r.u32(h.length, "length")) return *e;
  if (auto e = r.u32(h.seq, "seq")) return *e;
  if (h.length > kMaxFragment)
    return wire::ParseError{wire::ParseErrorKind::kIllegalValue, "message header", "length", 8, h.length, 0};
  if ((h.flags & ~kMore) != 0)
    return wire::ParseError{wire::ParseErrorKind::kIllegalValue, "message header", "flags", 6, h.flags, 0};
  h.type = static_cast<MsgType>(type);
  return h;
}

std::vector<std::vector<uint8_t>> fragments(MsgType type, uint32_t seq, wire::ByteSpan payload) {
  std::vector<std::vector<uint8_t>> out;
  size_t at = 0;
  do {
    const size_t n = std::min(kMaxFragment, payload.size() - at);
    Header h{type, static_cast<uint16_t>(at + n < payload.size() ? kMore : 0), static_cast<uint32_t>(n), seq};
    std::vector<uint8_t> f = encode_header(h);
    f.insert(f.end(), payload.begin() + static_cast<ptrdiff_t>(at), payload.begin() + static_cast<ptrdiff_t>(at + n));
    out.push_back(std::move(f));
    at += n;
  } while (at < payload.size());
  return out;
}

Result<std::optional<Message>> Assembler::feed(wire::ByteSpan fragment, std::vector<UniqueFd> fds) {
  auto h = decode_header(fragment);
  if (!h) return Status(Code::kParseError, h.error().to_string());
  if (fragment.size() != kHeaderSize + h->length)
    return Status(Code::kParseError, fmt::format("message fragment of {} bytes says its payload is {}",
                                                 fragment.size(), h->length));
  if (partial_ && (partial_->type != h->type || partial_->seq != h->seq)) {
    partial_.reset();
    return Status(Code::kParseError, "a message's fragments changed type or sequence number");
  }
  if (!partial_) partial_ = Message{h->type, h->seq, {}, {}};
  if (partial_->payload.size() + h->length > kMaxMessage) {
    partial_.reset();
    return Status(Code::kParseError, "message larger than the protocol allows");
  }
  partial_->payload.insert(partial_->payload.end(), fragment.begin() + kHeaderSize, fragment.end());
  for (auto& f : fds) partial_->fds.push_back(std::move(f));
  if (h->flags & kMore) return std::optional<Message>{};
  std::optional<Message> done = std::move(partial_);
  partial_.reset();
  return done;
}

// ---- payloads ------------------------------------------------------------------------------------

void encode(Writer& w, const NodeEntry& e) {
  w.u32(e.index);
  w.u8(e.type);
  w.u8(e.num_ports);
  w.u64(e.node_guid);
  w.u64(e.system_image_guid);
  w.u32(e.vendor_id);
  w.u16(e.device_id);
  w.u32(e.revision);
  w.str(e.id);
  w.str(e.description);
  w.u16(static_cast<uint16_t>(e.port_guids.size()));
  for (uint64_t g : e.port_guids) w.u64(g);
}

wire::Parsed<NodeEntry> decode_node_entry(wire::ByteSpan in) {
  Reader r(in, "NodeEntry");
  NodeEntry e;
  uint16_t ports = 0;
  if (auto x = r.u32(e.index, "index")) return *x;
  if (auto x = r.u8(e.type, "type")) return *x;
  if (auto x = r.u8(e.num_ports, "num_ports")) return *x;
  if (auto x = r.u64(e.node_guid, "node_guid")) return *x;
  if (auto x = r.u64(e.system_image_guid, "system_image_guid")) return *x;
  if (auto x = r.u32(e.vendor_id, "vendor_id")) return *x;
  if (auto x = r.u16(e.device_id, "device_id")) return *x;
  if (auto x = r.u32(e.revision, "revision")) return *x;
  if (auto x = r.str(e.id, "id")) return *x;
  if (auto x = r.str(e.description, "description")) return *x;
  if (auto x = r.u16(ports, "port_guids")) return *x;
  if (ports > 255) return wire::ParseError{wire::ParseErrorKind::kIllegalValue, "NodeEntry", "port_guids", 0, ports, 0};
  e.port_guids.resize(ports);
  for (uint64_t& g : e.port_guids)
    if (auto x = r.u64(g, "port_guid")) return *x;
  if (auto x = r.end()) return *x;
  return e;
}

void encode(Writer& w, const PortStateMsg& p) {
  w.u32(p.node);
  w.u8(p.port);
  w.u64(p.port_guid);
  w.bytes(p.port_info);
  w.u16(static_cast<uint16_t>(p.pkeys.size()));
  for (uint16_t k : p.pkeys) w.u16(k);
  w.u8(p.link_layer);
  w.u32(p.ipv4);
}

wire::Parsed<PortStateMsg> decode_port_state(wire::ByteSpan in) {
  Reader r(in, "PortState");
  PortStateMsg p;
  uint16_t n = 0;
  if (auto x = r.u32(p.node, "node")) return *x;
  if (auto x = r.u8(p.port, "port")) return *x;
  if (auto x = r.u64(p.port_guid, "port_guid")) return *x;
  if (auto x = r.bytes(p.port_info, "port_info")) return *x;
  if (auto x = r.u16(n, "pkeys")) return *x;
  if (n > 4096) return wire::ParseError{wire::ParseErrorKind::kIllegalValue, "PortState", "pkeys", 0, n, 0};
  p.pkeys.resize(n);
  for (uint16_t& k : p.pkeys)
    if (auto x = r.u16(k, "pkey")) return *x;
  if (auto x = r.u8(p.link_layer, "link_layer")) return *x;
  if (p.link_layer != 1 && p.link_layer != 2)
    return wire::ParseError{wire::ParseErrorKind::kIllegalValue, "PortState", "link_layer", 0, p.link_layer, 0};
  if (auto x = r.u32(p.ipv4, "ipv4")) return *x;
  if (auto x = r.end()) return *x;
  return p;
}

void encode(Writer& w, const RegisterMsg& m) {
  w.u8(m.mgmt_class);
  w.u8(m.class_version);
  w.u8(m.rmpp_version);
  w.bytes(m.method_mask);
  w.u32(m.oui);
}

wire::Parsed<RegisterMsg> decode_register(wire::ByteSpan in) {
  Reader r(in, "Register");
  RegisterMsg m;
  if (auto x = r.u8(m.mgmt_class, "mgmt_class")) return *x;
  if (auto x = r.u8(m.class_version, "class_version")) return *x;
  if (auto x = r.u8(m.rmpp_version, "rmpp_version")) return *x;
  if (auto x = r.bytes(m.method_mask, "method_mask")) return *x;
  if (auto x = r.u32(m.oui, "oui")) return *x;
  if (m.oui > 0xFFFFFF) return wire::ParseError{wire::ParseErrorKind::kIllegalValue, "Register", "oui", 19, m.oui, 0};
  if (auto x = r.end()) return *x;
  return m;
}

void encode(Writer& w, const MadMsg& m) {
  w.u32(m.agent);
  w.u16(m.lid);
  w.u32(m.remote_qp);
  w.u32(m.qkey);
  w.u8(m.sl);
  w.u16(m.pkey);
  w.u32(m.status);
  w.u32(static_cast<uint32_t>(m.mad.size()));
  w.bytes(m.mad);
}

wire::Parsed<MadMsg> decode_mad(wire::ByteSpan in) {
  Reader r(in, "Mad");
  MadMsg m;
  uint32_t len = 0;
  if (auto x = r.u32(m.agent, "agent")) return *x;
  if (auto x = r.u16(m.lid, "lid")) return *x;
  if (auto x = r.u32(m.remote_qp, "remote_qp")) return *x;
  if (auto x = r.u32(m.qkey, "qkey")) return *x;
  if (auto x = r.u8(m.sl, "sl")) return *x;
  if (auto x = r.u16(m.pkey, "pkey")) return *x;
  if (auto x = r.u32(m.status, "status")) return *x;
  if (auto x = r.u32(len, "length")) return *x;
  if (len < 24 || len != r.remaining())
    return wire::ParseError{wire::ParseErrorKind::kInconsistent, "Mad", "length", 23, len, 0};
  m.mad.resize(len);
  if (auto x = r.bytes(m.mad, "mad")) return *x;
  return m;
}

void append_to_batch(Writer& w, const MadMsg& m) {
  const size_t at = w.data().size();
  w.u32(0);
  encode(w, m);
  const auto len = static_cast<uint32_t>(w.data().size() - at - 4);
  for (size_t i = 0; i < 4; ++i) w.data()[at + i] = static_cast<uint8_t>(len >> (8 * i));
}

void encode_batch(Writer& w, std::span<const MadMsg> mads) {
  w.u32(static_cast<uint32_t>(mads.size()));
  for (const MadMsg& m : mads) append_to_batch(w, m);
}

wire::Parsed<std::vector<MadMsg>> decode_mad_batch(wire::ByteSpan in) {
  Reader r(in, "MadBatch");
  uint32_t count = 0;
  if (auto x = r.u32(count, "count")) return *x;
  if (count > r.remaining() / 4)
    return wire::ParseError{wire::ParseErrorKind::kInconsistent, "MadBatch", "count", 0, count, 0};
  std::vector<MadMsg> out;
  out.reserve(count);
  size_t at = 4;
  for (uint32_t i = 0; i < count; ++i) {
    uint32_t len = 0;
    if (auto x = r.u32(len, "length")) return *x;
    at += 4;
    if (len > r.remaining())
      return wire::ParseError{wire::ParseErrorKind::kTruncated, "MadBatch", "mad", static_cast<uint32_t>(at), 0, r.remaining()};
    auto m = decode_mad(in.subspan(at, len));
    if (!m) return m.error().shifted(static_cast<uint32_t>(at));
    if (auto x = r.skip(len, "mad")) return *x;
    at += len;
    out.push_back(std::move(*m));
  }
  if (auto x = r.end()) return *x;
  return out;
}

void encode(Writer& w, const FabricInfoMsg& f) {
  w.str(f.name);
  w.str(f.source);
  w.str(f.socket);
  w.str(f.state_dir);
  w.u32(f.pid);
  w.u32(f.nodes);
  w.u32(f.cas);
  w.u32(f.switches);
  w.u32(f.links);
  w.u8(f.sm_state);
  w.u16(f.sm_lid);
}

wire::Parsed<FabricInfoMsg> decode_fabric_info(wire::ByteSpan in) {
  Reader r(in, "FabricInfo");
  FabricInfoMsg f;
  if (auto x = r.str(f.name, "name")) return *x;
  if (auto x = r.str(f.source, "source")) return *x;
  if (auto x = r.str(f.socket, "socket")) return *x;
  if (auto x = r.str(f.state_dir, "state_dir")) return *x;
  if (auto x = r.u32(f.pid, "pid")) return *x;
  if (auto x = r.u32(f.nodes, "nodes")) return *x;
  if (auto x = r.u32(f.cas, "cas")) return *x;
  if (auto x = r.u32(f.switches, "switches")) return *x;
  if (auto x = r.u32(f.links, "links")) return *x;
  if (auto x = r.u8(f.sm_state, "sm_state")) return *x;
  if (auto x = r.u16(f.sm_lid, "sm_lid")) return *x;
  if (auto x = r.end()) return *x;
  return f;
}

void encode(Writer& w, const AttachHcaMsg& m) {
  w.u32(m.node);
  w.u32(m.pid);
}

void encode(Writer& w, const HcaAttachedMsg& m) {
  w.u32(m.endpoint);
  w.u32(m.qpn_first);
  w.u32(m.qpn_last);
  w.u8(static_cast<uint8_t>(m.ports.size()));
  for (const auto& p : m.ports) {
    w.u8(p.port);
    w.u32(p.slot);
  }
}

void encode(Writer& w, const EndpointMsg& m) {
  w.u32(m.endpoint);
  w.u32(m.pid);
}

wire::Parsed<AttachHcaMsg> decode_attach_hca(wire::ByteSpan in) {
  Reader r(in, "AttachHca");
  AttachHcaMsg m;
  if (auto x = r.u32(m.node, "node")) return *x;
  if (auto x = r.u32(m.pid, "pid")) return *x;
  if (auto x = r.end()) return *x;
  return m;
}

wire::Parsed<HcaAttachedMsg> decode_hca_attached(wire::ByteSpan in) {
  Reader r(in, "HcaAttached");
  HcaAttachedMsg m;
  uint8_t n = 0;
  if (auto x = r.u32(m.endpoint, "endpoint")) return *x;
  if (auto x = r.u32(m.qpn_first, "qpn_first")) return *x;
  if (auto x = r.u32(m.qpn_last, "qpn_last")) return *x;
  if (auto x = r.u8(n, "ports")) return *x;
  for (uint8_t i = 0; i < n; ++i) {
    HcaAttachedMsg::Port p;
    if (auto x = r.u8(p.port, "port")) return *x;
    if (auto x = r.u32(p.slot, "slot")) return *x;
    m.ports.push_back(p);
  }
  if (auto x = r.end()) return *x;
  return m;
}

wire::Parsed<EndpointMsg> decode_endpoint(wire::ByteSpan in) {
  Reader r(in, "Endpoint");
  EndpointMsg m;
  if (auto x = r.u32(m.endpoint, "endpoint")) return *x;
  if (auto x = r.u32(m.pid, "pid")) return *x;
  if (auto x = r.end()) return *x;
  return m;
}

}  // namespace softib::ipc
