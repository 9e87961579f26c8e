// PathRecord, IBA 15.2.5.16 (64 bytes): everything needed to reach a destination. The
// ServiceID is one 64-bit value but two SA components (IBA 1.2 kept the bits of the two
// reserved words it replaced), so it is two rows: ServiceID.MSB and ServiceID.LSB.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------------------------------------------------------+
//  |                       ServiceID (8 bytes)                     |  0
//  +---------------------------------------------------------------+
//  |                         DGID (16 bytes)                       |  8
//  +---------------------------------------------------------------+
//  |                         SGID (16 bytes)                       | 24
//  +-------------------------------+-------------------------------+
//  |             DLID              |             SLID              | 40
//  +-+-----+-----------------------+---------------+---------------+
//  |R|Resv |              FlowLabel                |   HopLimit    | 44
//  +-+-----+-------+-+-------------+---------------+---------------+
//  |    TClass     |V|  NumbPath   |             P_Key             | 48
//  +---------------+-+-------------+-------+---+-----------+-------+
//  |       QoSClass        |  SL   |MS |    MTU    |RS |   Rate    | 52
//  +---+-----------+-------+-------+---+-----------+---+-----------+
//  |PLS|PacketLife |  Preference   |       Reserved (6 bytes)      | 56
//  +---+-----------+---------------+-------------------------------+
// R: RawTraffic; V: Reversible; MS/RS/PLS: MTU/Rate/PacketLifeTime selectors.
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

struct PathRecord {
  uint64_t service_id = 0;
  Gid dgid;
  Gid sgid;
  Lid dlid;
  Lid slid;
  bool raw_traffic = false;
  uint32_t flow_label = 0;  // 20 bits
  uint8_t hop_limit = 0;
  uint8_t tclass = 0;
  bool reversible = false;
  uint8_t numb_path = 0;  // 7 bits
  PKey pkey;
  uint16_t qos_class = 0;  // 12 bits
  uint8_t sl = 0;          // 4 bits
  uint8_t mtu_selector = 0;  // 2 bits
  uint8_t mtu = 0;           // 6 bits, MTU code
  uint8_t rate_selector = 0;
  uint8_t rate = 0;  // 6 bits
  uint8_t packet_life_time_selector = 0;
  uint8_t packet_life_time = 0;  // 6 bits
  uint8_t preference = 0;

  friend bool operator==(const PathRecord&, const PathRecord&) = default;
};

template <>
struct Layout<PathRecord> {
  using T = PathRecord;
  using P = Printer;
  static constexpr std::string_view kName = "PathRecord";
  static constexpr SaAttr kAttributeId = SaAttr::kPathRecord;
  static constexpr std::array kRows{
      row("ServiceID.MSB", 0, 32, "ServiceID.MSB", P::kHex, bits<&T::service_id, 32, 32>()),
      row("ServiceID.LSB", 32, 32, "ServiceID.LSB", P::kHex, bits<&T::service_id, 0, 32>()),
      row("DGID", 64, 128, "PathRecDGid", P::kArray, member<&T::dgid>()),
      row("SGID", 192, 128, "PathRecSGid", P::kArray, member<&T::sgid>()),
      row("DLID", 320, 16, "PathRecDLid", P::kUint, member<&T::dlid>()),
      row("SLID", 336, 16, "PathRecSLid", P::kUint, member<&T::slid>()),
      row("RawTraffic", 352, 1, "RawTraffic", P::kUint, member<&T::raw_traffic>()),
      reserved<T>(353, 3),
      row("FlowLabel", 356, 20, "FlowLabel", P::kHex, member<&T::flow_label>()),
      row("HopLimit", 376, 8, "HopLimit", P::kUint, member<&T::hop_limit>()),
      row("TClass", 384, 8, "TClass", P::kUint, member<&T::tclass>()),
      row("Reversible", 392, 1, "Reversible", P::kUint, member<&T::reversible>()),
      row("NumbPath", 393, 7, "PathRecNumPath", P::kUint, member<&T::numb_path>()),
      row("P_Key", 400, 16, "P_Key", P::kHex, member<&T::pkey>()),
      row("QoSClass", 416, 12, "QoSClass", P::kUint, member<&T::qos_class>()),
      row("SL", 428, 4, "PathRecSL", P::kUint, member<&T::sl>()),
      row("MTUSelector", 432, 2, "MTUSelector", P::kUint, member<&T::mtu_selector>()),
      row("MTU", 434, 6, "MTU", P::kMtu, member<&T::mtu>()),
      row("RateSelector", 440, 2, "RateSelector", P::kUint, member<&T::rate_selector>()),
      row("Rate", 442, 6, "Rate", P::kUint, member<&T::rate>()),
      row("PacketLifeTimeSelector", 448, 2, "PacketLifeTimeSelector", P::kUint,
          member<&T::packet_life_time_selector>()),
      row("PacketLifeTime", 450, 6, "PacketLifeTime", P::kUint, member<&T::packet_life_time>()),
      row("Preference", 456, 8, "Preference", P::kUint, member<&T::preference>()),
      reserved<T>(464, 48),
  };
};
static_assert(wire_size<PathRecord> == 64);

}  // namespace softib::mad
