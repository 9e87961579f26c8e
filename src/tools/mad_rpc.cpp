#include "tools/mad_rpc.hpp"

#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include <fmt/format.h>

#include "base/log.hpp"
#include "mad/codec.hpp"
#include "mad/dr_smp.hpp"
#include "mad/mgmt_class.hpp"
#include "mad/path_record.hpp"
#include "mad/port_info.hpp"
#include "mad/rmpp_header.hpp"
#include "mad/sa_mad.hpp"
#include "mad/vendor_mad.hpp"
#include "tools/host.hpp"

namespace softib::tools {

namespace {

TimePoint now() { static const SteadyClock clock; return clock.now(); }

constexpr uint8_t kSmpLid = 0x01, kSmpDr = 0x81, kSa = 0x03, kPma = 0x04;
constexpr uint32_t kQp1Qkey = 0x80010000;
constexpr size_t kTidOffset = 8;

uint64_t tid_of(std::span<const uint8_t> mad) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v = (v << 8) | mad[kTidOffset + i];
  return v;
}

void put_be(std::span<uint8_t> out, size_t at, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
}

uint64_t get_be(std::span<const uint8_t> in, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v = (v << 8) | in[at + i];
  return v;
}

bool is_response(std::span<const uint8_t> mad) { return (mad[3] & 0x80) != 0; }

// The data area of each class: where MadRequest::data goes.
std::pair<size_t, size_t> data_area(uint8_t mgmt_class) {
  switch (mgmt_class) {
    case kSmpLid: return {64, 64};
    case kSmpDr: return {64, 64};
    case kPma: return {64, 192};
    default: return {40, 216};  // vendor range 2
  }
}

}  // namespace

std::string Destination::to_string() const {
  if (!directed()) return fmt::format("Lid {}", lid);
  std::string s = "DR path slid 65535; dlid 65535; 0";
  for (uint8_t p : path) s += fmt::format(",{}", p);
  return s;
}

Result<MadRpc> MadRpc::open(std::string_view fabric, uint32_t node, uint8_t port, RpcOptions options) {
  auto c = ipc::Connection::open(fabric, "softib-rpc");
  if (!c) return Err{c.error()};
  return attach(std::move(*c), node, port, options);
}

Result<MadRpc> MadRpc::attach(ipc::Connection c, uint32_t node, uint8_t port, RpcOptions options) {
  SOFTIB_TRY(c.open_port(node, port));
  MadRpc rpc(std::move(c), node, port, options);
  SOFTIB_TRY(rpc.register_agents());
  SOFTIB_TRY(rpc.refresh_port());
  // Transaction IDs unique across the clients of one fabric: the pid in the high half.
  rpc.tid_ = (static_cast<uint64_t>(::getpid()) << 32) | (static_cast<uint64_t>(node) << 16);
  return rpc;
}

Result<void> MadRpc::register_agents() {
  // No unsolicited methods: these agents only send requests and take their responses.
  auto reg = [&](uint8_t cls, uint8_t version, uint8_t rmpp, uint32_t oui) -> Result<uint32_t> {
    ipc::RegisterMsg r;
    r.mgmt_class = cls;
    r.class_version = version;
    r.rmpp_version = rmpp;
    r.oui = oui;
    return conn_.register_agent(r);
  };
  auto a = reg(kSmpLid, 1, 0, 0);
  if (!a) return Err{a.error()};
  smp_lid_ = *a;
  a = reg(kSmpDr, 1, 0, 0);
  if (!a) return Err{a.error()};
  smp_dr_ = *a;
  a = reg(kPma, 1, 0, 0);
  if (!a) return Err{a.error()};
  pma_ = *a;
  a = reg(kSa, mad::kSaClassVersion, 1, 0);
  if (!a) return Err{a.error()};
  sa_ = *a;
  a = reg(mad::kOpenIbPingClass, 1, 0, mad::kOpenIbOui);
  if (!a) return Err{a.error()};
  vendor_ = *a;
  return {};
}

Result<void> MadRpc::refresh_port() {
  auto p = conn_.query_port(node_, port_);
  if (!p) return Err{p.error()};
  auto pi = mad::decode<mad::PortInfo>(p->port_info);
  if (!pi) return Status(Code::kParseError, pi.error().to_string());
  local_lid_ = pi->lid.value();
  sm_lid_ = pi->master_sm_lid.value();
  return {};
}

uint64_t MadRpc::next_tid() { return ++tid_; }

uint32_t MadRpc::agent_for(uint8_t mgmt_class) const {
  switch (mgmt_class) {
    case kSmpLid: return smp_lid_;
    case kSmpDr: return smp_dr_;
    case kPma: return pma_;
    case kSa: return sa_;
    default: return vendor_;
  }
}

ipc::MadMsg MadRpc::build(const MadRequest& r, uint64_t tid) const {
  ipc::MadMsg m;
  m.mad.assign(mad::kMadSize, 0);
  std::span<uint8_t> b(m.mad);
  const bool smp = r.mgmt_class == kSmpLid || r.mgmt_class == kSmpDr;
  const uint8_t cls = smp ? (r.to.directed() ? kSmpDr : kSmpLid) : r.mgmt_class;
  b[0] = mad::kBaseVersion;
  b[1] = cls;
  b[2] = cls == kSa ? mad::kSaClassVersion : 1;
  b[3] = r.method;
  put_be(b, kTidOffset, tid, 8);
  put_be(b, 16, r.attribute_id, 2);
  put_be(b, 20, r.attribute_modifier, 4);
  if (smp) put_be(b, 24, r.m_key, 8);
  if (cls == kSmpDr) {
    b[6] = 0;                                            // HopPointer
    b[7] = static_cast<uint8_t>(r.to.path.size());       // HopCount
    put_be(b, 32, 0xFFFF, 2);                            // DrSLID
    put_be(b, 34, 0xFFFF, 2);                            // DrDLID
    for (size_t i = 0; i < r.to.path.size() && i + 1 < mad::kPathSize; ++i) b[128 + 1 + i] = r.to.path[i];
  }
  if (mad::is_vendor_range2(cls)) put_be(b, 37, mad::kOpenIbOui, 3);
  const auto [at, size] = data_area(cls);
  std::copy_n(r.data.begin(), std::min(r.data.size(), size), b.begin() + static_cast<ptrdiff_t>(at));
  m.agent = agent_for(cls);
  m.lid = r.to.directed() ? 0xFFFF : r.to.lid;
  m.remote_qp = r.remote_qp != 0 ? r.remote_qp : (smp ? 0 : 1);
  m.qkey = smp ? 0 : kQp1Qkey;
  return m;
}

Result<std::optional<ipc::MadMsg>> MadRpc::await(std::optional<uint64_t> tid, TimePoint deadline) {
  if (tid) {
    for (auto it = pending_.begin(); it != pending_.end(); ++it)
      if (tid_of(it->mad) == *tid) {
        ipc::MadMsg m = std::move(*it);
        pending_.erase(it);
        return std::optional<ipc::MadMsg>(std::move(m));
      }
  }
  for (;;) {
    const TimePoint t = now();
    if (t >= deadline) return std::optional<ipc::MadMsg>();
    auto m = conn_.recv_mad(deadline - t);
    if (!m) return Err{m.error()};
    if (!*m) return std::optional<ipc::MadMsg>();
    ipc::MadMsg& got = **m;
    if (got.mad.size() < mad::kMadSize) continue;
    if (!is_response(got.mad)) {
      requests_.push_back(std::move(got));
      continue;
    }
    if (!tid || tid_of(got.mad) == *tid) return std::optional<ipc::MadMsg>(std::move(got));
    pending_.push_back(std::move(got));
  }
}

Result<MadBytes> MadRpc::call(const MadRequest& r) {
  const uint64_t tid = next_tid();
  const ipc::MadMsg req = build(r, tid);
  for (int attempt = 0; attempt <= options_.retries; ++attempt) {
    SOFTIB_TRY(conn_.send_mad(req));
    auto got = await(tid, now() + options_.timeout);
    if (!got) return Err{got.error()};
    if (*got) {
      MadBytes out{};
      std::copy_n((*got)->mad.begin(), mad::kMadSize, out.begin());
      return out;
    }
  }
  return Status(Code::kTimeout, fmt::format("{} attribute 0x{:x} to {}: timed out", r.method == 0x02 ? "Set" : "Get",
                                            r.attribute_id, r.to.to_string()));
}

Result<std::vector<Result<MadBytes>>> MadRpc::call_many(std::span<const MadRequest> requests) {
  const size_t window = std::max<size_t>(options_.window, 1);
  struct Slot {
    uint64_t tid = 0;
    int tries = 0;
    TimePoint deadline{};
    bool done = false;
  };
  std::vector<Result<MadBytes>> out(requests.size(), Status(Code::kTimeout, "not sent"));
  std::vector<Slot> slots(requests.size());
  std::unordered_map<uint64_t, size_t> by_tid;
  by_tid.reserve(window * 2);
  size_t head = 0, next = 0, in_flight = 0;
  while (head < requests.size()) {
    // Refill the window in one message.
    if (next < requests.size() && in_flight < window) {
      const size_t n = std::min(window - in_flight, requests.size() - next);
      auto tids = send_requests(requests.subspan(next, n));
      if (!tids) return Err{tids.error()};
      const TimePoint deadline = now() + options_.timeout;
      for (size_t i = 0; i < n; ++i) {
        slots[next + i].tid = (*tids)[i];
        slots[next + i].deadline = deadline;
        by_tid.emplace((*tids)[i], next + i);
      }
      next += n;
      in_flight += n;
    }
    while (head < next && slots[head].done) ++head;
    if (head >= requests.size()) break;
    // The oldest query still waiting has the earliest first deadline; a retried one's later
    // deadline only delays the check of the others.
    auto got = next_response(slots[head].deadline);
    if (!got) return Err{got.error()};
    if (*got) {
      auto it = by_tid.find(tid_of(std::span<const uint8_t>(**got)));
      if (it == by_tid.end()) continue;  // a late answer to a query already answered
      out[it->second] = **got;
      slots[it->second].done = true;
      by_tid.erase(it);
      --in_flight;
      continue;
    }
    const TimePoint t = now();
    for (size_t i = head; i < next; ++i) {
      Slot& s = slots[i];
      if (s.done || s.deadline > t) continue;
      if (s.tries < options_.retries) {
        ++s.tries;
        s.deadline = t + options_.timeout;
        if (auto r = resend(requests[i], s.tid); !r) return Err{r.error()};
        continue;
      }
      s.done = true;
      by_tid.erase(s.tid);
      --in_flight;
      const MadRequest& r = requests[i];
      out[i] = Status(Code::kTimeout, fmt::format("attribute 0x{:x} to {}: timed out", r.attribute_id, r.to.to_string()));
    }
  }
  return out;
}

Result<uint64_t> MadRpc::send_request(const MadRequest& r) {
  const uint64_t tid = next_tid();
  SOFTIB_TRY(conn_.send_mad(build(r, tid)));
  return tid;
}

Result<std::vector<uint64_t>> MadRpc::send_requests(std::span<const MadRequest> rs) {
  std::vector<uint64_t> tids;
  std::vector<ipc::MadMsg> msgs;
  tids.reserve(rs.size());
  msgs.reserve(rs.size());
  for (const MadRequest& r : rs) {
    tids.push_back(next_tid());
    msgs.push_back(build(r, tids.back()));
  }
  SOFTIB_TRY(conn_.send_mads(msgs));
  return tids;
}

Result<void> MadRpc::resend(const MadRequest& r, uint64_t tid) { return conn_.send_mad(build(r, tid)); }

Result<std::optional<MadBytes>> MadRpc::next_response(TimePoint deadline) {
  std::optional<ipc::MadMsg> got;
  if (!pending_.empty()) {
    got = std::move(pending_.front());
    pending_.erase(pending_.begin());
  } else {
    auto r = await(std::nullopt, deadline);
    if (!r) return Err{r.error()};
    got = std::move(*r);
  }
  if (!got) return std::optional<MadBytes>();
  MadBytes b{};
  std::copy_n(got->mad.begin(), mad::kMadSize, b.begin());
  return std::optional<MadBytes>(b);
}

Result<MadRpc::SaAnswer> MadRpc::sa_query(uint8_t method, uint16_t attribute_id, uint64_t component_mask,
                                          std::span<const uint8_t> record, uint64_t sm_key,
                                          uint32_t attribute_modifier) {
  if (sm_lid_ == 0) SOFTIB_TRY(refresh_port());
  if (sm_lid_ == 0) return Status(Code::kUnavailable, "no SA: the port has no SM LID (is an SM running?)");
  mad::SaMad q;
  q.header.method = static_cast<mad::Method>(method);
  q.header.attribute_id = attribute_id;
  q.header.attribute_modifier = attribute_modifier;
  const uint64_t tid = next_tid();
  q.header.transaction_id = tid;
  q.sm_key = sm_key;
  q.component_mask = component_mask;
  q.attribute_offset = mad::attribute_offset_for(record.size());
  std::copy_n(record.begin(), std::min(record.size(), q.data.size()), q.data.begin());
  ipc::MadMsg req;
  req.mad = mad::encode(q);
  req.agent = sa_;
  req.lid = sm_lid_;
  req.remote_qp = 1;
  req.qkey = kQp1Qkey;

  std::vector<mad::SaMad> segments;
  for (int attempt = 0; attempt <= options_.retries; ++attempt) {
    SOFTIB_TRY(conn_.send_mad(req));
    TimePoint deadline = now() + options_.timeout;
    segments.clear();
    bool restart = false;
    while (!restart) {
      auto got = await(tid, deadline);
      if (!got) return Err{got.error()};
      if (!*got) break;  // timed out: try again
      auto m = mad::decode<mad::SaMad>((*got)->mad);
      if (!m) continue;  // malformed: dropped
      if (!m->rmpp.active()) {
        SaAnswer a;
        a.status = m->header.status.value();
        if (a.status == 0 && method != 0x12)
          a.records.emplace_back(m->data.begin(),
                                 m->data.begin() + std::min<size_t>(m->data.size(), m->attribute_offset * 8u));
        return a;
      }
      if (m->rmpp.type != mad::RmppType::kData) continue;
      const uint32_t seg = m->rmpp.segment_number();
      if (seg == segments.size() + 1) segments.push_back(*m);
      else if (seg == 1) {
        segments.assign(1, *m);  // the sender started over
      }
      // ACK what arrived in order, opening the window to the end.
      mad::SaMad ack = *m;
      ack.header.method = mad::Method::kGetTableResp;
      ack.rmpp = {};
      ack.rmpp.version = mad::kRmppVersion;
      ack.rmpp.type = mad::RmppType::kAck;
      ack.rmpp.flags = mad::kRmppActive;
      ack.rmpp.resp_time = mad::kNoRespTime;
      ack.rmpp.data1 = static_cast<uint32_t>(segments.size());
      ack.rmpp.data2 = static_cast<uint32_t>(segments.size()) + 32;
      ack.data = {};
      ipc::MadMsg am = req;
      am.mad = mad::encode(ack);
      SOFTIB_TRY(conn_.send_mad(am));
      deadline = now() + options_.timeout;
      if (!segments.empty() && segments.back().rmpp.last()) {
        auto data = mad::sa_reassemble(segments);
        if (!data) return Status(Code::kParseError, fmt::format("SA answer: {}", data.error().to_string()));
        SaAnswer a;
        a.status = segments.front().header.status.value();
        const size_t rec = segments.front().attribute_offset * 8u;
        if (rec > 0)
          for (size_t at = 0; at + rec <= data->size(); at += rec) a.records.emplace_back(data->begin() + static_cast<ptrdiff_t>(at), data->begin() + static_cast<ptrdiff_t>(at + rec));
        return a;
      }
    }
  }
  return Status(Code::kTimeout, fmt::format("SA query of attribute 0x{:x} to Lid {}: timed out", attribute_id, sm_lid_));
}

Result<uint32_t> MadRpc::serve(uint8_t mgmt_class, uint8_t class_version, std::initializer_list<uint8_t> methods,
                               uint32_t oui) {
  ipc::RegisterMsg r;
  r.mgmt_class = mgmt_class;
  r.class_version = class_version;
  r.oui = oui;
  for (uint8_t m : methods) r.method_mask[m / 8] |= static_cast<uint8_t>(1u << (m % 8));
  // The class's request-only agent gives way to the serving one.
  if (mgmt_class == mad::kOpenIbPingClass) {
    SOFTIB_TRY(conn_.unregister_agent(vendor_));
    auto a = conn_.register_agent(r);
    if (!a) return Err{a.error()};
    vendor_ = *a;
    return *a;
  }
  return conn_.register_agent(r);
}

Result<std::optional<ipc::MadMsg>> MadRpc::next_request(std::optional<Duration> timeout) {
  if (!requests_.empty()) {
    ipc::MadMsg m = std::move(requests_.front());
    requests_.erase(requests_.begin());
    return std::optional<ipc::MadMsg>(std::move(m));
  }
  for (;;) {
    auto m = conn_.recv_mad(timeout);
    if (!m) return Err{m.error()};
    if (!*m) return std::optional<ipc::MadMsg>();
    if ((*m)->mad.size() >= mad::kMadSize && !is_response((*m)->mad)) return m;
  }
}

Result<void> MadRpc::respond(const ipc::MadMsg& to, const MadBytes& response) {
  ipc::MadMsg m = to;
  m.mad.assign(response.begin(), response.end());
  m.mad[3] = static_cast<uint8_t>(m.mad[3] | 0x80);
  return conn_.send_mad(m);
}

Result<Destination> parse_destination(std::string_view text, bool directed, bool guid,
                                      const std::vector<ipc::NodeEntry>* nodes, MadRpc* rpc) {
  auto number = [](std::string_view s, uint64_t& v) {
    int base = 10;
    if (s.starts_with("0x") || s.starts_with("0X")) {
      s.remove_prefix(2);
      base = 16;
    }
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
    return ec == std::errc() && p == s.data() + s.size() && !s.empty();
  };
  if (directed) {
    // libibmad's str2drpath: "0,1,3" — the first number names the local port and is not a
    // hop; the rest are the egress ports. "0" alone is the local node.
    std::vector<uint8_t> path;
    for (size_t at = 0, i = 0; at <= text.size(); ++i) {
      const size_t comma = std::min(text.find(',', at), text.size());
      uint64_t v = 0;
      if (!number(text.substr(at, comma - at), v) || v > 254)
        return Status(Code::kInvalidArgument, fmt::format("bad DR path '{}'", text));
      if (i > 0) path.push_back(static_cast<uint8_t>(v));
      at = comma + 1;
    }
    return Destination::route(std::move(path));
  }
  uint64_t v = 0;
  if (guid) {
    // strtoull(s, 0, 0) as infiniband-diags read a GUID: 0x for hex, else decimal.
    if (!number(text, v)) return Status(Code::kInvalidArgument, fmt::format("bad GUID '{}'", text));
    if (!rpc) return Status(Code::kInvalidArgument, "resolving a GUID needs the SA");
    mad::PathRecord pr;
    pr.dgid = Gid(0xfe80000000000000ull, Guid(v));
    pr.numb_path = 1;
    auto a = rpc->sa_query(0x01, 0x0035, mad::component_mask<mad::PathRecord>({"DGID", "NumbPath"}),
                           mad::encode(pr));
    if (!a) return Err{a.error()};
    if (a->status != 0 || a->records.empty())
      return Status(Code::kNotFound, fmt::format("can't resolve destination port {}", text));
    return Destination::to_lid(static_cast<uint16_t>(get_be(a->records[0], 40, 2)));
  }
  if (number(text, v) && v > 0 && v < 0xC000) return Destination::to_lid(static_cast<uint16_t>(v));
  if (nodes && rpc) {
    // softib also takes a node's name where the real tools take a LID: its first port's LID.
    if (auto n = find_node(*nodes, text); n) {
      auto p = rpc->connection().query_port(n->index, n->type == 2 ? 0 : 1);
      if (!p) return Err{p.error()};
      auto pi = mad::decode<mad::PortInfo>(p->port_info);
      if (pi && pi->lid.value() != 0) return Destination::to_lid(pi->lid.value());
      return Status(Code::kUnavailable, fmt::format("{} has no LID yet (is an SM running?)", text));
    }
  }
  return Status(Code::kInvalidArgument, fmt::format("can't resolve destination port {}", text));
}

}  // namespace softib::tools
