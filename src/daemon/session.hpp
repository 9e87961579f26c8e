// A client session of softibd: one connection, its protocol state, and — once bound to an
// end port — the umad-style agents it registered, served through one fabric agent.
//
// Thread: the daemon's.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/unique_fd.hpp"
#include "fabric/fabric.hpp"
#include "ipc/protocol.hpp"
#include "ipc/socket.hpp"
#include "sm/mad_port.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::daemon {

// What a session needs of its daemon.
class DaemonContext {
 public:
  virtual ~DaemonContext() = default;
  virtual void request_stop() = 0;
  virtual ipc::FabricInfoMsg info() const = 0;
  virtual ipc::PortStateMsg port_state(uint32_t node, uint8_t port) const = 0;
  virtual uint8_t sm_state() const = 0;

  // The data path (ipc AttachHca/GetEndpoint): endpoints in the shared directory.
  virtual Result<ipc::HcaAttachedMsg> attach_endpoint(uint32_t node, uint32_t pid, UniqueFd inbox, UniqueFd doorbell) = 0;
  virtual void detach_endpoint(uint32_t id) = 0;
  struct EndpointFds {
    uint32_t pid;
    int inbox;
    int doorbell;
  };
  virtual std::optional<EndpointFds> endpoint_fds(uint32_t id) const = 0;
  virtual int directory_fd() const = 0;
  // A control request changed the link at `p` (down, up, disabled, enabled).
  virtual void link_changed(fabric::PortRef p) = 0;

  std::string name, socket, state;
  std::unique_ptr<fabric::Fabric> fabric;
};

class Session final : public fabric::MadAgent {
 public:
  // Outgoing bytes a slow client may leave queued before its MADs are dropped (as a full
  // receive queue drops them on a real port) and, past twice that, before it is cut off.
  static constexpr size_t kMaxOutbox = 8 * 1024 * 1024;

  Session(DaemonContext& d, ipc::Socket socket);
  ~Session() override;

  // Reads and handles every message that has arrived.
  void read_all();
  // Writes what is queued, as far as the socket takes it.
  void flush();
  bool wants_output() const { return !outbox_.empty(); }
  bool closed() const { return closed_; }
  bool subscribed() const { return subscribed_; }
  void send_event(const ipc::PortStateMsg& m);

  // fabric::MadAgent: a MAD arrived at the session's port.
  void on_mad(fabric::PortRef at, const fabric::Mad& mad) override;

 private:
  void handle(ipc::Message& m);
  // `fds` go with the reply (copies are queued with it).
  void reply(ipc::MsgType type, uint32_t seq, wire::ByteSpan payload, std::span<const int> fds = {});
  void error(uint32_t seq, const Status& s);
  void ok(uint32_t seq) { reply(ipc::MsgType::kOk, seq, {}); }
  void list_nodes(const ipc::Message& m);
  void open_port(const ipc::Message& m);
  void register_agent(const ipc::Message& m);
  void send_mad(const ipc::Message& m);
  void send_one(const ipc::MadMsg& mad, uint32_t seq);
  void close_batch();
  void control(const ipc::Message& m);
  void attach_hca(ipc::Message& m);
  void get_endpoint(const ipc::Message& m);
  std::optional<fabric::PortRef> port_arg(ipc::Reader& r, uint32_t seq, bool external);
  Result<void> update_classes();

  DaemonContext& d_;
  ipc::Socket socket_;
  ipc::Assembler assembler_;
  struct Outgoing {
    std::vector<uint8_t> bytes;
    std::vector<UniqueFd> fds;
  };
  std::deque<Outgoing> outbox_;
  size_t outbox_bytes_ = 0;
  // MADs for the client not yet in the outbox: they leave as one RecvMads at the next flush.
  ipc::Writer batch_;
  uint32_t batch_count_ = 0;
  bool closed_ = false, subscribed_ = false, hello_ = false, is_sm_ = false;
  std::optional<fabric::PortRef> port_;
  fabric::AgentId fabric_agent_ = 0;
  std::vector<std::optional<ipc::RegisterMsg>> agents_;
  // Requests this session sent, by TID: which of its agents gets the response.
  std::unordered_map<uint64_t, uint32_t> tid_agent_;
  std::deque<uint64_t> tid_order_;
  uint64_t dropped_mads_ = 0;
  std::vector<uint32_t> endpoints_;  // attached by this session; detached when it ends
};

}  // namespace softib::daemon
