#include "mad/dr_route.hpp"

#include <charconv>

#include <fmt/format.h>

namespace softib::mad {

std::optional<DrPath> DrPath::parse(std::string_view text) {
  DrPath path;
  size_t items = 0;
  size_t at = 0;
  while (true) {
    const size_t comma = text.find(',', at);
    const std::string_view item = text.substr(at, comma == std::string_view::npos ? text.npos : comma - at);
    unsigned port = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), port);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || port > 255)
      return std::nullopt;
    if (items > kMaxHopCount) return std::nullopt;
    path.ports_[items++] = static_cast<uint8_t>(port);
    if (comma == std::string_view::npos) break;
    at = comma + 1;
  }
  path.hops_ = static_cast<uint8_t>(items - 1);
  return path;
}

DrPath DrPath::from_ports(std::initializer_list<uint8_t> ports) {
  SOFTIB_ASSERT(ports.size() <= kMaxHopCount);
  DrPath path;
  for (uint8_t p : ports) path = path.then(p);
  return path;
}

DrPath DrPath::then(uint8_t port) const {
  SOFTIB_ASSERT(hops_ < kMaxHopCount);
  DrPath next = *this;
  next.ports_[++next.hops_] = port;
  return next;
}

std::string DrPath::to_string() const {
  std::string s = fmt::format("{}", ports_[0]);
  for (size_t i = 1; i <= hops_; ++i) s += fmt::format(",{}", ports_[i]);
  return s;
}

DrSmp make_dr_request(const DrPath& path, Method method, uint16_t attribute_id,
                      uint32_t attribute_modifier, uint64_t transaction_id, uint64_t m_key,
                      Lid dr_slid, Lid dr_dlid) {
  DrSmp smp;
  smp.method = method;
  smp.direction = false;
  smp.hop_pointer = 0;
  smp.hop_count = path.hop_count();
  smp.transaction_id = transaction_id;
  smp.attribute_id = attribute_id;
  smp.attribute_modifier = attribute_modifier;
  smp.m_key = m_key;
  smp.dr_slid = dr_slid;
  smp.dr_dlid = dr_dlid;
  smp.initial_path = path.ports();
  return smp;
}

DrSmp make_dr_response(const DrSmp& request, MadStatus status) {
  DrSmp r = request;
  r.direction = true;
  r.method = is_response(request.method) ? request.method : response_to(request.method);
  r.status = status;
  return r;
}

std::string_view to_string(DrAction a) {
  switch (a) {
    case DrAction::kDiscard: return "Discard";
    case DrAction::kForward: return "Forward";
    case DrAction::kDeliver: return "Deliver";
    case DrAction::kLidRoute: return "LidRoute";
  }
  return "?";
}

namespace {

constexpr DrDecision kDiscard{DrAction::kDiscard, 0};

bool is_port(const DrNode& node, uint8_t port) { return port >= 1 && port <= node.num_ports; }

DrDecision forward(uint8_t port) { return DrDecision{DrAction::kForward, port}; }

}  // namespace

DrDecision dr_send(DrSmp& smp) {
  const unsigned hp = smp.hop_pointer;
  const unsigned hc = smp.hop_count;
  if (hc > kMaxHopCount) return kDiscard;  // C14-6
  if (!smp.direction) {
    if (hp != 0) return kDiscard;  // only a new request is originated here
    smp.hop_pointer = 1;
    if (hc != 0) return forward(smp.initial_path[1]);  // C14-9:1
    // C14-9:3 with no hops: the request is for this node, or LID routed from here on.
    return DrDecision{smp.dr_dlid.is_permissive() ? DrAction::kDeliver : DrAction::kLidRoute, 0};
  }
  if (hp != hc + 1) return kDiscard;  // a response leaves from where the request arrived
  // A request that ended with a LID-routed part is answered by LID back to the node where
  // the directed part ended, which applies C14-13:1 on receipt.
  if (!smp.dr_dlid.is_permissive()) return DrDecision{DrAction::kLidRoute, 0};
  if (hc != 0) {  // C14-13:1
    smp.hop_pointer = static_cast<uint8_t>(hc);
    return forward(smp.return_path[hc]);
  }
  smp.hop_pointer = 0;  // C14-13:3 with no hops: back to the SM on this node
  return DrDecision{smp.dr_slid.is_permissive() ? DrAction::kDeliver : DrAction::kLidRoute, 0};
}

DrDecision dr_receive(DrSmp& smp, const DrNode& node, uint8_t in_port) {
  const unsigned hp = smp.hop_pointer;
  const unsigned hc = smp.hop_count;
  if (hc > kMaxHopCount) return kDiscard;  // C14-6
  if (!smp.direction) {
    if (hc != 0 && hp == 0) return kDiscard;  // C14-9:1: the sender must have advanced it
    if (hp != 0 && hp < hc) {                 // C14-9:2: an intermediate hop
      if (!node.is_switch) return kDiscard;
      smp.return_path[hp] = in_port;
      const uint8_t out = smp.initial_path[hp + 1];
      if (!is_port(node, out)) return kDiscard;
      smp.hop_pointer = static_cast<uint8_t>(hp + 1);
      return forward(out);
    }
    if (hp == hc) {  // C14-9:3: the end of the directed part
      if (hc != 0) smp.return_path[hp] = in_port;
      smp.hop_pointer = static_cast<uint8_t>(hp + 1);
      if (smp.dr_dlid.is_permissive()) return DrDecision{DrAction::kDeliver, 0};
      return node.is_switch ? DrDecision{DrAction::kLidRoute, 0} : kDiscard;
    }
    if (hp == hc + 1) return DrDecision{DrAction::kDeliver, 0};  // C14-9:4
    return kDiscard;                                              // C14-9:5
  }
  if (hc != 0 && hp == hc + 1) {  // C14-13:1: back at the end of the directed part
    if (!node.is_switch) return kDiscard;
    const uint8_t out = smp.return_path[hc];
    if (!is_port(node, out)) return kDiscard;
    smp.hop_pointer = static_cast<uint8_t>(hc);
    return forward(out);
  }
  if (hp >= 2 && hp <= hc) {  // C14-13:2: an intermediate hop
    if (!node.is_switch) return kDiscard;
    const uint8_t out = smp.return_path[hp - 1];
    if (!is_port(node, out)) return kDiscard;
    smp.hop_pointer = static_cast<uint8_t>(hp - 1);
    return forward(out);
  }
  if (hp == 1) {  // C14-13:3: the start of the directed part
    smp.hop_pointer = 0;
    if (smp.dr_slid.is_permissive()) return DrDecision{DrAction::kDeliver, 0};
    return node.is_switch ? DrDecision{DrAction::kLidRoute, 0} : kDiscard;
  }
  if (hp == 0) return DrDecision{DrAction::kDeliver, 0};  // C14-13:4
  return kDiscard;                                         // C14-13:5
}

}  // namespace softib::mad
