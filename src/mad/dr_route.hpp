// Directed routes (IBA 14.2.2) as pure functions: building the SMP an SM sends along a path,
// the response an SMA returns, and the rules every node's SMI applies to a directed-route
// SMP as it leaves or arrives (conformance statements C14-9 for outbound SMPs, C14-13 for
// returning ones). They hold no fabric state: the caller says what kind of node it is and
// on which port the SMP came in, and gets back what to do with it.
//
// Hop numbering: InitialPath[i] is the port the SMP leaves by at hop i (1..HopCount);
// InitialPath[0] is unused (smpquery's "-D 0,1,3" writes the leading 0 there). On the way
// out a node at hop i records its ingress port in ReturnPath[i]; on the way back the SMP
// leaves hop i by ReturnPath[i].
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/ids.hpp"
#include "mad/dr_smp.hpp"

namespace softib::mad {

// A directed route as smpquery and ibnetdiscover write it: "0,1,3" means InitialPath[0] = 0,
// then leave the first node by port 1 and the second by port 3 (HopCount 2).
class DrPath {
 public:
  DrPath() = default;
  // "0" or "0,1,3,..."; nullopt for empty items, non-numbers, ports > 255 or more than
  // kMaxHopCount hops.
  static std::optional<DrPath> parse(std::string_view text);
  // A path from its egress ports (hop 1 first). REQUIRES: ports.size() <= kMaxHopCount
  static DrPath from_ports(std::initializer_list<uint8_t> ports);

  uint8_t hop_count() const { return hops_; }
  // InitialPath[i] for i in 0..hop_count().
  uint8_t port(size_t i) const { return ports_[i]; }
  const std::array<uint8_t, kPathSize>& ports() const { return ports_; }
  // The path one hop longer. REQUIRES: hop_count() < kMaxHopCount
  DrPath then(uint8_t port) const;

  std::string to_string() const;  // "0,1,3"

  friend bool operator==(const DrPath&, const DrPath&) = default;

 private:
  std::array<uint8_t, kPathSize> ports_{};
  uint8_t hops_ = 0;
};

// An outbound SMP that travels `path` (IBA 14.2.2.1): D = 0, HopPointer 0, HopCount and
// InitialPath from the path, DrSLID/DrDLID permissive unless given.
DrSmp make_dr_request(const DrPath& path, Method method, uint16_t attribute_id,
                      uint32_t attribute_modifier, uint64_t transaction_id, uint64_t m_key = 0,
                      Lid dr_slid = Lid::permissive(), Lid dr_dlid = Lid::permissive());

template <HasLayout A>
DrSmp make_dr_request(const DrPath& path, Method method, const A& attribute,
                      uint32_t attribute_modifier, uint64_t transaction_id, uint64_t m_key = 0) {
  static_assert(wire_size<A> <= kSmpDataSize);
  DrSmp smp = make_dr_request(path, method, attribute_id_of<A>(), attribute_modifier,
                              transaction_id, m_key);
  encode(attribute, wire::MutByteSpan(smp.data));
  return smp;
}

// The response an SMA returns for `request` (IBA 14.2.2.1): the same SMP turned round (D =
// 1, GetResp for Get/Set), status set, HopPointer left where the request arrived.
DrSmp make_dr_response(const DrSmp& request, MadStatus status = {});

// True for an SMP on its way back to the requester (D = 1).
constexpr bool is_returning(const DrSmp& smp) { return smp.direction; }

// The node applying the rules.
struct DrNode {
  bool is_switch = false;
  uint8_t num_ports = 1;  // physical ports 1..num_ports
};

enum class DrAction : uint8_t {
  kDiscard,   // the SMP breaks a rule and is dropped silently
  kForward,   // send it out of `port` (the directed part of the path continues)
  kDeliver,   // give it to this node's SMA (outbound) or to the SM here (returning)
  kLidRoute,  // the directed part ends here: forward by LID to DrDLID (outbound) or DrSLID
};

std::string_view to_string(DrAction a);  // "Discard", "Forward", "Deliver", "LidRoute"

struct DrDecision {
  DrAction action = DrAction::kDiscard;
  uint8_t port = 0;  // kForward only
  friend bool operator==(const DrDecision&, const DrDecision&) = default;
};

// The originator's SMI putting a new SMP on the wire: the SM sending a request (HopPointer
// 0, C14-9:1 and C14-9:3) or an SMA sending a response (HopPointer HopCount + 1, C14-13:1
// and C14-13:3; when the request's last part was LID routed, the response goes back by LID
// and the switch that ended the directed part applies C14-13:1). Advances HopPointer as the
// rules say. kDeliver means the path has no hops and the SMP stays on this node.
DrDecision dr_send(DrSmp& smp);

// A node's SMI receiving `smp` on `in_port` (C14-9:1..5 outbound, C14-13:1..5 returning):
// records ReturnPath on the way out, advances HopPointer for what it decides, and checks the
// next egress port exists.
DrDecision dr_receive(DrSmp& smp, const DrNode& node, uint8_t in_port);

}  // namespace softib::mad
