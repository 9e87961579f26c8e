// Printer: how one attribute field is shown in a dump. The set and the spellings model
// libibmad's dumpers (mad_dump_uint, mad_dump_hex, mad_dump_linkwidth, mad_dump_portstate,
// ...), because softib's tools must print what smpquery, perfquery and saquery print. The
// attribute tables (mad/row.hpp) name a Printer per field; the engine (mad/codec.hpp) calls
// format_integer / format_bytes with the field's width.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "wire/bytes.hpp"

namespace softib::mad {

enum class Printer : uint8_t {
  kNone,               // reserved: never printed
  kUint,               // decimal
  kHex,                // 0x + two digits per byte of the field (a 20-bit field prints 6 digits)
  kArray,              // bytes as hex pairs, no prefix (GIDs, table blocks)
  kString,             // 'text' up to the first NUL, at most (bytes - 1) characters in all
  kNodeType,           // Channel Adapter / Switch / Router (IBA 14.2.5.3)
  kLinkWidth,          // LinkWidthActive: one width
  kLinkWidthSupported, // a set of widths, with " (IBA extension)" for non-1.0 sets
  kLinkWidthEnabled,   // a set of widths
  kLinkSpeed,          // LinkSpeedActive: one speed
  kLinkSpeedSupported, // a set of speeds, with " (IBA extension)"
  kLinkSpeedEnabled,   // same rules as supported
  kLinkSpeedExt,       // LinkSpeedExtActive
  kLinkSpeedExtSupported,
  kLinkSpeedExtEnabled,  // 30 means "disabled"
  kPortState,          // NoChange, Down, Initialize, Armed, Active
  kPhysPortState,      // Sleep, Polling, Disabled, ..., LinkUp
  kLinkDownDefState,   // NoChange, Sleep, Polling
  kMtu,                // 256 .. 4096
  kVlCap,              // VL0 .. VL0-14
  kOperVls,            // as kVlCap, 0 = "No change"
  kPortCapMask,        // 0x... then one tab-indented line per named bit (IBA 14.2.5.6)
  kPortCapMask2,
};

// The text of an integer field `width_bits` wide holding `v`, exactly as libibmad prints it.
// REQUIRES: printer is not kNone, kArray or kString.
std::string format_integer(Printer printer, uint32_t width_bits, uint64_t v);

// The text of a byte field. REQUIRES: printer is kArray or kString.
std::string format_bytes(Printer printer, wire::ByteSpan bytes);

// One dump line as libibmad's mad_dump_field writes it: the label, a colon, dots up to
// column 33, the value and a newline ("LinkState:......................Active\n").
void append_dump_line(std::string& out, std::string_view label, std::string_view value);

}  // namespace softib::mad
