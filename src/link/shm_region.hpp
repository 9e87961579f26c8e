// ShmRegion: a shared-memory file (memfd) mapped into this process. The fd is what crosses
// process boundaries (SCM_RIGHTS through softibd); a peer maps the same pages from it. No
// name in the filesystem: when the last process holding the fd or a mapping exits, the
// memory is gone, so a killed process leaves nothing behind.
//
// Thread: the mapping may be used from any thread; the object itself by one owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "base/result.hpp"

namespace softib::link {

class ShmRegion {
 public:
  ShmRegion() = default;
  // A new zero-filled region of `bytes` (rounded up to a page), mapped read-write.
  static Result<ShmRegion> create(const std::string& name, size_t bytes);
  // Maps a region a peer created. Takes ownership of `fd` (closed on failure too). Errors:
  // InvalidArgument when the file is smaller than `min_bytes`.
  static Result<ShmRegion> map(int fd, size_t min_bytes);

  ShmRegion(ShmRegion&& o) noexcept;
  ShmRegion& operator=(ShmRegion&& o) noexcept;
  ShmRegion(const ShmRegion&) = delete;
  ShmRegion& operator=(const ShmRegion&) = delete;
  ~ShmRegion();

  int fd() const { return fd_; }
  uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  bool valid() const { return data_ != nullptr; }

  // A new fd for the same file (for sending it while keeping ours).
  Result<int> dup_fd() const;

  // Maps [p, p + bytes) of this process's view now, writable, allocating the file's pages
  // where none are yet: the pages of a ring are then never faulted in one by one while a
  // peer waits (see the .cpp). Best effort: a failure leaves the pages to fault as before.
  static void prefault(uint8_t* p, size_t bytes);

 private:
  ShmRegion(int fd, uint8_t* data, size_t size) : fd_(fd), data_(data), size_(size) {}
  void reset();

  int fd_ = -1;
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace softib::link
