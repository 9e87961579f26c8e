// The SA's registries: ServiceRecords (IBA 15.2.5.14) and InformInfo subscriptions (IBA
// 13.4.8.3, 15.2.5.12), and the Report(Notice) MADs that deliver events to subscribers.
// OpenSM's osm_sa_service_record.c, osm_sa_informinfo.c and osm_inform.c are the
// behavioural reference.
#include <algorithm>

#include "base/log.hpp"
#include "mad/attribute_id.hpp"
#include "mad/trap_gid_details.hpp"
#include "sm/sa_internal.hpp"

namespace softib::sm {

using mad::InformInfo;
using mad::Method;
using mad::ServiceRecord;
using sa::Request;

namespace {

constexpr uint64_t kServiceId = sa::bit<ServiceRecord>("ServiceID");
constexpr uint64_t kServiceGid = sa::bit<ServiceRecord>("ServiceGID");
constexpr uint64_t kServicePKey = sa::bit<ServiceRecord>("ServiceP_Key");
constexpr uint64_t kServiceLease = sa::bit<ServiceRecord>("ServiceLease");
static_assert(kServiceLease == uint64_t{1} << 4);  // IBA: the reserved field is component 3

constexpr uint32_t kInfiniteLease = 0xFFFFFFFF;
constexpr uint16_t kFirstSecurityTrap = 256, kLastSecurityTrap = 259;  // bad M_Key .. bad switch P_Key
constexpr uint16_t kMgidCreated = 66, kMgidDeleted = 67;

// A ServiceRecord is identified by ServiceID, ServiceGID and ServiceP_Key (OpenSM's RID).
bool same_rid(const ServiceRecord& a, const ServiceRecord& b) {
  return a.service_id == b.service_id && a.service_gid == b.service_gid && a.service_pkey == b.service_pkey;
}

// o13-14.1.1: the subscription and the new one name the same events for the same place.
bool same_subscription(const sa::Subscription& s, const InformInfo& i, Lid lid, Qpn qp) {
  const InformInfo& a = s.info;
  if (s.lid != lid || s.qp != qp) return false;
  if (!i.gid.is_zero() || !a.gid.is_zero()) {
    if (a.gid != i.gid) return false;
  } else if (a.lid_range_begin != i.lid_range_begin || a.lid_range_end != i.lid_range_end) {
    return false;
  }
  return a.type == i.type && a.is_generic == i.is_generic && a.trap_number_or_device_id == i.trap_number_or_device_id &&
         a.producer_type_or_vendor_id == i.producer_type_or_vendor_id;
}

// IBA 13.4.8.3 matching rules (as OpenSM's match_notice_to_inf_rec applies them).
bool matches(const InformInfo& i, const mad::Notice& n) {
  if (!i.gid.is_zero()) {
    if (i.gid != n.issuer_gid) return false;
  } else if (i.lid_range_begin.value() != 0xFFFF) {
    const uint16_t end = i.lid_range_end.value() == 0 ? i.lid_range_begin.value() : i.lid_range_end.value();
    if (n.issuer_lid.value() < i.lid_range_begin.value() || n.issuer_lid.value() > end) return false;
  }
  if ((i.is_generic != 0) != n.is_generic) return false;
  if (i.type != 0xFFFF && i.type != n.type) return false;
  if (i.trap_number_or_device_id != 0xFFFF && i.trap_number_or_device_id != n.trap_number_or_device_id) return false;
  if (i.producer_type_or_vendor_id != 0xFFFFFF && i.producer_type_or_vendor_id != n.producer_type_or_vendor_id)
    return false;
  return true;
}

}  // namespace

// ---- ServiceRecord -------------------------------------------------------------------------------

void SubnetAdministrator::Impl::service_records(Request& r) {
  const auto decoded = mad::decode<ServiceRecord>(r.sa.data);
  if (!decoded) return fail(r, mad::SaStatus::kReqInvalid);
  ServiceRecord q = *decoded;
  const uint64_t mask = r.mask();
  const TimePoint now = clock.now();
  expire_services(now);
  const auto requester = r.requester();
  const auto hide_key = [&](ServiceRecord& rec) {
    if (!r.trusted) rec.service_key.fill(0);  // IBA 15.2.5.14: the key only to the trusted
  };

  if (r.method() == Method::kSet || r.method() == Method::kDelete) {
    // The requester is in the service's partition, and so is the port it names.
    if (r.method() == Method::kSet && (mask & (kServiceId | kServiceGid)) != (kServiceId | kServiceGid))
      return fail(r, mad::SaStatus::kReqInvalid);
    if (!requester) return fail(r, mad::SaStatus::kReqInvalid);
    if (mask & kServicePKey) {
      if (!r.ctx.has_pkey(*requester, q.service_pkey)) return fail(r, mad::SaStatus::kReqInvalid);
      if ((mask & kServiceGid) && !q.service_gid.is_multicast()) {
        const auto port = r.ctx.endpoint_by_gid(q.service_gid);
        if (!port || !r.ctx.has_pkey(*port, q.service_pkey)) return fail(r, mad::SaStatus::kReqInvalid);
      }
    } else {
      q.service_pkey = PKey::default_full();
    }
  }
  switch (r.method()) {
    case Method::kSet: {
      if (!(mask & kServiceLease)) q.service_lease = kInfiniteLease;
      sa::ServiceEntry entry{q, std::nullopt};
      if (q.service_lease != kInfiniteLease) entry.expires = now + std::chrono::seconds(q.service_lease);
      const auto it = std::find_if(services.begin(), services.end(),
                                   [&](const sa::ServiceEntry& e) { return same_rid(e.record, q); });
      if (it != services.end()) {
        *it = entry;
      } else {
        services.push_back(entry);
      }
      hide_key(q);
      return answer(r, std::vector<ServiceRecord>{q});
    }
    case Method::kDelete: {
      const auto it = std::find_if(services.begin(), services.end(),
                                   [&](const sa::ServiceEntry& e) { return same_rid(e.record, q); });
      if (it == services.end()) return fail(r, mad::SaStatus::kNoRecords);
      ServiceRecord gone = it->record;
      services.erase(it);
      hide_key(gone);
      return answer(r, std::vector<ServiceRecord>{gone});
    }
    case Method::kGet:
    case Method::kGetTable:
      break;
    default:
      return fail(r, mad::MadStatus::from(mad::InvalidField::kMethodAttributeUnsupported));
  }
  std::vector<ServiceRecord> out;
  for (const sa::ServiceEntry& e : services) {
    ServiceRecord rec = e.record;
    // The lease a record still has, in whole seconds (rounded up).
    if (e.expires)
      rec.service_lease = static_cast<uint32_t>(
          std::chrono::ceil<std::chrono::seconds>(*e.expires - now).count());
    const auto bytes = mad::encode(rec);
    if (!sa::components_match(mad::layout_info<ServiceRecord>(), wire::ByteSpan(r.sa.data.data(), bytes.size()),
                              wire::ByteSpan(bytes), mask))
      continue;
    if (requester && !r.ctx.has_pkey(*requester, rec.service_pkey)) continue;
    hide_key(rec);
    out.push_back(rec);
  }
  answer(r, out);
}

void SubnetAdministrator::Impl::expire_services(TimePoint now) {
  std::erase_if(services, [&](const sa::ServiceEntry& e) { return e.expires && *e.expires <= now; });
}

// ---- InformInfo ------------------------------------------------------------------------------------

void SubnetAdministrator::Impl::inform_info(Request& r) {
  if (r.method() != Method::kSet)
    return fail(r, mad::MadStatus::from(mad::InvalidField::kMethodAttributeUnsupported));
  const auto decoded = mad::decode<InformInfo>(r.sa.data);
  if (!decoded) return fail(r, mad::SaStatus::kReqInvalid);
  const InformInfo& q = *decoded;
  const auto refuse = [&](mad::SaStatus status) {
    // o13-13.1.1: a refused subscription comes back with Subscribe 0.
    InformInfo back = q;
    back.subscribe = 0;
    mad::encode(back, wire::MutByteSpan(r.sa.data));
    fail(r, status);
  };
  const auto requester = r.requester();
  if (!requester || q.subscribe > 1) return refuse(mad::SaStatus::kReqInvalid);
  // C15-0.2-1.16: security traps go to trusted subscribers only.
  if (!r.trusted && q.is_generic != 0 && q.trap_number_or_device_id >= kFirstSecurityTrap &&
      q.trap_number_or_device_id <= kLastSecurityTrap)
    return refuse(mad::SaStatus::kReqInvalid);
  const Lid lid = r.mad.slid;
  const Qpn qp = r.mad.remote_qp;
  const auto it = std::find_if(subscriptions.begin(), subscriptions.end(),
                               [&](const sa::Subscription& s) { return same_subscription(s, q, lid, qp); });
  if (q.subscribe == 1) {
    // o13-14.1.1: the subscriber may see the port it asks about.
    if (!q.gid.is_zero()) {
      const auto port = r.ctx.endpoint_by_gid(q.gid);
      if (!port || !r.ctx.share_pkey(*port, *requester)) return refuse(mad::SaStatus::kReqInvalid);
    } else if (q.lid_range_begin.value() != 0xFFFF && q.lid_range_end.value() != 0 &&
               q.lid_range_end.value() < q.lid_range_begin.value()) {
      return refuse(mad::SaStatus::kReqInvalid);
    }
    sa::Subscription s{q, lid, qp, r.ctx.port_gid(*requester)};
    s.info.qpn = qp;
    if (it != subscriptions.end()) {
      *it = s;
    } else {
      subscriptions.push_back(s);
      log(LogLevel::kDebug, "sa", "LID {} subscribed to trap {}", lid, q.trap_number_or_device_id);
    }
  } else {
    if (it == subscriptions.end()) return refuse(mad::SaStatus::kReqInvalid);
    subscriptions.erase(it);
  }
  answer(r, std::vector<InformInfo>{q});
}

// ---- Reports ------------------------------------------------------------------------------------------

void SubnetAdministrator::Impl::report(const mad::Notice& notice, const SaView& view) {
  if (subscriptions.empty()) return;
  const sa::SaContext ctx(view);
  if (!ctx.ready()) return;  // who may see what is unknown before the first sweep
  const SmConfig& config = ctx.config();
  const uint16_t trap = notice.trap_number_or_device_id;
  // Traps 64-67 are the SM's: their subject is the GID in the details, not the issuer.
  Gid source = notice.issuer_gid;
  if (notice.is_generic && trap >= mad::kTrapGidInService && trap <= kMgidDeleted) {
    if (auto d = notice.details<mad::TrapGidDetails>()) source = d->gid;
  }
  for (auto it = subscriptions.begin(); it != subscriptions.end();) {
    const sa::Subscription& s = *it;
    if (!matches(s.info, notice)) {
      ++it;
      continue;
    }
    const auto dest = ctx.endpoint_by_lid(s.lid);
    if (!dest) {
      ++it;
      continue;
    }
    // o13-17.1.1: a subscriber hears only of what it shares a partition with.
    if (notice.is_generic && (trap == kMgidCreated || trap == kMgidDeleted)) {
      const McGroup* g = find_group(source);
      if (g == nullptr || !ctx.has_pkey(*dest, g->pkey)) {
        ++it;
        continue;
      }
    } else {
      const auto src = ctx.endpoint_by_gid(source);
      if (!src) {
        ++it;
        continue;
      }
      if (!ctx.share_pkey(*src, *dest)) {
        // o13-17.1.2: a subscription for a port range it cannot see is void.
        if (s.info.lid_range_begin.value() != 0xFFFF) {
          it = subscriptions.erase(it);
        } else {
          ++it;
        }
        continue;
      }
    }
    mad::SaMad m;
    m.header.method = Method::kReport;
    m.header.transaction_id = next_report_tid;
    m.header.attribute_id = static_cast<uint16_t>(mad::SaAttr::kNotice);
    next_report_tid = (next_report_tid + 1) & 0xFFFFFFFF;
    if (next_report_tid == 0) next_report_tid = 1;
    mad::encode(notice, wire::MutByteSpan(m.data));
    sa::PendingReport p;
    mad::encode(m, wire::MutByteSpan(p.mad.bytes));
    p.mad.dlid = s.lid;
    p.mad.remote_qp = s.qp;
    p.timeout = std::chrono::milliseconds(config.transaction_timeout);
    p.deadline = clock.now() + p.timeout;
    p.retries_left = config.transaction_retries;
    (void)mad_port.send(p.mad);
    counters.inc(SaCounter::kReportsSent);
    reports[m.header.transaction_id] = p;
    ++it;
  }
}

void SubnetAdministrator::Impl::report_response(const Mad& mad) {
  const auto it = reports.find(wire::load_be64(&mad.bytes[8]));
  if (it == reports.end() || it->second.mad.dlid != mad.slid) {
    counters.inc(SaCounter::kDropResponse);
    return;
  }
  reports.erase(it);
  counters.inc(SaCounter::kReportsAcknowledged);
}

void SubnetAdministrator::Impl::poll_reports(TimePoint now) {
  for (auto it = reports.begin(); it != reports.end();) {
    sa::PendingReport& p = it->second;
    if (now < p.deadline) {
      ++it;
    } else if (p.retries_left == 0) {
      counters.inc(SaCounter::kReportsAbandoned);
      it = reports.erase(it);
    } else {
      --p.retries_left;
      p.deadline = now + p.timeout;
      (void)mad_port.send(p.mad);
      counters.inc(SaCounter::kReportsSent);
      ++it;
    }
  }
}

}  // namespace softib::sm
