#include "packet/pcap.hpp"

#include <array>
#include <cerrno>

#include <fmt/format.h>

namespace softib::packet {

using wire::store_le16;
using wire::store_le32;

Result<PcapWriter> PcapWriter::create(const std::string& path, PcapLinkType link_type, uint32_t snap_len) {
  errno = 0;
  std::unique_ptr<std::FILE, Closer> file(std::fopen(path.c_str(), "wb"));
  if (!file) return Status::from_errno(errno, fmt::format("cannot create {}", path));
  PcapWriter w(std::move(file), link_type, snap_len);
  w.path_ = path;
  std::array<uint8_t, kFileHeaderLen> h{};
  store_le32(&h[0], kMagic);
  store_le16(&h[4], kVersionMajor);
  store_le16(&h[6], kVersionMinor);
  // h[8..16): thiszone and sigfigs, both 0.
  store_le32(&h[16], snap_len);
  store_le32(&h[20], static_cast<uint32_t>(link_type));
  if (Status s = w.put(h); !s.ok()) return s;
  return w;
}

Status PcapWriter::put(wire::ByteSpan bytes) {
  if (!file_) return Status(Code::kInvalidArgument, fmt::format("{} is closed", path_));
  errno = 0;
  if (std::fwrite(bytes.data(), 1, bytes.size(), file_.get()) != bytes.size())
    return Status::from_errno(errno != 0 ? errno : EIO, fmt::format("cannot write {}", path_));
  return Status();
}

Status PcapWriter::write(wire::ByteSpan packet, std::chrono::nanoseconds timestamp) {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(timestamp).count();
  if (us < 0) return Status(Code::kInvalidArgument, "pcap timestamps cannot precede 1970");
  const auto caught = static_cast<uint32_t>(std::min<size_t>(packet.size(), snap_len_));
  std::array<uint8_t, kRecordHeaderLen> h{};
  store_le32(&h[0], static_cast<uint32_t>(us / 1'000'000));
  store_le32(&h[4], static_cast<uint32_t>(us % 1'000'000));
  store_le32(&h[8], caught);
  store_le32(&h[12], static_cast<uint32_t>(packet.size()));
  if (Status s = put(h); !s.ok()) return s;
  if (Status s = put(packet.first(caught)); !s.ok()) return s;
  ++records_;
  return Status();
}

Status PcapWriter::flush() {
  if (!file_) return Status(Code::kInvalidArgument, fmt::format("{} is closed", path_));
  errno = 0;
  if (std::fflush(file_.get()) != 0) return Status::from_errno(errno != 0 ? errno : EIO, fmt::format("cannot write {}", path_));
  return Status();
}

Status PcapWriter::close() {
  if (!file_) return Status(Code::kInvalidArgument, fmt::format("{} is closed", path_));
  Status flushed = flush();
  errno = 0;
  const int rc = std::fclose(file_.release());
  if (!flushed.ok()) return flushed;
  if (rc != 0) return Status::from_errno(errno != 0 ? errno : EIO, fmt::format("cannot close {}", path_));
  return Status();
}

}  // namespace softib::packet
