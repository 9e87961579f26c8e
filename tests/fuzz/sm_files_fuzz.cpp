// Fuzzes the SM's file parsers: partitions.conf, opensm.conf, guid2lid and opensm-lfts.dump
// (the first byte picks which). Any text parses or is rejected with "name:line: reason"; none
// crashes, hangs or leaks. What parses obeys its invariants: the default partition is there,
// P_Keys are valid, LID ranges are LMC-aligned unicast ranges.
#include <cstdint>
#include <string_view>

#include "base/assert.hpp"
#include "fabric/generators.hpp"
#include "fuzz_target.hpp"
#include "sm/guid2lid.hpp"
#include "sm/opensm_dump.hpp"
#include "sm/partitions.hpp"
#include "sm/routing_graph.hpp"
#include "sm/sm_config.hpp"

using namespace softib;
using namespace softib::sm;

namespace {

// A small routed fabric for LFT dumps to refer to: one switch, three hosts, LIDs 1..4.
const RoutingGraph& graph() {
  static const RoutingGraph g = [] {
    auto t = fabric::generate("switch:hosts=3");
    SOFTIB_ASSERT(t.ok());
    uint16_t lid = 1;
    for (uint32_t i = 0; i < t->node_count(); ++i) {
      const fabric::NodeIndex n(i);
      const bool sw = t->node(n).type == fabric::NodeType::kSwitch;
      t->port({n, static_cast<uint8_t>(sw ? 0 : 1)}).lid = Lid(lid++);
    }
    auto built = RoutingGraph::build(*t);
    SOFTIB_ASSERT(built.ok());
    return std::move(*built);
  }();
  return g;
}

void check_error(const Status& s, std::string_view name) {
  SOFTIB_ASSERT(s.message().find(name) != std::string::npos);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1 || size > 32 * 1024) return 0;
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 4) {
    case 0: {
      auto p = parse_partitions(text, "fuzz.conf");
      if (!p) {
        check_error(p.error(), "fuzz.conf:");
        break;
      }
      SOFTIB_ASSERT(p->find(kDefaultPKey) != nullptr);
      for (const Partition& part : p->partitions) SOFTIB_ASSERT(part.pkey.base() != 0);
      break;
    }
    case 1: {
      auto c = parse_sm_config(text, "fuzz.opensm.conf");
      if (!c) {
        check_error(c.error(), "fuzz.opensm.conf:");
        break;
      }
      SOFTIB_ASSERT(c->config.lmc <= 7 && c->config.sm_priority <= 15);
      SOFTIB_ASSERT(!c->config.routing_engine.empty());
      break;
    }
    case 2: {
      std::vector<std::string> warnings;
      const Guid2Lid g = Guid2Lid::parse(text, "fuzz.guid2lid", &warnings);
      for (const auto& [guid, range] : g.entries()) {
        SOFTIB_ASSERT(range.min.is_unicast() && range.max.is_unicast() && range.min.value() <= range.max.value());
        (void)guid;
      }
      for (const std::string& w : warnings) SOFTIB_ASSERT(w.starts_with("fuzz.guid2lid:"));
      break;
    }
    default: {
      auto t = read_lfts_dump(text, "fuzz.lfts", graph());
      if (!t) {
        check_error(t.error(), "fuzz.lfts:");
        break;
      }
      SOFTIB_ASSERT(t->lft.size() == graph().switch_count());
      break;
    }
  }
  return 0;
}
