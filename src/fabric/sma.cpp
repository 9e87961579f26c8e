// The Subnet Management Agent of every node (IBA 14.2.5/14.2.6): Get and Set of the SMP
// attributes, with the attribute-modifier rules, the port state transitions of IBA 7.2 and
// M_Key protection (IBA 14.2.4). A Set is validated whole before any field changes; an
// invalid Set changes nothing and answers InvalidAttributeValue with the current contents.
#include <algorithm>

#include "fabric/device_model.hpp"
#include "fabric/fabric_impl.hpp"
#include "mad/dr_route.hpp"
#include "mad/guid_info.hpp"
#include "mad/linear_forwarding_table.hpp"
#include "mad/multicast_forwarding_table.hpp"
#include "mad/node_description.hpp"
#include "mad/pkey_table.hpp"
#include "mad/sl_to_vl_table.hpp"
#include "mad/smp.hpp"

namespace softib::fabric {

namespace {

using mad::InvalidField;
using mad::MadStatus;
using mad::Method;
using mad::SmpAttr;
using Data = std::array<uint8_t, mad::kSmpDataSize>;

const MadStatus kUnsupportedAttribute = MadStatus::from(InvalidField::kMethodAttributeUnsupported);
const MadStatus kInvalidValue = MadStatus::from(InvalidField::kInvalidAttributeValue);

template <class A>
void put(const A& a, Data& data) {
  data.fill(0);
  mad::encode(a, wire::MutByteSpan(data));
}

template <class A>
std::optional<A> take(const Data& data) {
  auto a = mad::decode<A>(data);
  if (!a) return std::nullopt;
  return *a;
}

uint8_t saturating_inc(uint16_t& v) {
  if (v != 0xFFFF) ++v;
  return 0;
}

}  // namespace

// Everything one request needs, gathered once.
struct SmaRequest {
  Method method = Method::kGet;
  uint16_t attribute = 0;
  uint32_t modifier = 0;
  uint64_t m_key = 0;
  Data data{};
  PortRef at;        // the port the SMP was delivered to (switch: port 0)
  uint8_t in_port;   // the link port it came in on (0: from this node itself)
};

class Sma {
 public:
  Sma(Fabric::Impl& im, SmaRequest& rq) : im_(im), rq_(rq), node_(im.node(rq.at.node)) {}

  MadStatus handle() {
    switch (static_cast<SmpAttr>(rq_.attribute)) {
      case SmpAttr::kNodeInfo: return node_info();
      case SmpAttr::kNodeDescription: return node_description();
      case SmpAttr::kSwitchInfo: return switch_info();
      case SmpAttr::kPortInfo: return port_info();
      case SmpAttr::kP_KeyTable: return pkey_table();
      case SmpAttr::kGUIDInfo: return guid_info();
      case SmpAttr::kSLtoVLMappingTable: return sl_to_vl();
      case SmpAttr::kVLArbitrationTable: return vl_arbitration();
      case SmpAttr::kLinearForwardingTable: return lft();
      case SmpAttr::kMulticastForwardingTable: return mft();
      default: return kUnsupportedAttribute;
    }
  }

  bool hide_m_key = false;

 private:
  bool is_switch() const { return node_.info.node_type == mad::NodeType::kSwitch; }
  uint8_t num_ports() const { return node_.info.num_ports; }
  bool get() const { return rq_.method == Method::kGet; }

  // The port a modifier names for attributes where switches take a port number and CAs
  // answer for the port that received the SMP (0 or their own port number).
  std::optional<PortRef> named_port(uint32_t port_number) const {
    if (is_switch()) {
      if (port_number > num_ports()) return std::nullopt;
      return PortRef{rq_.at.node, static_cast<uint8_t>(port_number)};
    }
    if (port_number == 0) return rq_.at;
    if (port_number > num_ports()) return std::nullopt;
    return PortRef{rq_.at.node, static_cast<uint8_t>(port_number)};
  }

  MadStatus node_info() {
    if (!get()) return kUnsupportedAttribute;
    mad::NodeInfo ni = node_.info;
    ni.local_port_num = rq_.in_port;
    ni.port_guid = im_.topo().port(is_switch() ? PortRef{rq_.at.node, 0} : rq_.at).guid;
    put(ni, rq_.data);
    return {};
  }

  MadStatus node_description() {
    if (!get()) return kUnsupportedAttribute;
    put(node_.description, rq_.data);
    return {};
  }

  MadStatus switch_info() {
    if (!is_switch()) return kUnsupportedAttribute;
    mad::SwitchInfo& si = node_.sw;
    MadStatus status;
    if (!get()) {
      auto req = take<mad::SwitchInfo>(rq_.data);
      if (!req) {
        status = kInvalidValue;
      } else if (req->linear_fdb_top >= si.linear_fdb_cap ||
                 (req->multicast_fdb_top != 0 && req->multicast_fdb_top < 0xC000) ||
                 req->default_port > num_ports()) {
        status = kInvalidValue;
      } else {
        si.linear_fdb_top = req->linear_fdb_top;
        si.default_port = req->default_port;
        si.default_multicast_primary_port = req->default_multicast_primary_port;
        si.default_multicast_not_primary_port = req->default_multicast_not_primary_port;
        si.life_time_value = req->life_time_value;
        if (req->port_state_change) si.port_state_change = false;  // writing 1 clears it
        si.multicast_fdb_top = req->multicast_fdb_top;
        si.optimized_sl_to_vl_mapping_programming = req->optimized_sl_to_vl_mapping_programming;
      }
    }
    put(si, rq_.data);
    return status;
  }

  MadStatus port_info() {
    auto target = named_port(rq_.modifier);
    if (!target) return kInvalidValue;
    LivePort& lp = im_.port(*target);
    MadStatus status;
    if (!get()) {
      auto req = take<mad::PortInfo>(rq_.data);
      status = req ? set_port_info(*target, *req) : kInvalidValue;
    }
    mad::PortInfo pi = lp.info;
    pi.local_port_num = rq_.in_port;
    if (hide_m_key) pi.m_key = 0;
    put(pi, rq_.data);
    return status;
  }

  // IBA 14.2.5.6: which fields a Set changes, and how.
  MadStatus set_port_info(PortRef target, const mad::PortInfo& req) {
    LivePort& lp = im_.port(target);
    mad::PortInfo& cur = lp.info;
    const bool management = !is_switch() || target.port == 0;  // LID, M_Key, ... live here
    const bool link_port = !is_switch() || target.port != 0;   // a physical link
    // -- validate everything first --
    if (management) {
      if (req.lid.value() != 0 && !req.lid.is_unicast()) return kInvalidValue;
      if (req.master_sm_lid.value() != 0 && !req.master_sm_lid.is_unicast()) return kInvalidValue;
    }
    const auto in_set = [](uint8_t value, uint8_t supported) { return value != 0 && (value & ~supported) == 0; };
    if (req.link_width_enabled != 0 && req.link_width_enabled != 0xFF && !in_set(req.link_width_enabled, cur.link_width_supported))
      return kInvalidValue;
    if (req.link_speed_enabled != 0 && req.link_speed_enabled != 0xF && !in_set(req.link_speed_enabled, cur.link_speed_supported))
      return kInvalidValue;
    if (req.link_speed_ext_enabled != 0 && req.link_speed_ext_enabled < 30 &&
        !in_set(req.link_speed_ext_enabled, ext_speed::kAll))
      return kInvalidValue;
    // Writing back the current state (a PortInfo read, edited and set) changes nothing.
    auto phys = req.port_physical_state;
    if (phys == cur.port_physical_state) phys = mad::PhysPortState::kNoChange;
    if (phys != mad::PhysPortState::kNoChange && phys != mad::PhysPortState::kPolling &&
        phys != mad::PhysPortState::kDisabled)
      return kInvalidValue;
    if (req.link_down_default_state > 2) return kInvalidValue;
    if (req.operational_vls > cur.vl_cap) return kInvalidValue;
    if (req.neighbor_mtu > cur.mtu_cap) return kInvalidValue;
    // Port state transitions (IBA 7.2.4): Init comes only from training; Armed from Init;
    // Active from Armed; Down from anywhere.
    const auto now = cur.port_state;
    const auto want = req.port_state == now ? mad::PortState::kNoChange : req.port_state;
    if (link_port && want != mad::PortState::kNoChange && want != mad::PortState::kDown) {
      const bool ok = (want == mad::PortState::kArmed && (now == mad::PortState::kInitialize || now == mad::PortState::kArmed)) ||
                      (want == mad::PortState::kActive && (now == mad::PortState::kArmed || now == mad::PortState::kActive));
      if (!ok) return kInvalidValue;
    }
    // -- apply --
    if (management) {
      cur.m_key = req.m_key;
      cur.gid_prefix = req.gid_prefix;
      cur.lid = req.lid;
      cur.master_sm_lid = req.master_sm_lid;
      cur.m_key_lease_period = req.m_key_lease_period;
      cur.m_key_protect_bits = req.m_key_protect_bits;
      cur.lmc = req.lmc;
      cur.master_sm_sl = req.master_sm_sl;
      cur.subnet_timeout = req.subnet_timeout;
      cur.client_reregister = req.client_reregister;
    }
    if (req.link_down_default_state != 0) cur.link_down_default_state = req.link_down_default_state;
    if (req.neighbor_mtu != 0) cur.neighbor_mtu = req.neighbor_mtu;
    if (req.operational_vls != 0) cur.operational_vls = req.operational_vls;
    cur.vl_high_limit = req.vl_high_limit;
    cur.hoq_life = req.hoq_life;
    cur.vl_stall_count = req.vl_stall_count;
    cur.partition_enforcement_inbound = req.partition_enforcement_inbound;
    cur.partition_enforcement_outbound = req.partition_enforcement_outbound;
    cur.filter_raw_inbound = req.filter_raw_inbound;
    cur.filter_raw_outbound = req.filter_raw_outbound;
    cur.m_key_violations = req.m_key_violations;
    cur.p_key_violations = req.p_key_violations;
    cur.q_key_violations = req.q_key_violations;
    cur.local_phy_errors = req.local_phy_errors;
    cur.overrun_errors = req.overrun_errors;
    if (!link_port) return {};

    bool retrain = false;
    if (req.link_width_enabled != 0) {
      const uint8_t w = req.link_width_enabled == 0xFF ? cur.link_width_supported : req.link_width_enabled;
      retrain = retrain || w != cur.link_width_enabled;
      cur.link_width_enabled = w;
    }
    if (req.link_speed_enabled != 0) {
      const uint8_t s = req.link_speed_enabled == 0xF ? cur.link_speed_supported : req.link_speed_enabled;
      retrain = retrain || s != cur.link_speed_enabled;
      cur.link_speed_enabled = s;
    }
    if (req.link_speed_ext_enabled != 0) {
      const uint8_t e = req.link_speed_ext_enabled == 31 ? ext_speed::kAll
                        : req.link_speed_ext_enabled == 30 ? uint8_t{0}
                                                           : req.link_speed_ext_enabled;
      retrain = retrain || e != cur.link_speed_ext_enabled;
      cur.link_speed_ext_enabled = e;
    }
    if (phys == mad::PhysPortState::kDisabled && !lp.disabled) {
      lp.disabled = true;
      retrain = true;
    } else if (phys == mad::PhysPortState::kPolling && lp.disabled) {
      lp.disabled = false;
      retrain = true;
    }
    if (retrain) {
      // New enables take effect by retraining: a rate that stays the same keeps the link.
      const mad::PortState before = cur.port_state;
      const uint8_t width = cur.link_width_active, speed = cur.link_speed_active, ext = cur.link_speed_ext_active;
      im_.train(target);
      if (lp.trained && before != mad::PortState::kDown &&
          (width != cur.link_width_active || speed != cur.link_speed_active || ext != cur.link_speed_ext_active)) {
        bounce(target);
      }
    }
    if (want == mad::PortState::kDown && lp.trained) {
      bounce(target);  // down, then up again through Polling: both ends restart in Init
    } else if (want == mad::PortState::kArmed || want == mad::PortState::kActive) {
      cur.port_state = want;
    }
    return {};
  }

  // The link at p went down and retrained: both ends back to Initialize.
  void bounce(PortRef p) {
    const PortRef peer = im_.topo().port(p).peer;
    for (PortRef end : {p, peer}) {
      if (!end.valid()) continue;
      LivePort& e = im_.port(end);
      ++e.traffic.errors[static_cast<size_t>(ErrorCounter::kLinkDowned)];
      e.info.port_state = mad::PortState::kInitialize;
      if (im_.is_switch(end.node)) im_.port_state_changed(end.node);
    }
  }

  MadStatus pkey_table() {
    const uint32_t port_number = is_switch() ? rq_.modifier >> 16 : 0;
    const uint32_t block = rq_.modifier & 0xFFFF;
    auto target = named_port(port_number);
    if (!target) return kInvalidValue;
    const size_t first = size_t{block} * mad::PKeyTable::kPKeysPerBlock;
    const size_t size = im_.pkey_capacity(*target);
    if (first >= size) return kInvalidValue;
    if (!get()) {
      auto req = take<mad::PKeyTable>(rq_.data);
      if (!req) return kInvalidValue;
      std::vector<PKey>& pkeys = im_.writable_pkeys(*target);
      for (size_t i = 0; i < mad::PKeyTable::kPKeysPerBlock && first + i < size; ++i) pkeys[first + i] = req->pkeys[i];
    }
    mad::PKeyTable t;
    for (size_t i = 0; i < mad::PKeyTable::kPKeysPerBlock && first + i < size; ++i) t.pkeys[i] = im_.pkey(*target, first + i);
    put(t, rq_.data);
    return {};
  }

  MadStatus guid_info() {
    const PortRef target = is_switch() ? PortRef{rq_.at.node, 0} : rq_.at;
    const size_t first = size_t{rq_.modifier} * mad::GUIDInfo::kGuidsPerBlock;
    const size_t size = im_.port(target).info.guid_cap;
    if (first >= size) return kInvalidValue;
    if (!get()) {
      auto req = take<mad::GUIDInfo>(rq_.data);
      if (!req) return kInvalidValue;
      std::vector<Guid>& guids = im_.writable_guids(target);
      for (size_t i = 0; i < mad::GUIDInfo::kGuidsPerBlock && first + i < size; ++i)
        if (first + i != 0) guids[first + i] = req->guids[i];  // GUID 0 is the port GUID
    }
    mad::GUIDInfo g;
    for (size_t i = 0; i < mad::GUIDInfo::kGuidsPerBlock && first + i < size; ++i) g.guids[i] = im_.guid(target, first + i);
    put(g, rq_.data);
    return {};
  }

  MadStatus sl_to_vl() {
    std::array<uint8_t, 16>* table = nullptr;
    if (is_switch()) {
      const uint32_t in = (rq_.modifier >> 8) & 0xFF, out = rq_.modifier & 0xFF;
      // Bits 17 and 16: every input port / every output port (optimized programming, Set
      // only, when SwitchInfo advertises it).
      const bool all_in = (rq_.modifier >> 17) & 1, all_out = (rq_.modifier >> 16) & 1;
      if ((all_in || all_out) && (get() || !(node_.sw.optimized_sl_to_vl_mapping_programming & 1)))
        return kInvalidValue;
      if ((rq_.modifier >> 18) != 0 || in > num_ports() || out > num_ports()) return kInvalidValue;
      const size_t n = size_t{num_ports()} + 1;
      if (node_.sl2vl_pairs.empty()) {
        if (get()) {
          put(mad::SLtoVLMappingTable{}, rq_.data);
          return {};
        }
        node_.sl2vl_pairs.assign(n * n, std::array<uint8_t, 16>{});
      }
      if (all_in || all_out) {
        auto req = take<mad::SLtoVLMappingTable>(rq_.data);
        if (!req) return kInvalidValue;
        for (size_t sl = 0; sl < 16; ++sl)
          if (req->vl_for_sl[sl] > 15) return kInvalidValue;
        for (size_t i = 0; i < n; ++i)
          for (size_t o = 0; o < n; ++o)
            if ((all_in || i == in) && (all_out || o == out)) node_.sl2vl_pairs[i * n + o] = req->vl_for_sl;
        put(*req, rq_.data);
        return {};
      }
      table = &node_.sl2vl_pairs[in * n + out];
    } else {
      table = &im_.port(rq_.at).sl2vl;
    }
    if (!get()) {
      auto req = take<mad::SLtoVLMappingTable>(rq_.data);
      if (!req) return kInvalidValue;
      for (size_t sl = 0; sl < 16; ++sl)
        if (req->vl_for_sl[sl] > 15) return kInvalidValue;
      *table = req->vl_for_sl;
    }
    mad::SLtoVLMappingTable t;
    t.vl_for_sl = *table;
    put(t, rq_.data);
    return {};
  }

  MadStatus vl_arbitration() {
    const uint32_t block = rq_.modifier >> 16;
    auto target = named_port(is_switch() ? rq_.modifier & 0xFFFF : 0);
    if (!target || block < 1 || block > 4) return kInvalidValue;
    auto& tables = im_.port(*target).vlarb;
    if (!get()) {
      auto req = take<mad::VLArbitrationTable>(rq_.data);
      if (!req) return kInvalidValue;
      if (!tables) tables = std::make_unique<std::array<mad::VLArbitrationTable, 4>>();
      (*tables)[block - 1] = *req;
    }
    put(tables ? (*tables)[block - 1] : mad::VLArbitrationTable{}, rq_.data);
    return {};
  }

  MadStatus lft() {
    if (!is_switch()) return kUnsupportedAttribute;
    const size_t first = size_t{rq_.modifier} * mad::LinearForwardingTable::kLidsPerBlock;
    if (first >= node_.sw.linear_fdb_cap) return kInvalidValue;
    auto& table = node_.lft;
    if (!get()) {
      auto req = take<mad::LinearForwardingTable>(rq_.data);
      if (!req) return kInvalidValue;
      if (table.size() < first + mad::LinearForwardingTable::kLidsPerBlock)
        table.resize(first + mad::LinearForwardingTable::kLidsPerBlock, 0xFF);
      std::copy(req->ports.begin(), req->ports.end(), table.begin() + static_cast<ptrdiff_t>(first));
    }
    mad::LinearForwardingTable block;
    block.ports.fill(0xFF);
    for (size_t i = 0; i < block.ports.size() && first + i < table.size(); ++i) block.ports[i] = table[first + i];
    put(block, rq_.data);
    return {};
  }

  MadStatus mft() {
    if (!is_switch()) return kUnsupportedAttribute;
    const uint32_t position = rq_.modifier >> 28;
    const uint32_t block = rq_.modifier & 0x1FF;
    const size_t positions = size_t{num_ports()} / 16 + 1;
    const size_t first = size_t{block} * mad::MulticastForwardingTable::kLidsPerBlock;
    if (position >= positions || first >= node_.sw.multicast_fdb_cap) return kInvalidValue;
    auto& table = node_.mft;
    if (!get()) {
      auto req = take<mad::MulticastForwardingTable>(rq_.data);
      if (!req) return kInvalidValue;
      const size_t need = (first + mad::MulticastForwardingTable::kLidsPerBlock) * positions;
      if (table.size() < need) table.resize(need, 0);
      for (size_t i = 0; i < mad::MulticastForwardingTable::kLidsPerBlock; ++i)
        table[(first + i) * positions + position] = req->port_masks[i];
    }
    mad::MulticastForwardingTable t;
    for (size_t i = 0; i < mad::MulticastForwardingTable::kLidsPerBlock; ++i) {
      const size_t at = (first + i) * positions + position;
      t.port_masks[i] = at < table.size() ? table[at] : 0;
    }
    put(t, rq_.data);
    return {};
  }

  Fabric::Impl& im_;
  SmaRequest& rq_;
  LiveNode& node_;
};

bool Fabric::Impl::sma(InFlight& f, PortRef at, InFlight& response) {
  SmaRequest rq;
  rq.at = at;
  rq.in_port = f.in_port != 0 ? f.in_port : (is_switch(at.node) ? uint8_t{0} : at.port);
  uint8_t base_version = 0, class_version = 0;
  mad::Smp lid_smp;
  if (f.dr) {
    base_version = f.smp.base_version;
    class_version = f.smp.class_version;
    rq.method = f.smp.method;
    rq.attribute = f.smp.attribute_id;
    rq.modifier = f.smp.attribute_modifier;
    rq.m_key = f.smp.m_key;
    rq.data = f.smp.data;
  } else {
    auto s = mad::decode<mad::Smp>(f.mad.bytes);
    if (!s) {
      fabric.drops_.inc(Drop::kMalformed);
      return false;
    }
    lid_smp = *s;
    base_version = s->header.base_version;
    class_version = s->header.class_version;
    rq.method = s->header.method;
    rq.attribute = s->header.attribute_id;
    rq.modifier = s->header.attribute_modifier;
    rq.m_key = s->m_key;
    rq.data = s->data;
  }
  if (rq.method == Method::kTrapRepress) return false;  // the SM acknowledged our trap

  MadStatus status;
  Sma sma_impl(*this, rq);
  if (base_version != mad::kBaseVersion || class_version != 1) {
    status = MadStatus::from(InvalidField::kBadVersion);
  } else if (rq.method != Method::kGet && rq.method != Method::kSet) {
    status = MadStatus::from(InvalidField::kMethodUnsupported);
  } else {
    // M_Key protection (IBA 14.2.4.1): the key lives in the CA port's (or switch port 0's)
    // PortInfo; a wrong key fails per the protection level and is never answered.
    LivePort& keyed = port(is_switch(at.node) ? PortRef{at.node, 0} : at);
    const mad::PortInfo& pi = keyed.info;
    if (pi.m_key != 0 && rq.m_key != pi.m_key) {
      const bool get = rq.method == Method::kGet;
      const bool allowed = get && pi.m_key_protect_bits <= 1;
      if (!allowed) {
        saturating_inc(keyed.info.m_key_violations);
        fabric.drops_.inc(Drop::kMKey);
        return false;
      }
      sma_impl.hide_m_key = pi.m_key_protect_bits == 1;
    }
    status = sma_impl.handle();
  }

  if (f.dr) {
    // Handed over decoded: the response's SMI work happens on the struct, and bytes are
    // written once, when an agent receives it.
    response.dr = true;
    response.smp = mad::make_dr_response(f.smp, status);
    response.smp.data = rq.data;
    response.mad.bytes[1] = static_cast<uint8_t>(mad::MgmtClass::kSubnDirected);
    response.mad.bytes[3] = static_cast<uint8_t>(mad::Method::kGetResp);
  } else {
    mad::Smp r = lid_smp;
    r.header.method = mad::response_to(rq.method);
    r.header.status = status;
    r.data = rq.data;
    mad::encode(r, wire::MutByteSpan(response.mad.bytes));
  }
  return true;
}

}  // namespace softib::fabric
