// Partitions and virtual lanes: the passes that program P_Key tables (from partitions.conf,
// OpenSM's syntax and membership rules) and SL-to-VL tables (from the routing engine's VL
// plan, when it has one), each sending only the blocks that differ from what this SM last
// programmed into that port.
//
// P_Key tables: an end port gets, for every partition it belongs to, the partition's key
// with the full-member bit as its membership says ("both" is the full key unless
// allow_both_pkeys, which puts both). Index 0 holds the key of the partition marked indx0
// if the port is in one, else the default partition's key. Switch ports facing a CA get
// the CA's table and partition enforcement (in and out), unless no_partition_enforcement.
#include <algorithm>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "mad/attribute_id.hpp"
#include "mad/pkey_table.hpp"
#include "mad/sl_to_vl_table.hpp"
#include "sm/pkey_tables.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::sm {

namespace {

uint64_t hash_words(const uint8_t* p, size_t n) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 0x100000001B3ULL;
  return h | 1;
}

// Where programmed tables are remembered: a port by its node GUID and number, and a block.
uint64_t table_key(Guid node, uint8_t port, uint32_t block) {
  return node.value() * 0x9E3779B97F4A7C15ULL ^ (uint64_t{port} << 40) ^ block;
}

}  // namespace

void SubnetManager::load_partitions() {
  partitions_ = default_partitions();
  if (config_.partition_config_file.empty()) return;
  auto p = read_partitions_file(config_.partition_config_file);
  if (!p) {
    // OpenSM keeps running with the default partition; so does softib, loudly.
    log(LogLevel::kError, "sm", "{}; using the default partition only", p.error().to_string());
    partition_error_ = p.error().to_string();
    return;
  }
  for (const std::string& w : p->warnings) log(LogLevel::kWarn, "sm", "{}", w);
  partitions_ = std::move(*p);
}

std::vector<PKey> SubnetManager::pkey_table_for(PortRef end_port) const {
  return partition_keys(*subnet_, end_port, partitions_, config_.allow_both_pkeys);
}

void SubnetManager::table_programmed(const Transactions::Context& c) {
  const SmNode& node = subnet_->nodes[c.node];
  uint64_t key = 0;
  if (c.op == kSetPKeys) key = table_key(node.info.node_guid, static_cast<uint8_t>(c.port), c.extra);
  else if (c.op == kSetSl2Vl) key = table_key(node.info.node_guid, static_cast<uint8_t>(c.port), 0x10000);
  else key = mft_table_key(node.info.node_guid, c.extra, c.port);
  if (auto it = pending_tables_.find(key); it != pending_tables_.end()) programmed_tables_[key] = it->second;
}

void SubnetManager::program_pkeys() {
  port_pass([this](NodeIndex n, uint8_t p) {
    Subnet& s = *subnet_;
    SmNode& node = s.nodes[n.value()];
    const PortRef ref{n, p};
    if (!node.port_read[p]) return false;
    const bool sw = s.is_switch(n);
    std::vector<PKey> keys;
    size_t capacity = 0;
    if (s.is_end_port(ref)) {
      if (!sw && !s.topo.port(ref).peer.valid()) return false;
      keys = pkey_table_for(ref);
      capacity = node.info.partition_cap;
    } else {
      // A switch port facing a CA enforces the CA's partitions.
      const PortRef peer = s.topo.port(ref).peer;
      if (config_.no_partition_enforcement || !peer.valid() || s.is_switch(peer.node)) return false;
      keys = pkey_table_for(peer);
      capacity = node.sw.partition_enforcement_cap;
    }
    if (keys.size() > capacity) {
      report_.problems.push_back(fmt::format("{} port {}: {} partitions, but its P_Key table holds {}; the rest are left out",
                                             s.topo.node(n).description, p, keys.size(), capacity));
      keys.resize(capacity);
    }
    // Every block up to the last one in use; later blocks stay as they are only if this SM
    // never wrote them, so a shrinking table clears what it left behind.
    const size_t used_blocks = std::max<size_t>(1, (keys.size() + 31) / 32);
    bool sent = false;
    for (uint32_t b = 0; b * 32 < std::max(capacity, size_t{32}); ++b) {
      mad::PKeyTable block;
      for (size_t i = 0; i < 32 && b * 32 + i < keys.size(); ++i) block.pkeys[i] = keys[b * 32 + i];
      const uint64_t h = hash_words(reinterpret_cast<const uint8_t*>(block.pkeys.data()), sizeof block.pkeys);
      const uint64_t key = table_key(node.info.node_guid, p, b);
      auto it = programmed_tables_.find(key);
      if (b >= used_blocks && it == programmed_tables_.end()) break;
      if (it != programmed_tables_.end() && it->second == h) continue;
      set_dr(s.path_to(ref), block, sw ? (uint32_t{p} << 16) | b : b, {kSetPKeys, n.value(), p, b});
      pending_tables_[key] = h;
      ++report_.pkey_blocks_set;
      sent = true;
    }
    return sent;
  });
}

void SubnetManager::program_sl2vl() {
  if (!tables_ || !tables_->vl_plan) return;
  struct Cursor {
    SwitchIndex sw = 0;
    size_t link = 0;
  };
  transactions_.add_source([this, c = Cursor{}]() mutable {
    Subnet& s = *subnet_;
    const RoutingGraph& g = *graph_;
    const auto& plan = *tables_->vl_plan;
    for (; c.sw < g.switch_count(); ++c.sw, c.link = 0) {
      const NodeIndex n = g.node_of(c.sw);
      SmNode& node = s.nodes[n.value()];
      const auto links = g.links(c.sw);
      bool sent = false;
      while (c.link < links.size() && !sent) {
        const PortNum out = links[c.link++].port;
        mad::SLtoVLMappingTable t;
        t.vl_for_sl = plan.sl2vl[c.sw][out];
        const uint64_t h = hash_words(t.vl_for_sl.data(), t.vl_for_sl.size());
        const uint64_t key = table_key(node.info.node_guid, out, 0x10000);
        if (auto it = programmed_tables_.find(key); it != programmed_tables_.end() && it->second == h) continue;
        pending_tables_[key] = h;
        if (node.sw.optimized_sl_to_vl_mapping_programming & 1) {
          // One Set for every input port (IBA 14.2.5.8, attribute modifier bit 17).
          set_dr(node.path, t, 0x20000u | out, {kSetSl2Vl, n.value(), out, 0});
          ++report_.sl2vl_tables_set;
        } else {
          for (uint8_t in = 0; in <= node.info.num_ports; ++in) {
            if (in != 0 && in != out && !s.topo.port({n, in}).peer.valid()) continue;
            set_dr(node.path, t, (uint32_t{in} << 8) | out, {kSetSl2Vl, n.value(), out, in});
            ++report_.sl2vl_tables_set;
          }
        }
        sent = true;
      }
      if (sent) return true;
    }
    return false;
  });
}

}  // namespace softib::sm
