#ifndef GATEPASS_CV4L2_SHIM_H
#define GATEPASS_CV4L2_SHIM_H
#include <sys/types.h>
#include <sys/select.h>
#include <sys/time.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

// v4l2_open and v4l2_ioctl are variadic, which Swift cannot call; the VIDIOC_* request
// numbers are function-like macros (_IOR/_IOWR), which Swift does not import. Both are
// fixed here. v4l2_close, v4l2_mmap and v4l2_munmap are plain functions Swift calls directly.
static inline int gatepass_v4l2_open(const char *path, int flags) { return v4l2_open(path, flags); }
static inline int gatepass_v4l2_ioctl(int fd, unsigned long request, void *argument) {
    return v4l2_ioctl(fd, request, argument);
}

// The request numbers the capture code uses (linux/videodev2.h).
static inline unsigned long gatepass_vidioc_querycap(void) { return VIDIOC_QUERYCAP; }
static inline unsigned long gatepass_vidioc_enum_fmt(void) { return VIDIOC_ENUM_FMT; }
static inline unsigned long gatepass_vidioc_g_fmt(void) { return VIDIOC_G_FMT; }
static inline unsigned long gatepass_vidioc_s_fmt(void) { return VIDIOC_S_FMT; }
static inline unsigned long gatepass_vidioc_g_parm(void) { return VIDIOC_G_PARM; }
static inline unsigned long gatepass_vidioc_s_parm(void) { return VIDIOC_S_PARM; }
static inline unsigned long gatepass_vidioc_reqbufs(void) { return VIDIOC_REQBUFS; }
static inline unsigned long gatepass_vidioc_querybuf(void) { return VIDIOC_QUERYBUF; }
static inline unsigned long gatepass_vidioc_qbuf(void) { return VIDIOC_QBUF; }
static inline unsigned long gatepass_vidioc_dqbuf(void) { return VIDIOC_DQBUF; }
static inline unsigned long gatepass_vidioc_streamon(void) { return VIDIOC_STREAMON; }
static inline unsigned long gatepass_vidioc_streamoff(void) { return VIDIOC_STREAMOFF; }

// MAP_FAILED is ((void *) -1), a cast Swift does not import.
static inline void *gatepass_map_failed(void) { return MAP_FAILED; }
#endif
