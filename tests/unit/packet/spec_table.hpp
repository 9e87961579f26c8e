// A hand copy of IBA 9.2.1 table 38 (plus the IBA 1.5 FLUSH and ATOMIC_WRITE rows), kept
// apart from src/packet so that the tests check the table against the spec rather than
// against itself.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

namespace softib::packet::testing {

struct SpecRow {
  uint8_t value;
  const char* name;
  const char* headers;  // after the BTH, in wire order, as table 38 lists them
  bool payload;
  bool supported;
};

// IBA 9.2.1 table 38 (and the IBA 1.5 FLUSH / ATOMIC_WRITE rows).
inline const std::vector<SpecRow> kSpec = {
    {0x00, "RC_SEND_FIRST", "", true, true},
    {0x01, "RC_SEND_MIDDLE", "", true, true},
    {0x02, "RC_SEND_LAST", "", true, true},
    {0x03, "RC_SEND_LAST_WITH_IMMEDIATE", "ImmDt", true, true},
    {0x04, "RC_SEND_ONLY", "", true, true},
    {0x05, "RC_SEND_ONLY_WITH_IMMEDIATE", "ImmDt", true, true},
    {0x06, "RC_RDMA_WRITE_FIRST", "RETH", true, true},
    {0x07, "RC_RDMA_WRITE_MIDDLE", "", true, true},
    {0x08, "RC_RDMA_WRITE_LAST", "", true, true},
    {0x09, "RC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "ImmDt", true, true},
    {0x0A, "RC_RDMA_WRITE_ONLY", "RETH", true, true},
    {0x0B, "RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RETH ImmDt", true, true},
    {0x0C, "RC_RDMA_READ_REQUEST", "RETH", false, true},
    {0x0D, "RC_RDMA_READ_RESPONSE_FIRST", "AETH", true, true},
    {0x0E, "RC_RDMA_READ_RESPONSE_MIDDLE", "", true, true},
    {0x0F, "RC_RDMA_READ_RESPONSE_LAST", "AETH", true, true},
    {0x10, "RC_RDMA_READ_RESPONSE_ONLY", "AETH", true, true},
    {0x11, "RC_ACKNOWLEDGE", "AETH", false, true},
    {0x12, "RC_ATOMIC_ACKNOWLEDGE", "AETH AtomicAckETH", false, true},
    {0x13, "RC_COMPARE_SWAP", "AtomicETH", false, true},
    {0x14, "RC_FETCH_ADD", "AtomicETH", false, true},
    {0x16, "RC_SEND_LAST_WITH_INVALIDATE", "IETH", true, true},
    {0x17, "RC_SEND_ONLY_WITH_INVALIDATE", "IETH", true, true},
    {0x1C, "RC_FLUSH", "FETH RETH", false, false},
    {0x1D, "RC_ATOMIC_WRITE", "RETH", true, false},
    {0x20, "UC_SEND_FIRST", "", true, true},
    {0x21, "UC_SEND_MIDDLE", "", true, true},
    {0x22, "UC_SEND_LAST", "", true, true},
    {0x23, "UC_SEND_LAST_WITH_IMMEDIATE", "ImmDt", true, true},
    {0x24, "UC_SEND_ONLY", "", true, true},
    {0x25, "UC_SEND_ONLY_WITH_IMMEDIATE", "ImmDt", true, true},
    {0x26, "UC_RDMA_WRITE_FIRST", "RETH", true, true},
    {0x27, "UC_RDMA_WRITE_MIDDLE", "", true, true},
    {0x28, "UC_RDMA_WRITE_LAST", "", true, true},
    {0x29, "UC_RDMA_WRITE_LAST_WITH_IMMEDIATE", "ImmDt", true, true},
    {0x2A, "UC_RDMA_WRITE_ONLY", "RETH", true, true},
    {0x2B, "UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RETH ImmDt", true, true},
    {0x40, "RD_SEND_FIRST", "RDETH DETH", true, false},
    {0x41, "RD_SEND_MIDDLE", "RDETH DETH", true, false},
    {0x42, "RD_SEND_LAST", "RDETH DETH", true, false},
    {0x43, "RD_SEND_LAST_WITH_IMMEDIATE", "RDETH DETH ImmDt", true, false},
    {0x44, "RD_SEND_ONLY", "RDETH DETH", true, false},
    {0x45, "RD_SEND_ONLY_WITH_IMMEDIATE", "RDETH DETH ImmDt", true, false},
    {0x46, "RD_RDMA_WRITE_FIRST", "RDETH DETH RETH", true, false},
    {0x47, "RD_RDMA_WRITE_MIDDLE", "RDETH DETH", true, false},
    {0x48, "RD_RDMA_WRITE_LAST", "RDETH DETH", true, false},
    {0x49, "RD_RDMA_WRITE_LAST_WITH_IMMEDIATE", "RDETH DETH ImmDt", true, false},
    {0x4A, "RD_RDMA_WRITE_ONLY", "RDETH DETH RETH", true, false},
    {0x4B, "RD_RDMA_WRITE_ONLY_WITH_IMMEDIATE", "RDETH DETH RETH ImmDt", true, false},
    {0x4C, "RD_RDMA_READ_REQUEST", "RDETH DETH RETH", false, false},
    {0x4D, "RD_RDMA_READ_RESPONSE_FIRST", "RDETH AETH", true, false},
    {0x4E, "RD_RDMA_READ_RESPONSE_MIDDLE", "RDETH", true, false},
    {0x4F, "RD_RDMA_READ_RESPONSE_LAST", "RDETH AETH", true, false},
    {0x50, "RD_RDMA_READ_RESPONSE_ONLY", "RDETH AETH", true, false},
    {0x51, "RD_ACKNOWLEDGE", "RDETH AETH", false, false},
    {0x52, "RD_ATOMIC_ACKNOWLEDGE", "RDETH AETH AtomicAckETH", false, false},
    {0x53, "RD_COMPARE_SWAP", "RDETH DETH AtomicETH", false, false},
    {0x54, "RD_FETCH_ADD", "RDETH DETH AtomicETH", false, false},
    {0x55, "RD_RESYNC", "RDETH DETH", false, false},
    {0x64, "UD_SEND_ONLY", "DETH", true, true},
    {0x65, "UD_SEND_ONLY_WITH_IMMEDIATE", "DETH ImmDt", true, true},
};

// Header sizes in bytes (IBA 9.2, 9.3; FETH from IBA 1.5).
inline const std::map<std::string, size_t> kSpecLength = {
    {"RDETH", 4}, {"DETH", 8}, {"FETH", 4}, {"RETH", 16}, {"AtomicETH", 28},
    {"AETH", 4},  {"AtomicAckETH", 8}, {"ImmDt", 4}, {"IETH", 4},
};
inline constexpr size_t kSpecBthLength = 12;

inline std::vector<std::string> words(const char* text) {
  std::istringstream in(text);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}


// Bytes of BTH plus the extension headers `row` lists.
inline size_t spec_header_length(const SpecRow& row) {
  size_t len = kSpecBthLength;
  for (const std::string& name : words(row.headers)) len += kSpecLength.at(name);
  return len;
}

inline const SpecRow& spec_row(uint8_t value) {
  for (const SpecRow& row : kSpec)
    if (row.value == value) return row;
  throw std::out_of_range("no spec row");
}

}  // namespace softib::packet::testing
