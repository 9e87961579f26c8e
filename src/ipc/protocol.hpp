// The softibd client protocol, version 2 (documented in docs/protocol.md).
//
// Transport: an AF_UNIX SOCK_SEQPACKET connection per client session, so message boundaries
// survive and a session's fd is a real, pollable fd (what a drop-in libibumad hands out as
// its port id). Every message is a 16-byte header and a payload:
//
//   offset 0  u32 magic   0x31424953 ("SIB1" in little-endian byte order)
//          4  u16 type    MsgType
//          6  u16 flags   bit 0: kMore, another fragment of this message follows
//          8  u32 length  payload bytes in this fragment (at most kMaxFragment)
//         12  u32 seq     chosen by the client for a request, echoed in its reply(s)
//
// Integers are little-endian (both ends share a host); strings are a u16 length and bytes;
// MAD bytes are as on the wire (big-endian fields). Decoders are total: a malformed message
// is a ParseError, never a crash; the daemon drops such a session.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.hpp"
#include "base/unique_fd.hpp"
#include "wire/bytes.hpp"
#include "wire/parse_error.hpp"

namespace softib::ipc {

inline constexpr uint32_t kMagic = 0x31424953;
inline constexpr uint16_t kProtocolVersion = 2;  // 2: PortState carries the link layer
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kMaxFragment = 60 * 1024;  // fits SO_SNDBUF defaults with room to spare
inline constexpr size_t kMaxMessage = 16 * 1024 * 1024;
inline constexpr uint16_t kMore = 1;

enum class MsgType : uint16_t {
  kHello = 1,          // c->d: u16 min_version, u16 max_version, str client
  kHelloReply = 2,     // d->c: u16 version, str fabric, u32 nodes, u8 sm_state, str source
  kError = 3,          // d->c: u32 code (softib::Code), str message
  kOk = 4,             // d->c: empty
  kListNodes = 10,     // c->d: u8 filter (0 all, 1 CAs, 2 switches)
  kNodeEntry = 11,     // d->c: NodeEntry, one per node
  kListEnd = 12,       // d->c: empty; ends a listing
  kQueryPort = 20,     // c->d: u32 node, u8 port
  kPortState = 21,     // d->c: PortStateMsg
  kOpenPort = 30,      // c->d: u32 node, u8 port; binds the session to an end port
  kRegister = 31,      // c->d: RegisterMsg (umad_register)
  kRegistered = 32,    // d->c: u32 agent id
  kUnregister = 33,    // c->d: u32 agent id
  kSendMad = 34,       // c->d: MadMsg (no reply; errors come back as kError with the seq)
  kRecvMad = 35,       // d->c: MadMsg
  kSetIsSm = 36,       // c->d: u8 on
  kSendMads = 37,      // c->d: MAD batch (as kSendMad, many at once; no reply)
  kRecvMads = 38,      // d->c: MAD batch (MADs that arrived meanwhile)
  kSubscribe = 40,     // c->d: empty; the session then receives kPortEvent
  kPortEvent = 41,     // d->c: PortStateMsg of a port whose state, LID or SM LID changed
  kLinkSet = 50,       // c->d: u32 node, u8 port, u8 LinkOp
  kPortErrors = 51,    // c->d: u32 node, u8 port, u8 counter (fabric::ErrorCounter), u64 amount
  kImpair = 52,        // c->d: u32 node, u8 port, f64 loss, f64 corruption
  kShutdown = 60,      // c->d: empty
  kFabricInfo = 61,    // c->d: empty
  kFabricInfoReply = 62,  // d->c: FabricInfoMsg
  kAttachHca = 70,     // c->d: AttachHcaMsg; fds: inbox memfd, doorbell eventfd
  kHcaAttached = 71,   // d->c: HcaAttachedMsg; fd: the directory memfd
  kGetEndpoint = 72,   // c->d: u32 endpoint
  kEndpoint = 73,      // d->c: EndpointMsg; fds: its inbox memfd, its doorbell eventfd
};
std::string_view to_string(MsgType t);

enum class LinkOp : uint8_t { kDown = 0, kUp = 1, kDisable = 2, kEnable = 3 };

struct Header {
  MsgType type = MsgType::kOk;
  uint16_t flags = 0;
  uint32_t length = 0;
  uint32_t seq = 0;
};

// A complete message (fragments joined) and the file descriptors that came with it.
struct Message {
  MsgType type = MsgType::kOk;
  uint32_t seq = 0;
  std::vector<uint8_t> payload;
  std::vector<UniqueFd> fds;
};

struct NodeEntry {
  uint32_t index = 0;
  uint8_t type = 0;  // NodeInfo.NodeType: 1 CA, 2 switch, 3 router
  uint8_t num_ports = 0;
  uint64_t node_guid = 0, system_image_guid = 0;
  uint32_t vendor_id = 0;
  uint16_t device_id = 0;
  uint32_t revision = 0;
  std::string id, description;
  std::vector<uint64_t> port_guids;  // ports 1..num_ports (switches: all the port-0 GUID)
  friend bool operator==(const NodeEntry&, const NodeEntry&) = default;
};

struct PortStateMsg {
  uint32_t node = 0;
  uint8_t port = 0;
  uint64_t port_guid = 0;
  std::array<uint8_t, 64> port_info{};  // PortInfo as the SMA encodes it (mad::decode<PortInfo>)
  std::vector<uint16_t> pkeys;          // the P_Key table (valid and empty entries)
  uint8_t link_layer = 1;               // 1 InfiniBand, 2 Ethernet (a RoCE fabric's port)
  uint32_t ipv4 = 0;                    // Ethernet: the port's IPv4 address (host order)
  friend bool operator==(const PortStateMsg&, const PortStateMsg&) = default;
};

struct RegisterMsg {
  uint8_t mgmt_class = 0;
  uint8_t class_version = 1;
  uint8_t rmpp_version = 0;
  std::array<uint8_t, 16> method_mask{};  // bit m: unsolicited requests of method m
  uint32_t oui = 0;                      // vendor range 2 classes
  friend bool operator==(const RegisterMsg&, const RegisterMsg&) = default;
};

// A MAD with its addressing (ib_user_mad's fields that matter here).
struct MadMsg {
  uint32_t agent = 0;
  uint16_t lid = 0;          // send: destination LID; receive: source LID
  uint32_t remote_qp = 0;
  uint32_t qkey = 0;
  uint8_t sl = 0;
  uint16_t pkey = 0xFFFF;
  uint32_t status = 0;       // receive: 0, or ETIMEDOUT for a request that got no answer
  std::vector<uint8_t> mad;  // 256 bytes, or more for a reassembled RMPP transfer
  friend bool operator==(const MadMsg&, const MadMsg&) = default;
};

struct FabricInfoMsg {
  std::string name, source, socket, state_dir;
  uint32_t pid = 0, nodes = 0, cas = 0, switches = 0, links = 0;
  uint8_t sm_state = 0;  // mad::SmState of the embedded SM, 0 without one
  uint16_t sm_lid = 0;
  friend bool operator==(const FabricInfoMsg&, const FabricInfoMsg&) = default;
};

// The data path (docs/protocol.md, "Endpoints"): a process attaches to an HCA with its inbox
// and doorbell and receives the directory; it asks for a peer endpoint's inbox by id.
struct AttachHcaMsg {
  uint32_t node = 0;
  uint32_t pid = 0;
  friend bool operator==(const AttachHcaMsg&, const AttachHcaMsg&) = default;
};
struct HcaAttachedMsg {
  uint32_t endpoint = 0;
  uint32_t qpn_first = 0, qpn_last = 0;  // the QPNs this endpoint may hand out
  struct Port {
    uint8_t port = 0;
    uint32_t slot = 0;  // its DirPort slot in the directory
    friend bool operator==(const Port&, const Port&) = default;
  };
  std::vector<Port> ports;
  friend bool operator==(const HcaAttachedMsg&, const HcaAttachedMsg&) = default;
};
struct EndpointMsg {
  uint32_t endpoint = 0;
  uint32_t pid = 0;
  friend bool operator==(const EndpointMsg&, const EndpointMsg&) = default;
};

// ---- encoding --------------------------------------------------------------------------------

class Writer {
 public:
  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v);
  void u32(uint32_t v);
  void u64(uint64_t v);
  void f64(double v);
  void str(std::string_view s);  // REQUIRES: s.size() <= 0xFFFF (longer is cut)
  void bytes(wire::ByteSpan b) { out_.insert(out_.end(), b.begin(), b.end()); }
  std::vector<uint8_t>& data() { return out_; }

 private:
  std::vector<uint8_t> out_;
};

// Reads a payload field by field; every error names the field (static strings only, as
// ParseError requires).
class Reader {
 public:
  Reader(wire::ByteSpan in, std::string_view what) : in_(in), what_(what) {}
  std::optional<wire::ParseError> u8(uint8_t& v, std::string_view field);
  std::optional<wire::ParseError> u16(uint16_t& v, std::string_view field);
  std::optional<wire::ParseError> u32(uint32_t& v, std::string_view field);
  std::optional<wire::ParseError> u64(uint64_t& v, std::string_view field);
  std::optional<wire::ParseError> f64(double& v, std::string_view field);
  std::optional<wire::ParseError> str(std::string& s, std::string_view field);
  std::optional<wire::ParseError> bytes(std::span<uint8_t> out, std::string_view field);
  std::optional<wire::ParseError> skip(size_t n, std::string_view field);
  // Every byte consumed? (A message with trailing bytes is malformed.)
  std::optional<wire::ParseError> end() const;
  size_t remaining() const { return in_.size() - at_; }

 private:
  std::optional<wire::ParseError> need(size_t n, std::string_view field) const;
  wire::ByteSpan in_;
  std::string_view what_;
  size_t at_ = 0;
};

std::vector<uint8_t> encode_header(const Header& h);
wire::Parsed<Header> decode_header(wire::ByteSpan in);

void encode(Writer& w, const NodeEntry& e);
void encode(Writer& w, const PortStateMsg& p);
void encode(Writer& w, const RegisterMsg& r);
void encode(Writer& w, const MadMsg& m);
void encode(Writer& w, const FabricInfoMsg& f);
wire::Parsed<NodeEntry> decode_node_entry(wire::ByteSpan in);
wire::Parsed<PortStateMsg> decode_port_state(wire::ByteSpan in);
wire::Parsed<RegisterMsg> decode_register(wire::ByteSpan in);
wire::Parsed<MadMsg> decode_mad(wire::ByteSpan in);
// A MAD batch: u32 count, then per MAD a u32 length and the MadMsg encoding. Batches move
// discovery's and the SM's bursts with one system call each way instead of one per MAD.
inline constexpr size_t kMaxBatch = 128;
void encode_batch(Writer& w, std::span<const MadMsg> mads);
void append_to_batch(Writer& w, const MadMsg& m);  // after a u32 count placeholder
wire::Parsed<std::vector<MadMsg>> decode_mad_batch(wire::ByteSpan in);
wire::Parsed<FabricInfoMsg> decode_fabric_info(wire::ByteSpan in);
void encode(Writer& w, const AttachHcaMsg& m);
void encode(Writer& w, const HcaAttachedMsg& m);
void encode(Writer& w, const EndpointMsg& m);
wire::Parsed<AttachHcaMsg> decode_attach_hca(wire::ByteSpan in);
wire::Parsed<HcaAttachedMsg> decode_hca_attached(wire::ByteSpan in);
wire::Parsed<EndpointMsg> decode_endpoint(wire::ByteSpan in);

// The fragments (header + payload each) a message goes out as.
std::vector<std::vector<uint8_t>> fragments(MsgType type, uint32_t seq, wire::ByteSpan payload);

// Joins fragments as they arrive: feed() each one; a complete Message comes out when the last
// (no kMore) arrives. Errors: ParseError for a bad header, a fragment type that changes
// midway, or a message over kMaxMessage.
class Assembler {
 public:
  // `fds`: descriptors that arrived with this fragment; they belong to the message.
  Result<std::optional<Message>> feed(wire::ByteSpan fragment, std::vector<UniqueFd> fds = {});

 private:
  std::optional<Message> partial_;
};

}  // namespace softib::ipc
