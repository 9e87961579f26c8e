// softib_fault: injects a fault into the fabric of SOFTIB_FABRIC through the daemon's control
// messages, for the diagnet tests (the same requests `softib port set` sends).
//
//   softib_fault link NODE PORT down|up|disable|enable
//   softib_fault errors NODE PORT COUNTER AMOUNT     (COUNTER: SymbolErrorCounter, ...)
//
// NODE is a net-file id, a description or a GUID. Exit 0 done, 2 usage, 1 the daemon said no.
#include <cstdio>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "fabric/fabric.hpp"
#include "ipc/client.hpp"
#include "tools/host.hpp"

int main(int argc, char** argv) {
  using namespace softib;
  if (argc < 5) {
    fmt::print(stderr, "usage: softib_fault link NODE PORT down|up|disable|enable\n"
                       "       softib_fault errors NODE PORT COUNTER AMOUNT\n");
    return 2;
  }
  const std::string what = argv[1];
  auto c = ipc::Connection::open({}, "softib_fault");
  if (!c) {
    fmt::print(stderr, "softib_fault: {}\n", c.error().message());
    return 3;
  }
  auto nodes = c->list_nodes();
  if (!nodes) {
    fmt::print(stderr, "softib_fault: {}\n", nodes.error().message());
    return 1;
  }
  auto node = tools::find_node(*nodes, argv[2]);
  if (!node) {
    fmt::print(stderr, "softib_fault: {}\n", node.error().message());
    return 2;
  }
  const auto port = static_cast<uint8_t>(std::strtoul(argv[3], nullptr, 10));
  Result<void> done;
  if (what == "link") {
    const std::string op = argv[4];
    ipc::LinkOp lo = ipc::LinkOp::kDown;
    if (op == "up") lo = ipc::LinkOp::kUp;
    else if (op == "disable") lo = ipc::LinkOp::kDisable;
    else if (op == "enable") lo = ipc::LinkOp::kEnable;
    else if (op != "down") {
      fmt::print(stderr, "softib_fault: link op {}: expected down, up, disable or enable\n", op);
      return 2;
    }
    done = c->link_set(node->index, port, lo);
  } else if (what == "errors" && argc == 6) {
    auto counter = fabric::parse_error_counter(argv[4]);
    if (!counter) {
      fmt::print(stderr, "softib_fault: no error counter {}\n", argv[4]);
      return 2;
    }
    done = c->port_errors(node->index, port, static_cast<uint8_t>(*counter), std::strtoull(argv[5], nullptr, 10));
  } else {
    fmt::print(stderr, "softib_fault: {}: expected link or errors\n", what);
    return 2;
  }
  if (!done) {
    fmt::print(stderr, "softib_fault: {}\n", done.error().message());
    return 1;
  }
  return 0;
}
