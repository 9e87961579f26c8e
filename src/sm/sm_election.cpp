// SM election and failover (IBA 14.4): SMs find each other through PortInfo.IsSM and SMInfo,
// the one with the highest priority (then the lowest port GUID) is master, the others stand
// by and poll it, and take over when it stops answering. A master that finds a standby
// outranking it hands the subnet over (SMInfo HANDOVER, answered by ACKNOWLEDGE). LIDs
// survive every change of master: the new master honours the LIDs the ports hold.
#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "fabric/device_model.hpp"
#include "mad/attribute_id.hpp"
#include "mad/dr_smp.hpp"
#include "mad/smp.hpp"
#include "sm/subnet_manager.hpp"

namespace softib::sm {

namespace {

// SMInfo Set attribute modifiers (IBA 14.2.5.13, table 160).
constexpr uint32_t kHandover = 1, kAcknowledge = 2, kDisable = 3, kStandby = 4, kDiscover = 5;

uint16_t sminfo_attr() { return static_cast<uint16_t>(mad::SmpAttr::kSMInfo); }

}  // namespace

std::optional<Guid> SubnetManager::master() const {
  if (state_ != mad::SmState::kStandby || !master_) return std::nullopt;
  return master_->guid;
}

mad::SMInfo SubnetManager::own_sminfo() const {
  mad::SMInfo si;
  const Subnet& s = *subnet_;
  si.guid = config_.guid;
  if (s.self.valid()) si.guid = s.topo.port({s.self, s.self_port}).guid;
  si.sm_key = config_.sm_key;
  si.act_count = static_cast<uint32_t>(transactions_.sent());
  si.priority = config_.sm_priority;
  si.sm_state = state_;
  return si;
}

bool SubnetManager::outranks(const RemoteSm& other) const {
  // IBA 14.4.1.1: higher priority wins; on a tie, the lower GUID.
  const mad::SMInfo me = own_sminfo();
  if (me.priority != other.priority) return me.priority > other.priority;
  return me.guid.value() < other.guid.value();
}

void SubnetManager::query_sm(NodeIndex n, uint8_t port) {
  send_dr(subnet_->path_to({n, port}), mad::Method::kGet, sminfo_attr(), 0, nullptr,
          {kGetSmInfo, n.value(), port, 0});
}

void SubnetManager::remote_sm_info(const Transactions::Context& c, const mad::DrSmp& smp) {
  if (!smp.status.ok()) return;
  auto si = mad::decode<mad::SMInfo>(smp.data);
  if (!si) return;
  const Subnet& s = *subnet_;
  RemoteSm r;
  r.guid = si->guid;
  r.priority = si->priority;
  r.state = si->sm_state;
  r.act_count = si->act_count;
  const PortRef at{NodeIndex(c.node), static_cast<uint8_t>(c.port)};
  r.lid = s.nodes[c.node].ports[c.port].lid;
  r.path = s.path_to(at);
  for (RemoteSm& known : other_sms_)
    if (known.guid == r.guid) {
      known = r;
      return;
    }
  other_sms_.push_back(r);
}

bool SubnetManager::elect() {
  if (state_ == mad::SmState::kNotActive || config_.ignore_other_sm) return state_ != mad::SmState::kNotActive;
  const RemoteSm* other_master = nullptr;
  const RemoteSm* best = nullptr;  // the strongest SM that is not NotActive
  for (const RemoteSm& r : other_sms_) {
    if (r.state == mad::SmState::kNotActive) continue;
    if (r.state == mad::SmState::kMaster) other_master = &r;
    if (!best || (r.priority != best->priority ? r.priority > best->priority : r.guid.value() < best->guid.value()))
      best = &r;
  }
  if (state_ == mad::SmState::kDiscovering) {
    // A master already runs the subnet: stand by (it hands over if we outrank it).
    if (other_master) {
      become_standby(*other_master);
      return false;
    }
    if (best && !outranks(*best)) {
      become_standby(*best);
      return false;
    }
    become_master("no other SM outranks it");
    return true;
  }
  if (state_ == mad::SmState::kMaster) {
    if (other_master && !outranks(*other_master)) {
      // Two masters (subnets merged): the weaker one yields.
      become_standby(*other_master);
      return false;
    }
    if (best && best->state != mad::SmState::kMaster && !outranks(*best) && !handover_sent_) {
      log(LogLevel::kInfo, "sm", "handing the subnet over to SM {} (priority {})", best->guid, best->priority);
      report_.problems.clear();
      send_sminfo_control(best->path, kHandover);
      handover_sent_ = true;
    }
  }
  return true;
}

void SubnetManager::become_standby(const RemoteSm& master) {
  log(LogLevel::kInfo, "sm", "standby: SM {} (priority {}, {}) is master", master.guid, master.priority,
      mad::to_string(master.state));
  state_ = mad::SmState::kStandby;
  master_ = master;
  next_sweep_.reset();  // a standby does not sweep
  missed_polls_ = 0;
  handover_sent_ = false;
  next_poll_ = clock_.now() + std::chrono::milliseconds(config_.sminfo_polling_timeout);
}

void SubnetManager::become_master(std::string_view why) {
  if (state_ != mad::SmState::kMaster) log(LogLevel::kInfo, "sm", "master: {}", why);
  state_ = mad::SmState::kMaster;
  master_.reset();
  next_poll_.reset();
  missed_polls_ = 0;
}

void SubnetManager::send_sminfo_control(const mad::DrPath& path, uint32_t modifier) {
  std::array<uint8_t, 64> data{};
  mad::encode(own_sminfo(), wire::MutByteSpan(data));
  send_dr(path, mad::Method::kSet, sminfo_attr(), modifier, &data, {kSmInfoControl, 0, 0, modifier});
}

void SubnetManager::poll_master() {
  if (state_ != mad::SmState::kStandby || !master_ || !next_poll_ || clock_.now() < *next_poll_) return;
  next_poll_ = clock_.now() + std::chrono::milliseconds(config_.sminfo_polling_timeout);
  send_dr(master_->path, mad::Method::kGet, sminfo_attr(), 0, nullptr, {kPollMaster, 0, 0, 0});
}

// An SMInfo request from another SM (or a tool such as sminfo): answer Gets with our SMInfo;
// Sets are the other SM's commands (IBA 14.4.1.2).
void SubnetManager::handle_sminfo_request(const Mad& mad) {
  if (mad.mgmt_class() == static_cast<uint8_t>(mad::MgmtClass::kSubnLid)) {
    // A LID-routed Get is a tool's (sminfo, ibdiagnet), answered as OpenSM answers it; SMs
    // send each other their Sets directed-route.
    auto smp = mad::decode<mad::Smp>(mad.bytes);
    if (!smp || smp->header.method != mad::Method::kGet) return;
    mad::Smp response = *smp;
    response.header.method = mad::Method::kGetResp;
    mad::SMInfo mine = own_sminfo();
    auto theirs = mad::decode<mad::SMInfo>(smp->data);
    if (config_.sm_key != 0 && (!theirs || theirs->sm_key != config_.sm_key)) mine.sm_key = 0;
    response.data.fill(0);
    mad::encode(mine, wire::MutByteSpan(response.data));
    Mad out;
    mad::encode(response, wire::MutByteSpan(out.bytes));
    out.dlid = mad.slid;
    (void)port_.send(out);
    return;
  }
  if (mad.mgmt_class() != static_cast<uint8_t>(mad::MgmtClass::kSubnDirected)) return;
  auto smp = mad::decode<mad::DrSmp>(mad.bytes);
  if (!smp) return;
  const auto method = smp->method;
  if (method == mad::Method::kSet) {
    auto theirs = mad::decode<mad::SMInfo>(smp->data);
    const bool key_ok = theirs && (config_.sm_key == 0 || theirs->sm_key == config_.sm_key);
    if (key_ok) {
      switch (smp->attribute_modifier) {
        case kHandover:
          if (state_ == mad::SmState::kStandby || state_ == mad::SmState::kDiscovering) {
            // Acknowledge to the old master, then sweep as master.
            if (master_) send_sminfo_control(master_->path, kAcknowledge);
            become_master("handover from the master");
            request_sweep(true);
          }
          break;
        case kAcknowledge:
          if (state_ == mad::SmState::kMaster && handover_sent_) {
            RemoteSm new_master;
            new_master.guid = theirs->guid;
            new_master.priority = theirs->priority;
            new_master.state = mad::SmState::kMaster;
            for (const RemoteSm& r : other_sms_)
              if (r.guid == theirs->guid) new_master.path = r.path, new_master.lid = r.lid;
            become_standby(new_master);
          }
          break;
        case kDisable:
          state_ = mad::SmState::kNotActive;
          master_.reset();
          next_poll_.reset();
          break;
        case kStandby:
          if (state_ != mad::SmState::kNotActive && master_) become_standby(*master_);
          break;
        case kDiscover:
          state_ = mad::SmState::kDiscovering;
          request_sweep(true);
          break;
        default:
          break;
      }
    }
  } else if (method != mad::Method::kGet) {
    return;
  }
  mad::DrSmp response = mad::make_dr_response(*smp);
  mad::SMInfo mine = own_sminfo();
  // SM_Key only to those who know it (IBA 14.4.1.3).
  auto theirs = mad::decode<mad::SMInfo>(smp->data);
  if (config_.sm_key != 0 && (!theirs || theirs->sm_key != config_.sm_key)) mine.sm_key = 0;
  response.data.fill(0);
  mad::encode(mine, wire::MutByteSpan(response.data));
  Mad out;
  mad::encode(response, wire::MutByteSpan(out.bytes));
  out.dlid = mad.slid;
  (void)port_.send(out);
}

}  // namespace softib::sm
