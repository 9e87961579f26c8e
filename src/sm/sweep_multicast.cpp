// The SM's side of the SA and of multicast: SA requests are answered from the SM's view of
// the subnet, never from a half-swept one (requests that arrive during a sweep wait for its
// end; RMPP ACKs and ReportResps, which only move transfers on, go straight through), and
// the MFTs follow the SA's groups: a join or leave reprograms the changed blocks.
#include <unordered_set>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "mad/multicast_forwarding_table.hpp"
#include "mad/rmpp_header.hpp"
#include "mad/trap_gid_details.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::sm {

namespace {

constexpr size_t kMaxWaitingSa = 1024;

uint64_t mft_hash(const mad::MulticastForwardingTable& t) {
  uint64_t h = 0x9E3779B97F4A7C15ULL;
  for (uint16_t m : t.port_masks) h = (h ^ m) * 0x100000001B3ULL;
  return h | 1;
}

}  // namespace

uint64_t SubnetManager::mft_table_key(Guid node, uint32_t block, uint32_t position) {
  return node.value() * 0x9E3779B97F4A7C15ULL ^ (uint64_t{position} << 48) ^ (uint64_t{block} << 16) ^ 0x4D4654;
}

SaView SubnetManager::sa_view() const {
  SaView v;
  v.subnet = subnet_.get();
  v.graph = graph_.get();
  v.tables = tables_ ? &*tables_ : nullptr;
  v.config = &config_;
  v.partitions = &partitions_;
  v.sm_lid = sm_lid_;
  v.pkey_table = [this](PortRef p) { return pkey_table_for(p); };
  v.own_sm_info = own_sminfo();
  for (const RemoteSm& r : other_sms_) {
    mad::SMInfo si;
    si.guid = r.guid;
    si.act_count = r.act_count;
    si.priority = r.priority;
    si.sm_state = r.state;
    v.other_sms.emplace_back(r.lid, si);
  }
  return v;
}

void SubnetManager::handle_sa(const Mad& mad) {
  if (state_ != mad::SmState::kMaster) return;  // only the master's SA answers (C15-0.1.3)
  // RMPP ACK (2), STOP (3), ABORT (4) and responses only advance what the SA is sending.
  const uint8_t rmpp_type = mad.bytes[25];
  const bool transfer_control = (mad.bytes[24] != 0 && rmpp_type >= 2 && rmpp_type <= 4) ||
                                mad::is_response(static_cast<mad::Method>(mad.bytes[3]));
  if (phase_ != Phase::kIdle && !transfer_control) {
    if (sa_waiting_.size() < kMaxWaitingSa) sa_waiting_.push_back(mad);  // else the requester retries
    return;
  }
  sa_.handle(mad, sa_view());
}

// Traps 64 and 65 (GID in / out of service, IBA 14.2.5.1): after each sweep the SM tells the
// SA's subscribers which end ports appeared and which went away since the last one.
void SubnetManager::report_gid_changes() {
  const Subnet& s = *subnet_;
  std::unordered_set<uint64_t> now;
  for (uint32_t i = 0; i < s.nodes.size(); ++i) {
    const NodeIndex n(i);
    if (s.is_switch(n)) {
      now.insert(s.topo.port({n, 0}).guid.value());
      continue;
    }
    for (uint8_t p = 1; p <= s.nodes[i].info.num_ports; ++p)
      if (s.topo.port({n, p}).peer.valid() && s.topo.port({n, p}).lid.value()) now.insert(s.topo.port({n, p}).guid.value());
  }
  const auto notify = [&](uint16_t trap, uint64_t guid) {
    mad::Notice notice;
    notice.is_generic = true;
    notice.type = static_cast<uint8_t>(mad::NoticeType::kInfo);
    notice.producer_type_or_vendor_id = 4;  // the subnet manager (IBA table 118)
    notice.trap_number_or_device_id = trap;
    notice.issuer_lid = sm_lid_;
    notice.set_details(mad::TrapGidDetails{Gid(config_.subnet_prefix, Guid(guid))});
    if (s.self.valid()) notice.issuer_gid = Gid(config_.subnet_prefix, s.topo.port({s.self, s.self_port}).guid);
    sa_.report(notice, sa_view());
  };
  if (gids_reported_) {  // the first sweep reports nothing: all is new
    for (uint64_t g : now)
      if (!in_service_.count(g)) notify(64, g);
    for (uint64_t g : in_service_)
      if (!now.count(g)) notify(65, g);
  }
  gids_reported_ = true;
  in_service_ = std::move(now);
}

void SubnetManager::begin_multicast_update() {
  phase_ = Phase::kMulticast;
  program_mfts();
}

void SubnetManager::program_mfts() {
  sa_.clear_mcast_changed();
  if (!graph_ || config_.disable_multicast) return;
  auto tables = std::make_shared<std::vector<std::vector<std::array<uint64_t, 4>>>>(
      multicast_tables(*graph_, *subnet_, sa_.groups()));
  struct Cursor {
    SwitchIndex sw = 0;
    uint32_t block = 0, position = 0;
  };
  transactions_.add_source([this, tables, c = Cursor{}]() mutable {
    const RoutingGraph& g = *graph_;
    Subnet& s = *subnet_;
    for (; c.sw < g.switch_count() && c.sw < tables->size(); ++c.sw, c.block = 0, c.position = 0) {
      const auto& per_mlid = (*tables)[c.sw];
      const NodeIndex n = g.node_of(c.sw);
      const SmNode& node = s.nodes[n.value()];
      const uint32_t blocks = static_cast<uint32_t>((per_mlid.size() + 31) / 32);
      const uint32_t positions = node.info.num_ports / 16u + 1u;
      while (c.block < blocks) {
        const uint32_t b = c.block, pos = c.position;
        if (++c.position == positions) {
          c.position = 0;
          ++c.block;
        }
        mad::MulticastForwardingTable t;
        for (uint32_t i = 0; i < 32; ++i) {
          const size_t m = size_t{b} * 32 + i;
          if (m < per_mlid.size()) t.port_masks[i] = static_cast<uint16_t>(per_mlid[m][pos / 4] >> (16 * (pos % 4)));
        }
        const uint64_t key = mft_table_key(node.info.node_guid, b, pos);
        const uint64_t h = mft_hash(t);
        auto it = programmed_tables_.find(key);
        // Blocks this SM never wrote and that would be empty stay as the switch has them.
        if (it == programmed_tables_.end() ? h == mft_hash(mad::MulticastForwardingTable{}) : it->second == h) continue;
        pending_tables_[key] = h;
        set_dr(node.path, t, (pos << 28) | b, {kSetMft, n.value(), static_cast<uint16_t>(pos), b});
        ++report_.mft_blocks_set;
        return true;
      }
    }
    return false;
  });
}

}  // namespace softib::sm
