// What the drop-in libibverbs exports, and the few declarations verbs.h does not give.
//
// Every exported function is defined with SOFTIB_EXPORT (C linkage, default visibility); the
// version script generated from the system's libibverbs.so.1 (scripts/gen_abi.py) decides
// which of them the library exports and in which version node.
#pragma once

#include <infiniband/verbs.h>

#include <cstddef>

// verbs.h turns these names into inline wrappers; the library defines the real functions.
#undef ibv_query_port
#undef ibv_reg_mr
#undef ibv_reg_mr_iova
#undef ibv_get_device_list

#define SOFTIB_EXPORT extern "C" __attribute__((visibility("default")))

// From rdma-core's private driver.h (not installed): the type of a GID as sysfs names it.
// ibv_devinfo imports ibv_query_gid_type from the private version node.
enum ibv_gid_type_sysfs {
  IBV_GID_TYPE_SYSFS_IB_ROCE_V1,
  IBV_GID_TYPE_SYSFS_ROCE_V2,
};

struct ib_uverbs_ah_attr;
struct ib_uverbs_qp_attr;
struct ib_user_path_rec;
struct ibv_sa_path_rec;

// Exported by libibverbs but declared only in rdma-core's private headers (driver.h,
// marshall.h): librdmacm and the providers import them.
extern "C" {
const char* ibv_get_sysfs_path(void);
int ibv_read_sysfs_file(const char* dir, const char* file, char* buf, size_t size);
void ibv_copy_ah_attr_from_kern(ibv_ah_attr* dst, ib_uverbs_ah_attr* src);
void ibv_copy_qp_attr_from_kern(ibv_qp_attr* dst, ib_uverbs_qp_attr* src);
void ibv_copy_path_rec_from_kern(ibv_sa_path_rec* dst, ib_user_path_rec* src);
void ibv_copy_path_rec_to_kern(ib_user_path_rec* dst, ibv_sa_path_rec* src);
int ibv_dontfork_range(void* base, size_t size);
int ibv_dofork_range(void* base, size_t size);
void ibv_register_driver(const char* name, void* init_func);
int ibv_query_gid_type(ibv_context* context, uint8_t port_num, unsigned int index, ibv_gid_type_sysfs* type);
int ibv_read_ibdev_sysfs_file(char* buf, size_t size, void* sysfs_dev, const char* fnfmt, ...);
}

namespace softib::compat {
// The legacy prefix of ibv_port_attr that the exported ibv_query_port writes (struct
// _compat_ibv_port_attr, which verbs.h declares but does not define).
inline constexpr size_t kCompatPortAttrSize = offsetof(ibv_port_attr, port_cap_flags2);
}  // namespace softib::compat
