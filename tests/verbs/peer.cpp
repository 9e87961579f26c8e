// verbs_peer: the far side of kill_test, a real process on the shared-memory link.
//
//   verbs_peer SOCKET HOST
//
// Opens HOST's HCA through the softibd at SOCKET, registers a 4 MiB buffer for remote write
// and read, creates one RC QP and talks a line protocol on stdin/stdout:
//   out: "<lid> <qpn> <rkey> <addr>"      its side of the connection
//   in:  "<lid> <qpn>"                    the test's side; the QP goes to RTR and RTS
//   out: "ready"
// and then does nothing at all (its engine serves the test's one-sided operations) until
// stdin closes, when it exits 0 — or until the test kills it.
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "provider/context.hpp"
#include "provider/devices.hpp"

using namespace softib;
using namespace softib::verbs;

namespace {

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "verbs_peer: %s\n", what.c_str());
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) die("usage: verbs_peer SOCKET HOST");
  provider::Options options;
  options.socket = argv[1];
  options.host = argv[2];
  // The buffer outlives the context: until the context stops its engine, a peer's WRITE may
  // land in it (ThreadSanitizer: freed on return while the engine still wrote).
  std::vector<uint8_t> buffer(4 << 20);
  auto devs = provider::list_devices(options);
  if (!devs.ok() || devs->empty()) die("no device: " + (devs.ok() ? std::string("none") : devs.error().to_string()));
  auto ctx = provider::Context::open(devs->front(), options);
  if (!ctx.ok()) die(ctx.error().to_string());
  provider::Context& c = **ctx;
  Pd* pd = c.alloc_pd();
  Cq* cq = *c.create_cq(256, nullptr, nullptr);
  const uint64_t addr = reinterpret_cast<uint64_t>(buffer.data());
  auto mr = c.reg_mr(pd, buffer.data(), buffer.size(), addr,
                     access::kLocalWrite | access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic);
  if (!mr.ok()) die(mr.error().to_string());
  QpInitAttr init;
  init.qp_type = QpType::kRc;
  init.cap = {64, 64, 1, 1, 0};
  auto qp = c.create_qp(pd, cq, cq, nullptr, init, nullptr);
  if (!qp.ok()) die(qp.error().to_string());
  const auto port = c.query_port(1);
  if (!port.ok()) die(port.error().to_string());
  std::printf("%u %u %u %llu\n", unsigned{port->port.lid}, (*qp)->qpn().value(), (*mr)->rkey.value(),
              static_cast<unsigned long long>(addr));
  std::fflush(stdout);

  unsigned lid = 0, qpn = 0;
  if (std::scanf("%u %u", &lid, &qpn) != 2) die("no connection line on stdin");
  QpAttr at;
  at.qp_state = QpState::kInit;
  at.port_num = 1;
  at.qp_access_flags = access::kRemoteWrite | access::kRemoteRead | access::kRemoteAtomic;
  Status st = c.modify_qp(*qp, at, attr::kState | attr::kPkeyIndex | attr::kPort | attr::kAccessFlags);
  if (!st.ok()) die("INIT: " + st.to_string());
  at = {};
  at.qp_state = QpState::kRtr;
  at.path_mtu = Mtu::k2048;
  at.dest_qp_num = Qpn(qpn);
  at.rq_psn = Psn(0);
  at.ah_attr.dlid = Lid(static_cast<uint16_t>(lid));
  at.ah_attr.port_num = 1;
  at.max_dest_rd_atomic = 16;
  at.min_rnr_timer = 1;
  st = c.modify_qp(*qp, at, attr::kState | attr::kAv | attr::kPathMtu | attr::kDestQpn | attr::kRqPsn |
                                attr::kMaxDestRdAtomic | attr::kMinRnrTimer);
  if (!st.ok()) die("RTR: " + st.to_string());
  at = {};
  at.qp_state = QpState::kRts;
  at.sq_psn = Psn(0);
  at.timeout = 14;
  at.retry_cnt = 7;
  at.rnr_retry = 7;
  at.max_rd_atomic = 16;
  st = c.modify_qp(*qp, at, attr::kState | attr::kSqPsn | attr::kTimeout | attr::kRetryCnt | attr::kRnrRetry |
                                attr::kMaxQpRdAtomic);
  if (!st.ok()) die("RTS: " + st.to_string());
  std::printf("ready\n");
  std::fflush(stdout);
  // Idle: the engine does the work. EOF on stdin is the end.
  for (int ch; (ch = std::getchar()) != EOF;) {
  }
  return 0;
}
