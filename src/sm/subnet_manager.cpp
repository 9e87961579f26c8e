#include "sm/subnet_manager.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "base/format.hpp"
#include "base/log.hpp"
#include "mad/attribute_id.hpp"
#include "mad/dr_smp.hpp"
#include "mad/notice.hpp"
#include "mad/smp.hpp"

namespace softib::sm {

namespace {
constexpr uint32_t kNoNode = 0xFFFFFFFF;
}

SubnetManager::SubnetManager(MadPort& port, const Clock& clock, SmConfig config)
    : port_(port),
      clock_(clock),
      config_(std::move(config)),
      transactions_(port, clock, std::chrono::milliseconds(config_.transaction_timeout),
                    config_.transaction_retries, config_.max_wire_smps),
      subnet_(std::make_unique<Subnet>()),
      sa_(port, clock) {
  load_partitions();
  sa_.create_partition_groups(partitions_, config_);
  state_ = config_.sm_inactive ? mad::SmState::kNotActive : mad::SmState::kDiscovering;
  if (!config_.cache_dir.empty()) {
    std::vector<std::string> warnings;
    auto g = Guid2Lid::load(config_.cache_dir + "/guid2lid", &warnings);
    for (const std::string& w : warnings) log(LogLevel::kWarn, "sm", "{}", w);
    if (g) {
      guid2lid_ = std::move(*g);
    } else {
      log(LogLevel::kWarn, "sm", "{}; starting without remembered LIDs", g.error().to_string());
    }
  }
}

SubnetManager::~SubnetManager() = default;

void SubnetManager::start() {
  if (state_ == mad::SmState::kNotActive) return;  // sm_inactive: answers SMInfo, never sweeps
  begin_heavy_sweep();
}

bool SubnetManager::sweeping() const { return phase_ != Phase::kIdle; }

void SubnetManager::request_sweep(bool heavy) {
  sweep_wanted_ = true;
  heavy_wanted_ = heavy_wanted_ || heavy;
}

void SubnetManager::poll() {
  while (auto m = port_.receive()) handle(*m);
  for (const auto& f : transactions_.expire(clock_.now())) handle_failure(f);
  poll_master();
  sa_.poll();
  while (phase_ != Phase::kIdle && transactions_.idle()) {
    const Phase before = phase_;
    next_phase();
    if (phase_ == before) break;
  }
  // Only a master (or an SM still discovering) sweeps; a standby polls its master.
  const bool may_sweep = state_ == mad::SmState::kMaster || state_ == mad::SmState::kDiscovering;
  if (phase_ == Phase::kIdle && !sa_waiting_.empty()) {
    std::vector<Mad> waiting = std::move(sa_waiting_);
    sa_waiting_.clear();
    for (const Mad& m : waiting) handle_sa(m);
  }
  if (phase_ == Phase::kIdle && state_ == mad::SmState::kMaster && !sweep_wanted_ && !targeted_wanted_ &&
      sa_.mcast_changed() && graph_) {
    begin_multicast_update();
  } else if (phase_ == Phase::kIdle && may_sweep) {
    if (sweep_wanted_) {
      if (heavy_wanted_) {
        begin_heavy_sweep();
      } else {
        begin_light_sweep();
      }
    } else if (targeted_wanted_) {
      begin_targeted_sweep();
    } else if (next_sweep_ && clock_.now() >= *next_sweep_) {
      begin_light_sweep();
    }
  }
}

std::optional<TimePoint> SubnetManager::next_deadline() {
  auto t = transactions_.next_deadline();
  if (next_poll_ && (!t || *next_poll_ < *t)) t = next_poll_;
  if (const auto sa = sa_.next_deadline(); sa && (!t || *sa < *t)) t = sa;
  const bool may_sweep = state_ == mad::SmState::kMaster || state_ == mad::SmState::kDiscovering;
  if (phase_ == Phase::kIdle && may_sweep && next_sweep_ && (!t || *next_sweep_ < *t)) return next_sweep_;
  return t;
}

void SubnetManager::send_dr(const mad::DrPath& path, mad::Method method, uint16_t attribute,
                                uint32_t modifier, const std::array<uint8_t, 64>* data,
                                Transactions::Context c) {
  mad::DrSmp smp = mad::make_dr_request(path, method, attribute, modifier, 0, config_.m_key);
  if (data) smp.data = *data;
  Mad m;
  mad::encode(smp, wire::MutByteSpan(m.bytes));
  transactions_.submit(m, c);  // stamps the TID
}

void SubnetManager::begin_heavy_sweep() {
  transactions_.cancel_pending();  // nothing of an earlier sweep may outlive its Subnet
  subnet_ = std::make_unique<Subnet>();
  other_sms_.clear();
  dirty_.clear();
  targeted_wanted_ = false;
  report_ = SweepReport{};
  if (!partition_error_.empty()) report_.problems.push_back(partition_error_);
  report_.heavy = true;
  report_.started = clock_.now();
  mads_at_start_ = transactions_.sent();
  timeouts_at_start_ = transactions_.timed_out();
  unclean_ = false;
  sweep_wanted_ = heavy_wanted_ = false;
  next_sweep_.reset();
  phase_ = Phase::kDiscover;
  log(LogLevel::kInfo, "sm", "heavy sweep started");
  send_dr(mad::DrPath(), mad::Method::kGet, static_cast<uint16_t>(mad::SmpAttr::kNodeInfo), 0, nullptr,
          {kNodeInfo, kNoNode, 0, 0});
}

void SubnetManager::begin_light_sweep() {
  sweep_wanted_ = false;
  next_sweep_.reset();
  if (subnet_->nodes.empty()) {
    begin_heavy_sweep();
    return;
  }
  phase_ = Phase::kLight;
  mads_at_start_ = transactions_.sent();
  timeouts_at_start_ = transactions_.timed_out();
  unclean_ = false;
  for (uint32_t i = 0; i < subnet_->nodes.size(); ++i) {
    const NodeIndex n(i);
    if (!subnet_->is_switch(n)) continue;
    send_dr(subnet_->nodes[i].path, mad::Method::kGet, static_cast<uint16_t>(mad::SmpAttr::kSwitchInfo), 0,
            nullptr, {kLightSwitchInfo, i, 0, 0});
  }
}

// The configuration passes, queued as sources in this order; the Arm pass starts when all
// are acknowledged.
void SubnetManager::begin_programming() {
  phase_ = Phase::kProgram;
  program_switches();
  program_mfts();
  program_sl2vl();
  program_pkeys();
  configure_ports();
}

void SubnetManager::next_phase() {
  switch (phase_) {
    case Phase::kIdle:
      return;
    case Phase::kTargeted:
      if (heavy_wanted_ || !targeted_apply()) {
        request_sweep(true);  // poll() starts it once this sweep is closed
        finish_sweep();
        return;
      }
      begin_programming();
      return;
    case Phase::kDiscover:
      if (!elect()) {  // another SM is (or should be) master: stand by, configure nothing
        finish_sweep();
        return;
      }
      if (!assign_lids_and_route()) {
        finish_sweep();
        return;
      }
      begin_programming();
      return;
    case Phase::kProgram:
      phase_ = Phase::kArm;
      set_port_states(mad::PortState::kInitialize, mad::PortState::kArmed, kArmPort);
      return;
    case Phase::kArm:
      phase_ = Phase::kActivate;
      set_port_states(mad::PortState::kArmed, mad::PortState::kActive, kActivatePort);
      return;
    case Phase::kActivate:
      finish_sweep();
      return;
    case Phase::kMulticast:
      phase_ = Phase::kIdle;
      return;
    case Phase::kLight:
      phase_ = Phase::kIdle;
      if (heavy_wanted_) {
        begin_heavy_sweep();
      } else if (config_.sweep_interval) {
        next_sweep_ = clock_.now() + std::chrono::seconds(config_.sweep_interval);
      }
      return;
  }
}

void SubnetManager::finish_sweep() {
  phase_ = Phase::kIdle;
  report_.finished = clock_.now();
  report_.mads = transactions_.sent() - mads_at_start_;
  report_.nodes = subnet_->topo.node_count();
  report_.switches = subnet_->topo.count(fabric::NodeType::kSwitch);
  report_.links = subnet_->topo.link_count();
  subnet_up_ = tables_.has_value();
  if (!config_.cache_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(config_.cache_dir, ec);
    if (auto s = guid2lid_.save(config_.cache_dir + "/guid2lid"); !s)
      log(LogLevel::kWarn, "sm", "cannot save guid2lid: {}", s.error().to_string());
  }
  if (config_.sweep_interval) next_sweep_ = clock_.now() + std::chrono::seconds(config_.sweep_interval);
  if (subnet_up_ && state_ == mad::SmState::kMaster && (report_.heavy || report_.targeted)) report_gid_changes();
  log(LogLevel::kInfo, "sm", "{}: {} nodes, {} links, {} MADs, {} LFT blocks set; routing {}",
      subnet_up_ ? "SUBNET UP" : "sweep failed", report_.nodes, report_.links, report_.mads,
      report_.lft_blocks_set, report_.routing_engine);
  // Requests that went unanswered after every retry (lossy links) may have left ports or
  // tables short of what this sweep wanted: sweep again at once, as OpenSM does, until a
  // sweep is clean (bounded; after that the periodic sweeps keep trying).
  if (unclean_ && state_ == mad::SmState::kMaster) {
    if (++unclean_sweeps_ <= kMaxUncleanSweeps) {
      log(LogLevel::kWarn, "sm", "{} requests went unanswered; sweeping again ({} of {})",
          transactions_.timed_out() - timeouts_at_start_, unclean_sweeps_, kMaxUncleanSweeps);
      begin_heavy_sweep();
    }
  } else {
    unclean_sweeps_ = 0;
  }
}

void SubnetManager::handle(const Mad& mad) {
  // SA traffic first: RMPP ACKs carry no R bit, and ReportResps are the SA's own.
  if (mad.mgmt_class() == static_cast<uint8_t>(mad::MgmtClass::kSubnAdm)) {
    handle_sa(mad);
    return;
  }
  const auto method = static_cast<mad::Method>(mad.bytes[3]);
  if (method == mad::Method::kTrap) {
    handle_trap(mad);
    return;
  }
  if (!mad::is_response(method)) {
    const bool smp = mad.mgmt_class() == static_cast<uint8_t>(mad::MgmtClass::kSubnDirected) ||
                     mad.mgmt_class() == static_cast<uint8_t>(mad::MgmtClass::kSubnLid);
    if (smp && wire::load_be16(&mad.bytes[16]) == static_cast<uint16_t>(mad::SmpAttr::kSMInfo))
      handle_sminfo_request(mad);
    return;  // SA requests come later
  }
  const uint64_t tid = wire::load_be64(&mad.bytes[8]);
  auto c = transactions_.complete(tid);
  if (!c) return;  // late or duplicate
  if (mad.mgmt_class() != static_cast<uint8_t>(mad::MgmtClass::kSubnDirected)) return;
  auto smp = mad::decode<mad::DrSmp>(mad.bytes);
  if (!smp) {
    report_.problems.push_back(fmt::format("malformed response: {}", smp.error().to_string()));
    return;
  }
  switch (static_cast<Op>(c->op)) {
    case kNodeInfo:
    case kNodeDescription:
    case kSwitchInfo:
    case kPortInfo:
      discover(*c, *smp);
      return;
    case kTrapPortInfo:
      targeted_port_info(*c, *smp);
      return;
    case kGetSmInfo:
      remote_sm_info(*c, *smp);
      return;
    case kPollMaster: {
      auto si = mad::decode<mad::SMInfo>(smp->data);
      if (!smp->status.ok() || !si) return;
      missed_polls_ = 0;
      if (si->sm_state != mad::SmState::kMaster && state_ == mad::SmState::kStandby) {
        // The master stepped down without handing over: elect again.
        log(LogLevel::kInfo, "sm", "the master reports {}; rediscovering", mad::to_string(si->sm_state));
        state_ = mad::SmState::kDiscovering;
        master_.reset();
        next_poll_.reset();
        request_sweep(true);
      }
      return;
    }
    case kSmInfoControl:
      return;
    case kLightSwitchInfo: {
      auto si = mad::decode<mad::SwitchInfo>(smp->data);
      if (smp->status.ok() && si && si->port_state_change) heavy_wanted_ = true;
      return;
    }
    default:
      configured(*c, *smp);
      return;
  }
}

void SubnetManager::handle_trap(const Mad& mad) {
  auto smp = mad::decode<mad::Smp>(mad.bytes);
  if (!smp) return;
  // Acknowledge: TrapRepress back to the issuer (IBA 14.2.5.1).
  mad::Smp repress = *smp;
  repress.header.method = mad::Method::kTrapRepress;
  Mad out;
  mad::encode(repress, wire::MutByteSpan(out.bytes));
  out.dlid = mad.slid;
  (void)port_.send(out);
  auto notice = mad::decode<mad::SmpNotice>(smp->data);
  if (!notice) return;
  const uint16_t trap = notice->notice.trap_number_or_device_id;
  log(LogLevel::kInfo, "sm", "trap {} from LID {}", trap, notice->notice.issuer_lid);
  if (state_ == mad::SmState::kMaster) {
    // Subscribers (InformInfo) hear of it; the SMP Notice carries no GID, so fill in the
    // issuer's port GID from what the SM knows.
    mad::Notice forwarded = notice->notice;
    const Subnet& s = *subnet_;
    for (uint32_t i = 0; i < s.nodes.size(); ++i) {
      const NodeIndex n(i);
      const uint8_t p = s.is_switch(n) ? 0 : 1;
      for (uint8_t q = p; q <= (s.is_switch(n) ? 0 : s.nodes[i].info.num_ports); ++q)
        if (s.topo.port({n, q}).lid == forwarded.issuer_lid)
          forwarded.issuer_gid = Gid(config_.subnet_prefix, s.topo.port({n, q}).guid);
    }
    sa_.report(forwarded, sa_view());
  }
  if (!config_.sweep_on_trap) return;
  // Trap 128 (a switch's link state changed): a targeted sweep of that switch when the SM
  // knows it; anything else, or an unknown issuer, a heavy sweep.
  if (notice->notice.is_generic && trap == 128 && subnet_up_) {
    if (auto sw = switch_with_lid(notice->notice.issuer_lid)) {
      mark_dirty(*sw);
      return;
    }
  }
  request_sweep(true);
}

void SubnetManager::handle_failure(const Transactions::Failed& f) {
  const auto& c = f.context;
  switch (static_cast<Op>(c.op)) {
    case kGetSmInfo:  // a port with IsSM whose SM does not answer: not a candidate
      return;
    case kSmInfoControl:
      handover_sent_ = false;  // try again next sweep
      return;
    case kPollMaster:
      if (state_ == mad::SmState::kStandby && ++missed_polls_ >= config_.polling_retry_number) {
        log(LogLevel::kWarn, "sm", "master {} missed {} polls; taking over", master_ ? master_->guid : Guid(0),
            missed_polls_);
        state_ = mad::SmState::kDiscovering;
        master_.reset();
        next_poll_.reset();
        request_sweep(true);
      }
      return;
    default:
      break;
  }
  unclean_ = true;
  std::string where = c.node < subnet_->topo.node_count() ? subnet_->topo.node(NodeIndex(c.node)).id : "the SM's port";
  report_.problems.push_back(fmt::format("no response from {} (step {}, port {})", where, c.op, c.port));
  if (phase_ == Phase::kTargeted) request_sweep(true);  // the model cannot be trusted: rediscover
}

}  // namespace softib::sm
