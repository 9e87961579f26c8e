// Notice, IBA 13.4.8.2 (80 bytes): a trap or other notice (SA Report, GSI classes; a Trap
// SMP carries the 64-byte SmpNotice below). The generic header says who raised what;
// DataDetails holds trap-specific data, whose layouts are trap_gid_details.hpp (traps
// 64/65), trap128_details.hpp and trap144_details.hpp.
//
//   0               1               2               3
//   0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7 0 1 2 3 4 5 6 7
//  +-+-------------+-----------------------------------------------+
//  |G|    Type     |            ProducerType / VendorID            |  0
//  +-+-------------+---------------+-------------------------------+
//  |     TrapNumber / DeviceID     |           IssuerLID           |  4
//  +-+-----------------------------+-------------------------------+
//  |T|         NoticeCount         |                               |  8
//  +-+-----------------------------+                               +
//  |                    DataDetails (54 bytes)                     | 10..63
//  +---------------------------------------------------------------+
//  |                      IssuerGID (16 bytes)                     | 64..79
//  +---------------------------------------------------------------+
// G: IsGeneric; T: NoticeToggle.
#pragma once

#include <array>
#include <cstdint>

#include "base/gid.hpp"
#include "base/ids.hpp"
#include "mad/attribute_id.hpp"
#include "mad/codec.hpp"
#include "mad/row.hpp"

namespace softib::mad {

// Notice Type, IBA 13.4.8.2.
enum class NoticeType : uint8_t {
  kFatal = 0,
  kUrgent = 1,
  kSecurity = 2,
  kSubnetManagement = 3,
  kInfo = 4,
  kEmpty = 0x7F,
};

struct Notice {
  static constexpr size_t kDataDetailsSize = 54;
  bool is_generic = true;
  uint8_t type = 0;                       // 7 bits (NoticeType)
  uint32_t producer_type_or_vendor_id = 0;  // 24 bits: a NodeType when generic
  uint16_t trap_number_or_device_id = 0;
  Lid issuer_lid;
  bool notice_toggle = false;
  uint16_t notice_count = 0;  // 15 bits
  std::array<uint8_t, kDataDetailsSize> data_details{};
  Gid issuer_gid;

  // The trap-specific data as layout D (Trap128Details, ...).
  template <class D>
  wire::Parsed<D> details() const {
    return decode<D>(data_details);
  }
  template <class D>
  void set_details(const D& d) {
    static_assert(wire_size<D> == kDataDetailsSize);
    encode(d, wire::MutByteSpan(data_details));
  }

  friend bool operator==(const Notice&, const Notice&) = default;
};

template <>
struct Layout<Notice> {
  using T = Notice;
  static constexpr std::string_view kName = "Notice";
  static constexpr SmpAttr kAttributeId = SmpAttr::kNotice;
  static constexpr std::array kRows{
      row("IsGeneric", 0, 1, "NoticeIsGeneric", Printer::kUint, member<&T::is_generic>()),
      row("Type", 1, 7, "NoticeType", Printer::kUint, member<&T::type>()),
      row("ProducerType/VendorID", 8, 24, "NoticeProducerType", Printer::kNodeType,
          member<&T::producer_type_or_vendor_id>()),
      row("TrapNumber/DeviceID", 32, 16, "NoticeTrapNumber", Printer::kUint,
          member<&T::trap_number_or_device_id>()),
      row("IssuerLID", 48, 16, "NoticeIssuerLID", Printer::kUint, member<&T::issuer_lid>()),
      row("NoticeToggle", 64, 1, "NoticeToggle", Printer::kUint, member<&T::notice_toggle>()),
      row("NoticeCount", 65, 15, "NoticeCount", Printer::kUint, member<&T::notice_count>()),
      row("DataDetails", 80, 432, "NoticeDataDetails", Printer::kArray, member<&T::data_details>()),
      row("IssuerGID", 512, 128, "IssuerGID", Printer::kArray, member<&T::issuer_gid>()),
  };
};
static_assert(wire_size<Notice> == 80);

// Where DataDetails starts in a Notice, for layouts of the details.
inline constexpr uint32_t kNoticeDataDetailsBit = 80;

// The Notice as a Trap SMP carries it (IBA 14.2.5.1): the 64 bytes of SMP data hold every
// field but IssuerGID, which the SM takes from the port that sent the trap. Its table is the
// first eight rows of Notice's.
struct SmpNotice {
  Notice notice;  // issuer_gid is not on the wire

  friend bool operator==(const SmpNotice&, const SmpNotice&) = default;
};

namespace detail {
inline constexpr auto kSmpNoticeRows = take<8>(Layout<Notice>::kRows);
}  // namespace detail

template <>
struct Layout<SmpNotice> {
  static constexpr std::string_view kName = "SMP Notice";
  static constexpr SmpAttr kAttributeId = SmpAttr::kNotice;
  static constexpr std::array kRows = embed<&SmpNotice::notice, detail::kSmpNoticeRows>(0);
};
static_assert(wire_size<SmpNotice> == 64);

}  // namespace softib::mad
