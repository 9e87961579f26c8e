// A client session with softibd: fabric queries and controls, and — once bound to an end port
// with open_port() — MAD agents as umad offers them (register, send, receive).
//
// Every request waits for its reply (matched by sequence number); MADs and port events that
// arrive meanwhile are kept for recv_mad()/next_event(). One Connection is one socket, so a
// program that wants a pollable fd per port opens one Connection per port.
//
// Thread: one thread at a time.
#pragma once

#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "base/clock.hpp"
#include "base/result.hpp"
#include "ipc/protocol.hpp"
#include "ipc/socket.hpp"

namespace softib::ipc {

struct HelloInfo {
  uint16_t version = 0;
  std::string fabric, source;
  uint32_t nodes = 0;
  uint8_t sm_state = 0;
};

class Connection {
 public:
  // Connects to the named fabric's daemon (see paths.hpp) or to `socket` if given.
  // Errors: Unavailable when no daemon runs ("is softibd running? softib up"), the daemon's
  // error for an unsupported protocol version.
  static Result<Connection> open(std::string_view fabric = {}, std::string_view client = "softib",
                                 std::string socket = {});

  const HelloInfo& hello() const { return hello_; }
  int fd() const { return socket_.fd(); }

  // ---- queries and controls ----
  enum class NodeFilter : uint8_t { kAll = 0, kCas = 1, kSwitches = 2 };
  Result<std::vector<NodeEntry>> list_nodes(NodeFilter filter = NodeFilter::kAll);
  Result<PortStateMsg> query_port(uint32_t node, uint8_t port);
  Result<FabricInfoMsg> fabric_info();
  Result<void> link_set(uint32_t node, uint8_t port, LinkOp op);
  Result<void> port_errors(uint32_t node, uint8_t port, uint8_t counter, uint64_t amount);
  Result<void> impair(uint32_t node, uint8_t port, double loss, double corruption);
  Result<void> shutdown();
  // Port events (state, LID or SM LID changed) on every port, from now on.
  Result<void> subscribe();
  Result<std::optional<PortStateMsg>> next_event(std::optional<Duration> timeout);

  // ---- the data path ----
  struct Attached {
    HcaAttachedMsg info;
    UniqueFd directory;
  };
  // Attaches this process to CA `node` as a new endpoint: softibd keeps the inbox and doorbell
  // (copies of the fds) to hand to peers and answers with the directory. The endpoint lives as
  // long as this connection.
  Result<Attached> attach_hca(uint32_t node, int inbox_fd, int doorbell_fd);
  struct Endpoint {
    EndpointMsg info;
    UniqueFd inbox, doorbell;
  };
  // A peer endpoint's inbox and doorbell. NotFound when it is gone.
  Result<Endpoint> get_endpoint(uint32_t endpoint);

  // ---- MADs (umad) ----
  Result<void> open_port(uint32_t node, uint8_t port);
  Result<uint32_t> register_agent(const RegisterMsg& r);
  Result<void> unregister_agent(uint32_t agent);
  Result<void> set_is_sm(bool on);
  Result<void> send_mad(const MadMsg& m);
  // Many MADs in as few messages as kMaxBatch allows.
  Result<void> send_mads(std::span<const MadMsg> mads);
  // The next MAD for one of this session's agents; nullopt on timeout.
  Result<std::optional<MadMsg>> recv_mad(std::optional<Duration> timeout);

 private:
  explicit Connection(Socket s) : socket_(std::move(s)) {}
  // Sends a request and waits for its reply (any of `accept`, or kError).
  Result<Message> request(MsgType type, wire::ByteSpan payload, std::initializer_list<MsgType> accept,
                          std::span<const int> fds = {});
  // Receives one message; queues what is not a reply.
  Result<std::optional<Message>> receive(std::optional<Duration> timeout);

  Socket socket_;
  Assembler assembler_;
  HelloInfo hello_;
  uint32_t next_seq_ = 1;
  std::deque<MadMsg> mads_;
  std::deque<PortStateMsg> events_;
  std::deque<Message> replies_;
};

// Status of a kError payload.
Status decode_error(const Message& m);

}  // namespace softib::ipc
