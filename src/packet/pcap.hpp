// PcapWriter: classic libpcap capture files (https://www.tcpdump.org/manpages/pcap-savefile.5.txt),
// microsecond timestamps, written little-endian. Two link types:
//   LINKTYPE_RAW (101)         each record is an IPv4 or IPv6 datagram: RoCE v2 packets as
//                              build_roce_v2 makes them
//   LINKTYPE_INFINIBAND (247)  each record is a native IB packet from the LRH through the VCRC
// A record longer than the snapshot length is cut to it (its original length is kept).
//
// Errors are Statuses carrying the failed call's errno. Thread: one thread per writer.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

#include "base/result.hpp"
#include "base/status.hpp"
#include "wire/bytes.hpp"

namespace softib::packet {

enum class PcapLinkType : uint32_t {
  kRaw = 101,
  kInfiniband = 247,
};

class PcapWriter {
 public:
  static constexpr uint32_t kMagic = 0xA1B2C3D4;  // microsecond timestamps
  static constexpr uint16_t kVersionMajor = 2;
  static constexpr uint16_t kVersionMinor = 4;
  static constexpr uint32_t kDefaultSnapLen = 65535;
  static constexpr size_t kFileHeaderLen = 24;
  static constexpr size_t kRecordHeaderLen = 16;

  // Creates (or truncates) `path` and writes the file header.
  static Result<PcapWriter> create(const std::string& path, PcapLinkType link_type,
                                   uint32_t snap_len = kDefaultSnapLen);

  // Appends one record; `timestamp` counts from the Unix epoch.
  Status write(wire::ByteSpan packet, std::chrono::nanoseconds timestamp);
  // Pushes buffered records to the file.
  Status flush();
  // Flushes and closes; later writes fail. The destructor closes too but cannot report.
  Status close();

  PcapLinkType link_type() const { return link_type_; }
  uint64_t records() const { return records_; }

 private:
  struct Closer {
    void operator()(std::FILE* f) const { std::fclose(f); }
  };
  PcapWriter(std::unique_ptr<std::FILE, Closer> file, PcapLinkType link_type, uint32_t snap_len)
      : file_(std::move(file)), link_type_(link_type), snap_len_(snap_len) {}
  Status put(wire::ByteSpan bytes);

  std::unique_ptr<std::FILE, Closer> file_;
  std::string path_;
  PcapLinkType link_type_;
  uint32_t snap_len_;
  uint64_t records_ = 0;
};

}  // namespace softib::packet
