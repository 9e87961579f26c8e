// MAD RPC for the diagnostic tools, as libibmad's madrpc is for infiniband-diags: a session
// bound to one local end port, agents for the classes the tools speak (LID-routed and
// directed-route SMPs, PerfMgt, SA, the ibping vendor class), requests matched to responses by
// transaction ID, a timeout with retries, many requests in flight for discovery, and the SA's
// RMPP transfers reassembled (with the ACKs the sender's window needs).
//
// Thread: one thread at a time (it owns its Connection).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/result.hpp"
#include "ipc/client.hpp"
#include "mad/mad_header.hpp"

namespace softib::tools {

using MadBytes = std::array<uint8_t, mad::kMadSize>;

// Where a request goes: a LID, or a directed route (egress ports from the local port, as
// ibnetdiscover/smpquery -D write "0,1,3" without the leading 0).
struct Destination {
  uint16_t lid = 0;
  std::vector<uint8_t> path;  // directed route: the egress ports (empty: the local node)
  bool dr = false;            // directed route (the LID is ignored)
  bool directed() const { return dr; }
  static Destination to_lid(uint16_t l) { return Destination{l, {}, false}; }
  static Destination route(std::vector<uint8_t> p) { return Destination{0, std::move(p), true}; }
  std::string to_string() const;  // "Lid 5" or "DR path slid 65535; dlid 65535; 0,1,3"
};

struct RpcOptions {
  Duration timeout = std::chrono::milliseconds(1000);  // libibmad's default per try
  int retries = 2;                                     // tries after the first
  size_t window = 256;                                 // requests in flight for call_many
};

// A request: the class, method, attribute and the data area for Set/Get (SMP 64 bytes at 64,
// PMA 192 at 64, vendor 216 at 40; SA requests are built by sa_query).
struct MadRequest {
  Destination to;
  uint8_t mgmt_class = 0x01;
  uint8_t method = 0x01;
  uint16_t attribute_id = 0;
  uint32_t attribute_modifier = 0;
  std::vector<uint8_t> data;  // copied to the class's data area (at most its size)
  uint64_t m_key = 0;         // SMPs
  uint32_t remote_qp = 0;     // 0: QP0 for SMPs, QP1 otherwise
};

class MadRpc {
 public:
  // Connects to the fabric, binds to `node`:`port` (an end port) and registers the agents.
  static Result<MadRpc> open(std::string_view fabric, uint32_t node, uint8_t port, RpcOptions options = {});
  // The same on a connection already open (one without a port yet).
  static Result<MadRpc> attach(ipc::Connection c, uint32_t node, uint8_t port, RpcOptions options = {});

  ipc::Connection& connection() { return conn_; }
  const RpcOptions& options() const { return options_; }
  void set_timeout(Duration t) { options_.timeout = t; }

  // One request; the response MAD. Errors: Timeout after the retries ("... timed out"),
  // the daemon's; a response with a non-zero MAD status is returned as is (callers look).
  Result<MadBytes> call(const MadRequest& r);
  // Many independent requests, options().window of them in flight, each refill of the
  // window sent as one batch and answers matched by TID: what the diagnostics use to read
  // every port of a large fabric. Every request's answer in request order (the response
  // MAD, its MAD status the caller's to look at, or Timeout after the retries); the outer
  // error is the connection's (the daemon went away).
  Result<std::vector<Result<MadBytes>>> call_many(std::span<const MadRequest> requests);

  // The asynchronous pieces call_many is made of, for engines that decide what to ask next
  // from each answer (discovery): send a request and get its TID; take the next response
  // that arrives (any TID), or nullopt at the deadline. Retries are the caller's.
  Result<uint64_t> send_request(const MadRequest& r);
  // Several at once (one message to the daemon); their TIDs in order.
  Result<std::vector<uint64_t>> send_requests(std::span<const MadRequest> rs);
  Result<void> resend(const MadRequest& r, uint64_t tid);
  Result<std::optional<MadBytes>> next_response(TimePoint deadline);

  // An SA query: Get or GetTable of `attribute_id` with `record` (the template, its fields
  // those of `component_mask`). The records of the answer (each attribute_offset*8 bytes, as
  // sent), reassembled from RMPP. Errors: Timeout; NotFound for ERR_NO_RECORDS on Get; an
  // SA error status as InvalidArgument with its name.
  struct SaAnswer {
    std::vector<std::vector<uint8_t>> records;
    uint16_t status = 0;  // MAD status of the answer
  };
  Result<SaAnswer> sa_query(uint8_t method, uint16_t attribute_id, uint64_t component_mask,
                            std::span<const uint8_t> record, uint64_t sm_key = 0,
                            uint32_t attribute_modifier = 0);

  // The SM's LID, as the local port's PortInfo says (0: no SM yet).
  uint16_t sm_lid() const { return sm_lid_; }
  uint16_t local_lid() const { return local_lid_; }
  uint32_t node() const { return node_; }
  uint8_t port() const { return port_; }
  // Refreshes local_lid()/sm_lid() from the daemon.
  Result<void> refresh_port();

  // Serving requests (ibping -S): register for unsolicited `methods` of a class; receive
  // them; answer. `oui` for vendor range 2 classes.
  Result<uint32_t> serve(uint8_t mgmt_class, uint8_t class_version, std::initializer_list<uint8_t> methods,
                         uint32_t oui = 0);
  Result<std::optional<ipc::MadMsg>> next_request(std::optional<Duration> timeout);
  Result<void> respond(const ipc::MadMsg& to, const MadBytes& response);

  uint64_t next_tid();

 private:
  MadRpc(ipc::Connection c, uint32_t node, uint8_t port, RpcOptions o)
      : conn_(std::move(c)), node_(node), port_(port), options_(o) {}
  Result<void> register_agents();
  ipc::MadMsg build(const MadRequest& r, uint64_t tid) const;
  uint32_t agent_for(uint8_t mgmt_class) const;
  // Receives until the response for `tid` or the deadline; other responses are kept in
  // pending_ (for call_many), stray ones dropped.
  Result<std::optional<ipc::MadMsg>> await(std::optional<uint64_t> tid, TimePoint deadline);
  Result<MadBytes> rmpp_receive(const ipc::MadMsg& first, uint32_t agent,
                                std::vector<std::vector<uint8_t>>& segments);

  ipc::Connection conn_;
  uint32_t node_ = 0;
  uint8_t port_ = 0;
  RpcOptions options_;
  uint16_t local_lid_ = 0, sm_lid_ = 0;
  uint32_t smp_lid_ = 0, smp_dr_ = 0, pma_ = 0, sa_ = 0, vendor_ = 0;
  uint64_t tid_ = 0;
  std::vector<ipc::MadMsg> pending_;     // responses received while awaiting another
  std::vector<ipc::MadMsg> requests_;    // unsolicited requests received meanwhile
};

// "H-00001", the LID-routed or DR destination of a tool's positional argument as
// infiniband-diags reads it (-D: a DR path "0,1,3"; -G: a port GUID; else a LID).
Result<Destination> parse_destination(std::string_view text, bool directed, bool guid,
                                      const std::vector<ipc::NodeEntry>* nodes = nullptr,
                                      MadRpc* rpc = nullptr);

}  // namespace softib::tools
