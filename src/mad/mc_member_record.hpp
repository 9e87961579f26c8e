// MCMemberRecord, IBA 15.2.5.17 (52 bytes; 56 padded): a port's membership of a multicast
// group, used to create, join and leave groups.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                         MGID (16 bytes)                       |  0
//  +---------------------------------------------------------------+
//  |                       PortGID (16 bytes)                      | 16
//  +---------------------------------------------------------------+
//  |                             Q_Key                             | 32
//  +-------------------------------+---+-----------+---------------+
//  |             MLID              |MS |    MTU    |    TClass     | 36
//  +-------------------------------+---+-----------+---+-----------+
//  |             P_Key             |RS |   Rate    |PLS|PacketLife | 40
//  +-------+-----------------------+---+-----------+---+-----------+
//  |  SL   |               FlowLabel               |   HopLimit    | 44
//  +-------+-------+-+-------------+---------------+---------------+
//  | Scope |JoinSt.|P|             Reserved (23 bits)              | 48
//  +-------+-------+-+---------------------------------------------+
// MS/RS/PLS: MTU/Rate/PacketLifeTime selectors; P: ProxyJoin.
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct MCMemberRecord {
  Gid mgid;
  Gid port_gid;
  QKey q_key;
  Lid mlid;
  uint8_t mtu_selector = 0;  // 2 bits
  uint8_t mtu = 0;           // 6 bits
  uint8_t tclass = 0;
  PKey pkey;
  uint8_t rate_selector = 0;
  uint8_t rate = 0;
  uint8_t packet_life_time_selector = 0;
  uint8_t packet_life_time = 0;
  uint8_t sl = 0;           // 4 bits
  uint32_t flow_label = 0;  // 20 bits
  uint8_t hop_limit = 0;
  uint8_t scope = 0;       // 4 bits
  uint8_t join_state = 0;  // 4 bits: FullMember, NonMember, SendOnlyNonMember, SendOnlyFullMember
  bool proxy_join = false;

  friend bool operator==(const MCMemberRecord&, const MCMemberRecord&) = default;
};

template <>
struct Layout<MCMemberRecord> {
  using T = MCMemberRecord;
  using P = Printer;
  static constexpr std::string_view kName = "MCMemberRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kMCMemberRecord;
  static constexpr std::array kRows{
      row("MGID", 0, 128, "McastMemMGid", P::kArray, member<&T::mgid>()),
      row("PortGID", 128, 128, "McastMemPortGid", P::kArray, member<&T::port_gid>()),
      row("Q_Key", 256, 32, "McastMemQkey", P::kHex, member<&T::q_key>()),
      row("MLID", 288, 16, "McastMemMLid", P::kHex, member<&T::mlid>()),
      row("MTUSelector", 304, 2, "MTUSelector", P::kUint, member<&T::mtu_selector>()),
      row("MTU", 306, 6, "McastMemMTU", P::kUint, member<&T::mtu>()),
      row("TClass", 312, 8, "McastMemTClass", P::kUint, member<&T::tclass>()),
      row("P_Key", 320, 16, "McastMemPkey", P::kUint, member<&T::pkey>()),
      row("RateSelector", 336, 2, "RateSelector", P::kUint, member<&T::rate_selector>()),
      row("Rate", 338, 6, "McastMemRate", P::kUint, member<&T::rate>()),
      row("PacketLifeTimeSelector", 344, 2, "PacketLifeTimeSelector", P::kUint,
          member<&T::packet_life_time_selector>()),
      row("PacketLifeTime", 346, 6, "PacketLifeTime", P::kUint, member<&T::packet_life_time>()),
      row("SL", 352, 4, "McastMemSL", P::kUint, member<&T::sl>()),
      row("FlowLabel", 356, 20, "McastMemFlowLbl", P::kUint, member<&T::flow_label>()),
      row("HopLimit", 376, 8, "HopLimit", P::kUint, member<&T::hop_limit>()),
      row("Scope", 384, 4, "Scope", P::kUint, member<&T::scope>()),
      row("JoinState", 388, 4, "McastMemJoinState", P::kUint, member<&T::join_state>()),
      row("ProxyJoin", 392, 1, "McastMemProxyJoin", P::kUint, member<&T::proxy_join>()),
      reserved<T>(393, 23),
  };
};
static_assert(wire_size<MCMemberRecord> == 52);

}  // namespace softib::mad
