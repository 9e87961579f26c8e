// TransportFrame: the transport part of one packet (BTH ... pad) as the transport engines need
// it — the opcode's table row, the typed headers, the payload — parsed in one pass into an
// object the caller keeps, with no copy of a view and no allocation. It is the receive hot
// path; PacketView is the full view for everything else (tools, tests, captures).
//
// Validity is PacketView::parse_roce_v2_transport's exactly: a frame is accepted here if and
// only if the view accepts it (the packet fuzz target checks both on every input). The view
// names what is wrong; this only says no.
#pragma once

#include "packet/opcode.hpp"
#include "packet/transport_headers.hpp"
#include "wire/bytes.hpp"

namespace softib::packet {

struct TransportFrame {
  const OpcodeInfo* info_ = nullptr;
  TransportHeaders headers_;
  wire::ByteSpan payload_;

  // REQUIRES: a successful parse.
  const OpcodeInfo& info() const { return *info_; }
  const TransportHeaders& headers() const { return headers_; }
  const wire::Bth& bth() const { return headers_.bth; }
  wire::ByteSpan payload() const { return payload_; }
};

// Parses `transport` into `out`. False when the frame is malformed (then `out` is garbage).
bool parse_transport_frame(wire::ByteSpan transport, TransportFrame& out);

}  // namespace softib::packet
