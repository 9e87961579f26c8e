// Fuzzes the net-format reader: any text either loads or is rejected with "name:line: reason";
// what loads writes back (net_writer) to a file that loads to the same fabric — same nodes,
// GUIDs, ports and cables.
#include <cstdint>
#include <string_view>

#include "base/assert.hpp"
#include "fabric/net_reader.hpp"
#include "fabric/net_writer.hpp"
#include "fuzz_target.hpp"

using namespace softib;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 64 * 1024) return 0;  // the reader is linear; bigger inputs only slow the search
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  fabric::NetReadOptions options;
  options.allow_includes = false;  // never read other files
  auto first = fabric::read_net(text, "fuzz.net", options);
  if (!first) {
    const std::string message = first.error().message();
    SOFTIB_ASSERT(message.starts_with("fuzz.net:"));
    return 0;
  }
  const fabric::Topology& t = first->topology;
  const std::string again_text = fabric::write_net(t);
  auto again = fabric::read_net(again_text, "rewritten.net", options);
  SOFTIB_ASSERT_MSG(again.ok(), "what softib writes, softib reads");
  const fabric::Topology& u = again->topology;
  SOFTIB_ASSERT(u.node_count() == t.node_count());
  SOFTIB_ASSERT(u.link_count() == t.link_count());
  for (uint32_t i = 0; i < t.node_count(); ++i) {
    const auto& a = t.node(fabric::NodeIndex(i));
    const auto b = u.find_by_guid(a.node_guid);
    SOFTIB_ASSERT(b.has_value());
    SOFTIB_ASSERT(u.node(*b).num_ports == a.num_ports);
    SOFTIB_ASSERT(u.node(*b).type == a.type);
  }
  return 0;
}
