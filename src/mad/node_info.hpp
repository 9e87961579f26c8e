// NodeInfo, IBA 14.2.5.3 (40 bytes): what kind of node answers and its GUIDs.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +---------------+---------------+---------------+---------------+
//  |  BaseVersion  | ClassVersion  |   NodeType    |   NumPorts    |  0
//  +---------------+---------------+---------------+---------------+
//  |                   SystemImageGUID (8 bytes)                   |  4
//  +---------------------------------------------------------------+
//  |                       NodeGUID (8 bytes)                      | 12
//  +---------------------------------------------------------------+
//  |                       PortGUID (8 bytes)                      | 20
//  +-------------------------------+-------------------------------+
//  |         PartitionCap          |           DeviceID            | 28
//  +-------------------------------+-------------------------------+
//  |                           Revision                            | 32
//  +---------------+-----------------------------------------------+
//  | LocalPortNum  |                   VendorID                    | 36
//  +---------------+-----------------------------------------------+
#pragma once

#include <array>
#include <cstdint>

#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

// IBA 14.2.5.3 NodeType (libibmad prints 4, RNIC, as "?(4)?" like any unknown value).
enum class NodeType : uint8_t { kChannelAdapter = 1, kSwitch = 2, kRouter = 3 };

struct NodeInfo {
  uint8_t base_version = 1;
  uint8_t class_version = 1;
  NodeType node_type = NodeType::kChannelAdapter;
  uint8_t num_ports = 1;
  Guid system_image_guid;
  Guid node_guid;
  Guid port_guid;
  uint16_t partition_cap = 0;
  uint16_t device_id = 0;
  uint32_t revision = 0;
  uint8_t local_port_num = 0;
  uint32_t vendor_id = 0;  // 24 bits

  friend bool operator==(const NodeInfo&, const NodeInfo&) = default;
};

template <>
struct Layout<NodeInfo> {
  using T = NodeInfo;
  static constexpr std::string_view kName = "NodeInfo";
  static constexpr SmpAttr kAttributeId = SmpAttr::kNodeInfo;
  static constexpr std::array kRows{
      row("BaseVersion", 0, 8, "BaseVers", Printer::kUint, member<&T::base_version>()),
      row("ClassVersion", 8, 8, "ClassVers", Printer::kUint, member<&T::class_version>()),
      row("NodeType", 16, 8, "NodeType", Printer::kNodeType, member<&T::node_type>()),
      row("NumPorts", 24, 8, "NumPorts", Printer::kUint, member<&T::num_ports>()),
      row("SystemImageGUID", 32, 64, "SystemGuid", Printer::kHex, member<&T::system_image_guid>()),
      row("NodeGUID", 96, 64, "Guid", Printer::kHex, member<&T::node_guid>()),
      row("PortGUID", 160, 64, "PortGuid", Printer::kHex, member<&T::port_guid>()),
      row("PartitionCap", 224, 16, "PartCap", Printer::kUint, member<&T::partition_cap>()),
      row("DeviceID", 240, 16, "DevId", Printer::kHex, member<&T::device_id>()),
      row("Revision", 256, 32, "Revision", Printer::kHex, member<&T::revision>()),
      row("LocalPortNum", 288, 8, "LocalPort", Printer::kUint, member<&T::local_port_num>()),
      row("VendorID", 296, 24, "VendorId", Printer::kHex, member<&T::vendor_id>()),
  };
};
static_assert(wire_size<NodeInfo> == 40);

}  // namespace softib::mad
