// TransportHeaders: the typed transport headers of one packet, BTH and the extension headers
// its opcode carries. The builder takes one (plus a payload) and the view hands one back, so
// build and parse are each other's inverse on this type.
#pragma once

#include <optional>

#include "packet/header_set.hpp"
#include "packet/opcode.hpp"
#include "wire/aeth.hpp"
#include "wire/atomic_ack_eth.hpp"
#include "wire/atomic_eth.hpp"
#include "wire/bth.hpp"
#include "wire/deth.hpp"
#include "wire/feth.hpp"
#include "wire/ieth.hpp"
#include "wire/immdt.hpp"
#include "wire/rdeth.hpp"
#include "wire/reth.hpp"

namespace softib::packet {

struct TransportHeaders {
  // bth.opcode selects the opcode table row. bth.pad_count is computed by the builder from
  // the payload length (what the caller puts there is ignored).
  wire::Bth bth;
  // Exactly the extension headers of the opcode's row are set (the builder refuses others).
  std::optional<wire::Rdeth> rdeth;
  std::optional<wire::Deth> deth;
  std::optional<wire::Feth> feth;
  std::optional<wire::Reth> reth;
  std::optional<wire::AtomicEth> atomic_eth;
  std::optional<wire::Aeth> aeth;
  std::optional<wire::AtomicAckEth> atomic_ack_eth;
  std::optional<wire::ImmDt> immdt;
  std::optional<wire::Ieth> ieth;

  // The member holding extension header H.
  template <ExtHeader H>
  std::optional<ExtHeaderType<H>>& get() { return member<H>(*this); }
  template <ExtHeader H>
  const std::optional<ExtHeaderType<H>>& get() const { return member<H>(*this); }

  // The extension headers that are set.
  HeaderSet present() const {
    HeaderSet set;
    for_each_ext_header([&](auto h) {
      if (get<decltype(h)::value>().has_value()) set = set | decltype(h)::value;
    });
    return set;
  }

  // The opcode table row of bth.opcode, or nullptr when the value is reserved.
  const OpcodeInfo* info() const { return find_opcode(bth.opcode); }

  friend bool operator==(const TransportHeaders&, const TransportHeaders&) = default;

 private:
  template <ExtHeader H, class Self>
  static auto& member(Self& self) {
    if constexpr (H == ExtHeader::kRdeth) return self.rdeth;
    else if constexpr (H == ExtHeader::kDeth) return self.deth;
    else if constexpr (H == ExtHeader::kFeth) return self.feth;
    else if constexpr (H == ExtHeader::kReth) return self.reth;
    else if constexpr (H == ExtHeader::kAtomicEth) return self.atomic_eth;
    else if constexpr (H == ExtHeader::kAeth) return self.aeth;
    else if constexpr (H == ExtHeader::kAtomicAckEth) return self.atomic_ack_eth;
    else if constexpr (H == ExtHeader::kImmDt) return self.immdt;
    else return self.ieth;
  }
};

}  // namespace softib::packet
