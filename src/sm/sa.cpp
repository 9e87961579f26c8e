// The Subnet Administrator: validation, dispatch by attribute, answers (single MADs and
// RMPP transfers), and the public interface. The attributes live in sa_records.cpp,
// sa_path.cpp, sa_mcast.cpp and sa_services.cpp.
#include "sm/sa.hpp"

#include <algorithm>
#include <initializer_list>

#include "base/log.hpp"
#include "mad/attribute_id.hpp"
#include "mad/class_port_info.hpp"
#include "sm/sa_internal.hpp"

namespace softib::sm {

std::string_view to_string(SaCounter c) {
  switch (c) {
    case SaCounter::kReceived: return "received";
    case SaCounter::kRequests: return "requests";
    case SaCounter::kErrorStatus: return "error_status";
    case SaCounter::kDropBaseVersion: return "drop_base_version";
    case SaCounter::kDropMalformed: return "drop_malformed";
    case SaCounter::kDropSmKey: return "drop_sm_key";
    case SaCounter::kDropResponse: return "drop_response";
    case SaCounter::kDropRmppUnknown: return "drop_rmpp_unknown";
    case SaCounter::kDropRmppRequest: return "drop_rmpp_request";
    case SaCounter::kRmppTransfers: return "rmpp_transfers";
    case SaCounter::kRmppCompleted: return "rmpp_completed";
    case SaCounter::kRmppRetransmitted: return "rmpp_retransmitted";
    case SaCounter::kRmppAbortedByPeer: return "rmpp_aborted_by_peer";
    case SaCounter::kRmppStoppedByPeer: return "rmpp_stopped_by_peer";
    case SaCounter::kRmppAbortedBySa: return "rmpp_aborted_by_sa";
    case SaCounter::kReportsSent: return "reports_sent";
    case SaCounter::kReportsAcknowledged: return "reports_acknowledged";
    case SaCounter::kReportsAbandoned: return "reports_abandoned";
    case SaCounter::kCount: break;
  }
  return "?";
}

using mad::Method;
using mad::SaAttr;
using sa::Request;

namespace {

// The response method for a request (Set is answered by GetResp, IBA 15.4).
Method response_method(Method m) {
  return m == Method::kSet ? Method::kGetResp : static_cast<Method>(static_cast<uint8_t>(m) | mad::kResponseBit);
}

// The request with its header turned into a response: the R bit, SM_Key 0 (C15-0.1.5),
// no RMPP.
mad::SaMad response_to(const mad::SaMad& request) {
  mad::SaMad out = request;
  out.header.method = response_method(request.header.method);
  out.header.status = mad::MadStatus();
  out.sm_key = 0;
  out.rmpp = mad::RmppHeader{};
  return out;
}

// ClassPortInfo.RespTimeValue: 4.096 us * 2^value must cover the transaction timeout
// (OpenSM computes it the same way from its transaction_timeout).
uint8_t resp_time_value(uint32_t timeout_ms) {
  uint8_t v = 8;  // 1 ms
  uint64_t ns = 4096ull << v;
  while (ns < uint64_t{timeout_ms} * 1'000'000 && v < 31) {
    ++v;
    ns <<= 1;
  }
  return v;
}

}  // namespace

void SubnetAdministrator::Impl::send_mad(const mad::SaMad& m, Lid to, Qpn qp) {
  Mad out;
  mad::encode(m, wire::MutByteSpan(out.bytes));
  out.dlid = to;
  out.remote_qp = qp;
  (void)mad_port.send(out);
}

void SubnetAdministrator::Impl::fail(const Request& r, mad::MadStatus status) {
  mad::SaMad out = response_to(r.sa);
  out.header.status = status;
  if (r.method() == Method::kGetTable) out.attribute_offset = 0;
  counters.inc(SaCounter::kErrorStatus);
  log(LogLevel::kDebug, "sa", "{} {} from LID {}: {}", mad::to_string(r.method()),
      mad::to_string(static_cast<SaAttr>(r.sa.header.attribute_id)), r.mad.slid, status.to_string());
  send_mad(out, r.mad.slid, r.mad.remote_qp);
}

void SubnetAdministrator::Impl::answer(const Request& r, wire::ByteSpan records, size_t count,
                                       size_t record_size) {
  const uint16_t offset = mad::attribute_offset_for(record_size);
  const size_t stride = size_t{offset} * 8;
  if (r.method() != Method::kGetTable) {
    if (count == 0) return fail(r, mad::SaStatus::kNoRecords);
    if (count > 1) return fail(r, mad::SaStatus::kTooManyRecords);  // C15-0.1.30
    mad::SaMad out = response_to(r.sa);
    out.attribute_offset = offset;
    out.data.fill(0);
    std::copy_n(records.begin(), std::min(record_size, out.data.size()), out.data.begin());
    send_mad(out, r.mad.slid, r.mad.remote_qp);
    return;
  }
  std::vector<uint8_t> data(count * stride, 0);
  for (size_t i = 0; i < count; ++i)
    std::copy_n(records.begin() + static_cast<std::ptrdiff_t>(i * record_size), record_size,
                data.begin() + static_cast<std::ptrdiff_t>(i * stride));
  mad::SaMad first = response_to(r.sa);
  first.attribute_offset = count != 0 ? offset : 0;
  first.data.fill(0);
  if (!rmpp.start(r.mad.slid, r.mad.remote_qp, mad::sa_segments(first, data), clock.now()))
    fail(r, mad::SaStatus::kNoResources);
}

void SubnetAdministrator::Impl::handle(const Mad& mad, const SaView& view) {
  counters.inc(SaCounter::kReceived);
  if (mad.bytes[0] != mad::kBaseVersion) {
    counters.inc(SaCounter::kDropBaseVersion);
    return;
  }
  const auto method = static_cast<Method>(mad.bytes[3]);
  if (mad.mgmt_class() != static_cast<uint8_t>(mad::MgmtClass::kSubnAdm)) {
    counters.inc(SaCounter::kDropMalformed);
    return;
  }
  if (mad.bytes[2] != mad::kSaClassVersion) {
    if (mad::is_response(method)) {
      counters.inc(SaCounter::kDropResponse);
      return;
    }
    // IBA 13.4.7: a request of a class version the SA does not speak gets BadVersion.
    auto header = mad::decode<mad::MadHeader>(mad.bytes);
    if (!header) {
      counters.inc(SaCounter::kDropMalformed);
      return;
    }
    header->method = response_method(method);
    header->status = mad::MadStatus::from(mad::InvalidField::kBadVersion);
    Mad out = mad;
    mad::encode(*header, wire::MutByteSpan(out.bytes));
    out.dlid = mad.slid;
    counters.inc(SaCounter::kRequests);
    counters.inc(SaCounter::kErrorStatus);
    (void)mad_port.send(out);
    return;
  }
  auto decoded = mad::decode<mad::SaMad>(mad.bytes);
  if (!decoded) {
    log(LogLevel::kDebug, "sa", "dropped a MAD from LID {}: {}", mad.slid, decoded.error().to_string());
    counters.inc(SaCounter::kDropMalformed);
    return;
  }
  const mad::SaMad& m = *decoded;
  if (m.rmpp.active() && m.rmpp.type != mad::RmppType::kData) {
    // ACK/STOP/ABORT for an answer we send (the kernel's ACK flips the R bit back).
    if (!rmpp.on_control(mad.slid, m, clock.now())) counters.inc(SaCounter::kDropRmppUnknown);
    return;
  }
  if (method == Method::kReportResp) {
    report_response(mad);
    return;
  }
  if (mad::is_response(method)) {
    counters.inc(SaCounter::kDropResponse);
    return;
  }
  if (m.rmpp.active() && !(m.rmpp.first() && m.rmpp.last())) {
    // A request in several segments: no SA request needs one; refuse the transfer.
    mad::SaMad abort = m;
    abort.rmpp = mad::RmppHeader{mad::kRmppVersion, mad::RmppType::kAbort, mad::kNoRespTime, mad::kRmppActive,
                                 mad::RmppStatus::kUnspecified, 0, 0};
    abort.data.fill(0);
    send_mad(abort, mad.slid, mad.remote_qp);
    counters.inc(SaCounter::kDropRmppRequest);
    return;
  }
  // C15-0.1.5: SM_Key is 0 (an untrusted request) or the SM's key (a trusted one); OpenSM
  // drops anything else. An SM whose key is 0 trusts nobody.
  const uint64_t key = view.config != nullptr ? view.config->sm_key : 0;
  if (m.sm_key != 0 && m.sm_key != key) {
    counters.inc(SaCounter::kDropSmKey);
    return;
  }
  sa::SaContext ctx(view);
  Request r{mad, m, ctx, m.sm_key != 0};
  counters.inc(SaCounter::kRequests);
  dispatch(r);
}

void SubnetAdministrator::Impl::dispatch(Request& r) {
  switch (r.method()) {
    case Method::kGet:
    case Method::kSet:
    case Method::kGetTable:
    case Method::kDelete:
      break;
    default:
      return fail(r, mad::MadStatus::from(mad::InvalidField::kMethodUnsupported));
  }
  switch (static_cast<SaAttr>(r.sa.header.attribute_id)) {
    case SaAttr::kClassPortInfo: return class_port_info(r);
    case SaAttr::kNodeRecord: return node_records(r);
    case SaAttr::kPortInfoRecord: return port_info_records(r);
    case SaAttr::kLinkRecord: return link_records(r);
    case SaAttr::kSwitchInfoRecord: return switch_info_records(r);
    case SaAttr::kLinearForwardingTableRecord: return lft_records(r);
    case SaAttr::kP_KeyTableRecord: return pkey_table_records(r);
    case SaAttr::kPathRecord: return path_records(r);
    case SaAttr::kMCMemberRecord: return mc_member_records(r);
    case SaAttr::kServiceRecord: return service_records(r);
    case SaAttr::kInformInfo: return inform_info(r);
    case SaAttr::kInformInfoRecord: return inform_info_records(r);
    case SaAttr::kSMInfoRecord: return sm_info_records(r);
    case SaAttr::kGuidInfoRecord: return guid_info_records(r);
    case SaAttr::kSLtoVLMappingTableRecord: return sl2vl_records(r);
    case SaAttr::kVLArbitrationTableRecord: return vl_arb_records(r);
    case SaAttr::kMulticastForwardingTableRecord: return mft_records(r);
    default:
      return fail(r, mad::MadStatus::from(mad::InvalidField::kMethodAttributeUnsupported));
  }
}

void SubnetAdministrator::Impl::class_port_info(Request& r) {
  if (r.method() != Method::kGet)
    return fail(r, mad::MadStatus::from(mad::InvalidField::kMethodAttributeUnsupported));
  mad::ClassPortInfo cpi;
  cpi.base_version = 1;
  cpi.class_version = mad::kSaClassVersion;
  // IBA 15.2.5.1, the bits of OpenSM's set that this SA implements: IsSubnetGetSetNotice-
  // Supported, IsPortInfoCapMaskMatchSupported (PortInfoRecord, AttributeModifier bit 31)
  // and, with multicast on, IsUDMulticastSupported. OpenSM (built with dual-sided RMPP)
  // also claims IsMultiPathSupported: this SA has no MultiPathRecord.
  cpi.capability_mask = 1u << 1 | 1u << 13;
  if (!r.ctx.config().disable_multicast) cpi.capability_mask |= 1u << 9;
  // IsFullPortInfoRecordSupported, IsExtendedSpeedsSupported, IsPortInfoCapMask2Match-
  // Supported, IsSendOnlyFullMemberSupported, IsLinkWidth2xSupported, IsLinkSpeedHDR-
  // Supported. Not OpenSM's IsMulticastTopSupported (the SM leaves MulticastFDBTop alone),
  // IsAliasGUIDsSupported (no GUIDInfoRecord Set) or IsMulticastServiceRecordsSupported.
  cpi.capability_mask2 = 1u << 6 | 1u << 7 | 1u << 10 | 1u << 12 | 1u << 13 | 1u << 15;
  cpi.resp_time_value = resp_time_value(r.ctx.config().transaction_timeout);
  cpi.redirect_qp = Qpn(1);
  cpi.redirect_qkey = QKey(0x80010000);
  cpi.trap_qkey = QKey(0x80010000);
  answer(r, std::vector<mad::ClassPortInfo>{cpi});
}

// ---- the public interface ---------------------------------------------------------------------

SubnetAdministrator::SubnetAdministrator(MadPort& port, const Clock& clock, SaOptions options)
    : impl_(std::make_unique<Impl>(port, clock, options)) {}

SubnetAdministrator::~SubnetAdministrator() = default;

void SubnetAdministrator::handle(const Mad& mad, const SaView& view) { impl_->handle(mad, view); }

void SubnetAdministrator::poll() {
  const TimePoint now = impl_->clock.now();
  impl_->rmpp.poll(now);
  impl_->poll_reports(now);
  impl_->expire_services(now);
}

std::optional<TimePoint> SubnetAdministrator::next_deadline() const {
  std::optional<TimePoint> t = impl_->rmpp.next_deadline();
  const auto earliest = [&t](TimePoint x) {
    if (!t || x < *t) t = x;
  };
  for (const auto& [tid, r] : impl_->reports) earliest(r.deadline);
  for (const sa::ServiceEntry& s : impl_->services)
    if (s.expires) earliest(*s.expires);
  return t;
}

const std::map<uint16_t, McGroup>& SubnetAdministrator::groups() const { return impl_->groups; }
bool SubnetAdministrator::mcast_changed() const { return impl_->mcast_changed; }
void SubnetAdministrator::clear_mcast_changed() { impl_->mcast_changed = false; }

void SubnetAdministrator::report(const mad::Notice& notice, const SaView& view) { impl_->report(notice, view); }

const CounterSet<SaCounter>& SubnetAdministrator::counters() const { return impl_->counters; }
size_t SubnetAdministrator::transfers_in_progress() const { return impl_->rmpp.in_progress(); }

}  // namespace softib::sm
