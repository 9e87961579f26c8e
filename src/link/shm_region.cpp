#include "link/shm_region.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/format.h>

namespace softib::link {

namespace {

size_t page_size() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

size_t page_round(size_t bytes) {
  const size_t page = page_size();
  return (bytes + page - 1) / page * page;
}

}  // namespace

Result<ShmRegion> ShmRegion::create(const std::string& name, size_t bytes) {
  const size_t size = page_round(bytes == 0 ? 1 : bytes);
  const int fd = ::memfd_create(name.c_str(), MFD_CLOEXEC);
  if (fd < 0) return Status::from_errno(errno, "memfd_create");
  if (::ftruncate(fd, static_cast<off_t>(size)) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, "ftruncate");
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, "mmap");
  }
  return ShmRegion(fd, static_cast<uint8_t*>(p), size);
}

Result<ShmRegion> ShmRegion::map(int fd, size_t min_bytes) {
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, "fstat");
  }
  const size_t size = static_cast<size_t>(st.st_size);
  if (size < min_bytes || size == 0) {
    ::close(fd);
    return Status(Code::kInvalidArgument, fmt::format("shared memory of {} bytes, expected at least {}", size, min_bytes));
  }
  void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    ::close(fd);
    return Status::from_errno(err, "mmap");
  }
  return ShmRegion(fd, static_cast<uint8_t*>(p), size);
}

void ShmRegion::prefault(uint8_t* p, size_t bytes) {
  // A page of a memfd ring is faulted in by each process that maps it, the first time it
  // touches it; the writer and the reader of a ring touch each new page at about the same
  // time, and one then waits for the other's fault to finish with the page (shmem_fault,
  // __folio_lock: D state, ~10 us). perftest's ib_send_lat took one such stall every ~30
  // iterations for the first lap of each 1 MiB ring (p99 ~12 us against 0.27 us typical;
  // perf sched). So a ring is mapped whole before its first record.
  //
  // MADV_POPULATE_READ (Linux 5.14), not _WRITE: a read fault on a shared mapping of shmem
  // allocates a missing page as a write fault does, and gives a writable entry, but for the
  // pages already there it maps the neighbours too (fault-around, 16 pages a fault), which a
  // write fault does not. bench_ring_pages, 1 MiB: pages another mapping allocated 59 us
  // against 166 us; missing pages ~0.5-0.8 ms either way, 4-6 % more by read faults
  // (allocating and zeroing them is the cost: see ShmLink::warm_spare_channel). Where it is missing, reading each page does the
  // same.
  if (bytes == 0) return;
  const size_t page = page_size();
  const uintptr_t start = reinterpret_cast<uintptr_t>(p) / page * page;
  const uintptr_t end = start + page_round(reinterpret_cast<uintptr_t>(p) + bytes - start);
  if (::madvise(reinterpret_cast<void*>(start), end - start, MADV_POPULATE_READ) == 0) return;
  for (uintptr_t a = start; a < end; a += page) (void)*reinterpret_cast<const volatile uint8_t*>(a);
}

ShmRegion::ShmRegion(ShmRegion&& o) noexcept : fd_(o.fd_), data_(o.data_), size_(o.size_) {
  o.fd_ = -1;
  o.data_ = nullptr;
  o.size_ = 0;
}

ShmRegion& ShmRegion::operator=(ShmRegion&& o) noexcept {
  if (this != &o) {
    reset();
    fd_ = o.fd_;
    data_ = o.data_;
    size_ = o.size_;
    o.fd_ = -1;
    o.data_ = nullptr;
    o.size_ = 0;
  }
  return *this;
}

ShmRegion::~ShmRegion() { reset(); }

void ShmRegion::reset() {
  if (data_ != nullptr) ::munmap(data_, size_);
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  data_ = nullptr;
  size_ = 0;
}

Result<int> ShmRegion::dup_fd() const {
  const int fd = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) return Status::from_errno(errno, "dup");
  return fd;
}

}  // namespace softib::link
