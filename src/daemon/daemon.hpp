// softibd: one per host and fabric name. It hosts the fabric (every node's SMA and PMA, MAD
// switching through the LFTs), optionally the embedded subnet manager, and serves clients on
// a unix socket (ipc/protocol.hpp): queries, controls, and umad-style MAD agents on end
// ports. State that must survive a restart (guid2lid) lives in the state directory.
//
// Thread: one. An epoll loop over the listening socket, the sessions, a timerfd for the SM's
// next deadline and a signalfd (SIGTERM/SIGINT end it cleanly).
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "base/result.hpp"
#include "sm/sm_config.hpp"

namespace softib::daemon {

struct Options {
  std::string fabric;                       // empty: SOFTIB_FABRIC or "default"
  std::string topology = "switch:hosts=2";  // a net file or a generator spec
  bool sm = false;                          // run the embedded SM
  sm::SmConfig sm_config;                   // its options; cache_dir is set to the state dir
  std::string runtime_dir, state_dir;       // empty: ipc/paths.hpp
  int ready_fd = -1;                        // written "ready\n" once serving (and, with the SM, once up)
  uint64_t seed = 1;                        // impairment randomness
  // RoCE mode (brief §1, as `rdma link add rxe0 type rxe`): every CA port has the Ethernet
  // link layer and RoCE v2 GIDs from an IPv4 address of `roce_net` (host order; ports are
  // numbered .1 upward in node order). The embedded SM runs, unseen: the LIDs it assigns
  // address ports on the shared-memory link; programs see LID 0 and no SM, as on Ethernet.
  bool roce = false;
  uint32_t roce_net = 0x7F140000;           // 127.20.0.0/16: loopback, reachable on any host
};

class Daemon {
 public:
  // Loads the topology, binds the socket, writes the pid file. Errors: the topology's error
  // (file:line), AlreadyExists when a daemon already serves this fabric, PermissionDenied for
  // the directories.
  static Result<std::unique_ptr<Daemon>> create(Options options);
  ~Daemon();

  // Serves until SIGTERM/SIGINT or a Shutdown request.
  Result<void> run();

  const std::string& socket_path() const;

 private:
  Daemon();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace softib::daemon
