// Every layout the mad module knows, type-erased (mad/codec.hpp LayoutInfo), for code that
// meets a MAD it has not decoded yet: tools that dump any MAD, the fuzzer, cross-checks.
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include "mad/codec.hpp"
#include "mad/mgmt_class.hpp"
#include "wire/bytes.hpp"

namespace softib::mad {

struct AttributeEntry {
  MgmtClass mgmt_class;  // SubnLid for SMP attributes (directed-route SMPs carry the same)
  uint16_t attribute_id;
  LayoutInfo layout;
};

// The attributes carried in SMP data (SubnLid), SA data (SubnAdm) and PMA data (PerfMgt).
std::span<const AttributeEntry> attribute_layouts();

// Whole MADs and their parts: MadHeader, Smp, DrSmp, SaMad, PmaMad, VendorMad, RmppHeader.
std::span<const LayoutInfo> mad_layouts();

// Layouts of sub-structures: the Notice DataDetails of traps 64/65, 128 and 144.
std::span<const LayoutInfo> detail_layouts();

// The attribute layout for an attribute of class c, or nullptr.
const LayoutInfo* find_attribute(MgmtClass c, uint16_t attribute_id);

// The layout of a whole MAD of class c: Smp, DrSmp, SaMad, PmaMad, VendorMad (range 2), or
// the bare common header for the others.
const LayoutInfo& mad_layout_for(MgmtClass c);

// A dump of a whole MAD: its class layout's fields, then the attribute in its data when the
// class and attribute are known (the first record of an SA response). "" when `mad` does not
// decode.
std::string dump_mad(wire::ByteSpan mad);

}  // namespace softib::mad
